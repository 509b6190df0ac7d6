//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/runner/netpath"
	"github.com/dpulab/dpulab/steps"
)

// TestOffloadKilledThenCleanup runs the quickstart's offload step (the
// emulated paths of issue 13), kills dpulab with SIGKILL while a path and
// the servers inside it exist, and checks that `dpulab cleanup --run ID`
// removes the namespaces, links and firewall table, and the servers. The
// cleanup is scoped to the killed run's id: on this shared machine a bare
// `dpulab cleanup` would remove other tests' paths too.
//
// `dpulab cleanup` removes network paths only; the killed run's working
// directory (/tmp/dpulab-quickstart-RUN-NONCE: configs, server logs, pid
// marks) is the next run's to remove, from saved progress. So the test
// runs the lab once more on the same state and checks that the directory
// is gone after it: nothing of the killed run is left (the test used to
// drop the saved progress with its temporary state directory, and the
// directory stayed in /tmp for good).
func TestOffloadKilledThenCleanup(t *testing.T) {
	requireNetRoot(t)
	if testing.Short() {
		t.Skip("builds dpulab and runs the quickstart's offload step")
	}
	bin := testpeer.Dpulab(t)
	t.Cleanup(func() { killServers(bin) })
	port := testpeer.FreePorts(t, 2)
	stateHome := t.TempDir()
	p, _ := startRun(t, bin, stateHome, false, "run", "quickstart", "--only", "offload", "--json", "--yes",
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
	wd := leftWorkdir(t, stateHome, "quickstart")
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

	// The next run of the lab cleans up what the killed run left on this
	// machine.
	nextRunCleans(t, bin, stateHome, wd, "quickstart", "--yes")
}

// nextRunCleans runs lab once more on the saved progress under stateHome,
// as a person does after a run that could not clean up (killed, or its
// cleanup abandoned), and checks that the working directory wd it left is
// gone after. A short run: it resumes at the lab's cleanup step (--only
// would not do: a run of one step keeps the lab's state for the next step,
// on purpose).
func nextRunCleans(t *testing.T, bin, stateHome, wd, lab string, args ...string) {
	t.Helper()
	next, _ := startRun(t, bin, stateHome, false, append([]string{"run", lab, "--from", "cleanup", "--json",
		"--results", filepath.Join(t.TempDir(), "results")}, args...)...)
	if code := next.wait(); code != 0 {
		t.Errorf("the next run of the lab: exit status %d\n%s", code, tail(next.out, 20))
	}
	if _, err := os.Stat(wd); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after the next run, the working directory %s is still there (stat: %v)\n%s", wd, err, tail(next.out, 30))
	}
}

// leftWorkdir reads, from the saved progress under stateHome, the working
// directory of the lab's run that was just killed (or whose cleanup was
// abandoned), checks that progress lists this machine for a later cleanup,
// and removes the directory when the test ends, should the test fail
// before the next run does.
func leftWorkdir(t *testing.T, stateHome, lab string) string {
	t.Helper()
	path, err := steps.StatePath(filepath.Join(stateHome, "dpulab"), lab)
	if err != nil {
		t.Fatal(err)
	}
	st, err := steps.LoadState(path)
	if err != nil || st == nil {
		t.Fatalf("saved progress of the killed run: %v, %v", st, err)
	}
	wd := st.Workdir
	if !strings.HasPrefix(wd, "/tmp/dpulab-"+lab+"-") || strings.Contains(wd, "..") {
		t.Fatalf("saved progress records working directory %q, want /tmp/dpulab-%s-*", wd, lab)
	}
	t.Cleanup(func() { os.RemoveAll(wd) })
	if !slices.Contains(st.Hosts, "local") {
		t.Errorf("saved progress lists hosts %v for a later cleanup, want local among them", st.Hosts)
	}
	if _, err := os.Stat(wd); err != nil {
		t.Errorf("the working directory %s the run left: %v (want it there, for the next run to remove)", wd, err)
	}
	return wd
}
