//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/runner/netpath"
)

// TestOffloadKilledThenCleanup runs the quickstart's offload step (the
// emulated paths of issue 13), kills dpulab with SIGKILL while a path and
// the servers inside it exist, and checks that `dpulab cleanup --run ID`
// removes the namespaces, links and firewall table, and the servers. The
// cleanup is scoped to the killed run's id: on this shared machine a bare
// `dpulab cleanup` would remove other tests' paths too.
func TestOffloadKilledThenCleanup(t *testing.T) {
	requireNetRoot(t)
	if testing.Short() {
		t.Skip("builds dpulab and runs the quickstart's offload step")
	}
	bin := testpeer.Dpulab(t)
	t.Cleanup(func() { killServers(bin) })
	port := testpeer.FreePorts(t, 2)
	p, _ := startRun(t, bin, t.TempDir(), false, "run", "quickstart", "--only", "offload", "--json", "--yes",
		"--results", filepath.Join(t.TempDir(), "results"),
		"--set", "instances=2", "--set", fmt.Sprint("port=", port), "--set", "duration=20s", "--set", "warmup=0s", "--set", "runs=1",
		"--set", "firewall_rules=50")
	made := regexp.MustCompile(`made the overlay\+firewall path \(namespaces (dpulab-([a-z0-9]{5})-srv) and (dpulab-[a-z0-9]{5}-cli)`)
	var m []string
	if !p.waitFor(func(ev event) bool {
		if !ev.is("output", "offload") {
			return false
		}
		line, _ := ev["line"].(map[string]any)
		text, _ := line["text"].(string)
		m = made.FindStringSubmatch(text)
		return m != nil
	}) {
		t.Fatalf("the run ended before it made a path:\n%s", tail(p.out, 30))
	}
	serverNS, runID, clientNS := m[1], m[2], m[3]
	// Into the bench: the servers are up inside the path.
	if !p.waitFor(func(ev event) bool { return ev.is("sample", "offload") }) {
		t.Fatalf("the run ended before its bench:\n%s", tail(p.out, 30))
	}
	if err := syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.wait()
	prefix := netpath.RunPrefix(runID)
	if out, _ := exec.Command("ip", "netns", "list").CombinedOutput(); !strings.Contains(string(out), serverNS) {
		t.Fatalf("after SIGKILL the path is already gone, nothing to test: %s", out)
	}
	pids, _ := exec.Command("ip", "netns", "pids", serverNS).Output()
	if len(strings.Fields(string(pids))) == 0 {
		t.Errorf("no server runs in %s after the kill (want the killed run's leftovers)", serverNS)
	}

	out, err := exec.Command(bin, "cleanup", "--run", runID).CombinedOutput()
	if err != nil {
		t.Fatalf("dpulab cleanup --run %s: %v\n%s", runID, err, out)
	}
	for _, want := range []string{"removed network namespace " + serverNS, "removed network namespace " + clientNS} {
		if !strings.Contains(string(out), want) {
			t.Errorf("cleanup output lacks %q:\n%s", want, out)
		}
	}
	for _, cmd := range []string{"ip netns list", "ip -br link", "nft list tables"} {
		o, err := exec.Command("sh", "-c", cmd).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		if strings.Contains(string(o), prefix) {
			t.Errorf("after cleanup `%s` still shows %s*:\n%s", cmd, prefix, o)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range strings.Fields(string(pids)) {
		for {
			stat, err := os.ReadFile("/proc/" + pid + "/stat")
			if err != nil || strings.Contains(string(stat), ") Z") {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("process %s that ran in the killed run's path still runs after cleanup", pid)
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}
