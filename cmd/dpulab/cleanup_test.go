//go:build unix

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/runner/netpath"
)

// runCleanupCmd runs `dpulab cleanup args...` in process and returns its
// exit status and output.
func runCleanupCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(append([]string{"cleanup"}, args...))
	err := root.ExecuteContext(context.Background())
	code, msg := exitStatus(err)
	if msg != "" {
		errOut.WriteString(msg + "\n")
	}
	return code, out.String(), errOut.String()
}

func TestCleanupRefusesWithoutRoot(t *testing.T) {
	defer func(f func() int) { cleanupEUID = f }(cleanupEUID)
	cleanupEUID = func() int { return 1000 }
	code, out, errOut := runCleanupCmd(t)
	if code != exitFailed || out != "" {
		t.Errorf("exit %d, stdout %q; want %d and nothing removed", code, out, exitFailed)
	}
	if !strings.Contains(errOut, "as root") || !strings.Contains(errOut, "sudo dpulab cleanup") {
		t.Errorf("stderr %q does not say to run it as root with sudo", errOut)
	}
}

func TestCleanupBadRunID(t *testing.T) {
	code, _, errOut := runCleanupCmd(t, "--run", "Bad;id")
	if code != exitUsage || !strings.Contains(errOut, "a-z") {
		t.Errorf("exit %d, stderr %q; want usage error naming the allowed characters", code, errOut)
	}
}

// requireNetRoot skips (or fails, with DPULAB_REQUIRE_PEERS=1) a test that
// makes real network namespaces when this machine cannot.
func requireNetRoot(t *testing.T) {
	t.Helper()
	testpeer.RequireNetns(t, "run this test as root")
}

// TestCleanupRemovesLeftovers leaves what a killed run leaves (an
// overlay+firewall path with the bundled server running inside, never torn
// down), runs the real binary's `dpulab cleanup --run ID`, and checks with
// ip and nft that nothing of the run is left; a second cleanup finds
// nothing. The cleanup is scoped to the test's own run: on this shared
// machine a plain `dpulab cleanup` would remove other runs' paths too.
func TestCleanupRemovesLeftovers(t *testing.T) {
	requireNetRoot(t)
	bin := testpeer.Dpulab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	l := runner.NewLocal()
	p, err := netpath.Make(ctx, l, netpath.Config{Variant: netpath.OverlayFirewall, FirewallRules: 50})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Teardown(context.Background(), l) })
	srv, err := l.Start(ctx, runner.ProcSpec{
		Name:    "server",
		Cmd:     p.ServerExec() + " " + runner.QuoteAll(bin, "server", "--bind", p.ServerAddr.String(), "--port", "6399"),
		LogFile: filepath.Join(t.TempDir(), "server.log"),
	})
	if err != nil {
		t.Fatal(err)
	}

	out, err := exec.CommandContext(ctx, bin, "cleanup", "--run", p.RunID).CombinedOutput()
	if err != nil {
		t.Fatalf("dpulab cleanup --run %s: %v\n%s", p.RunID, err, out)
	}
	for _, want := range []string{
		"local: removed network namespace " + p.ServerNS,
		"local: removed network namespace " + p.ClientNS,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("cleanup output lacks %q:\n%s", want, out)
		}
	}
	prefix := netpath.RunPrefix(p.RunID)
	for _, cmd := range []string{"ip netns list", "ip -br link", "nft list tables"} {
		o, err := exec.Command("sh", "-c", cmd).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		if strings.Contains(string(o), prefix) {
			t.Errorf("after cleanup `%s` still shows %s*:\n%s", cmd, prefix, o)
		}
	}
	if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", srv.PID)); err == nil && !strings.Contains(string(stat), ") Z") {
		t.Errorf("the server left in the path (pid %d) still runs after cleanup", srv.PID)
	}

	again, err := exec.CommandContext(ctx, bin, "cleanup", "--run", p.RunID).CombinedOutput()
	if err != nil || strings.TrimSpace(string(again)) != "local: nothing named "+prefix+"* to remove" {
		t.Errorf("second cleanup: %v\n%s\nwant nothing to remove, exit 0", err, again)
	}
}

// TestCleanupInventory cleans a "lab host" reached over real OpenSSH (on
// 127.0.0.1, so the path it finds is the one this test left here): the
// lab host's part removes it, this machine's finds nothing after.
func TestCleanupInventory(t *testing.T) {
	requireNetRoot(t)
	testpeer.Require(t, "sshd")
	bin := testpeer.Dpulab(t)
	sshd := testpeer.StartSSHD(t)
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	inv := filepath.Join(t.TempDir(), "hosts.yaml")
	if err := os.WriteFile(inv, []byte(fmt.Sprintf("known_hosts: %s\nhosts:\n  - name: labhost\n    address: 127.0.0.1\n    port: %d\n    user: %s\n    identity: %s\n    roles: [client]\n",
		sshd.KnownHosts, sshd.Port, u.Username, sshd.UserKey)), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	l := runner.NewLocal()
	p, err := netpath.Make(ctx, l, netpath.Config{Variant: netpath.Firewall, FirewallRules: 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Teardown(context.Background(), l) })
	out, err := exec.CommandContext(ctx, bin, "cleanup", "--inventory", inv, "--run", p.RunID).CombinedOutput()
	if err != nil {
		t.Fatalf("dpulab cleanup --inventory: %v\n%s", err, out)
	}
	prefix := netpath.RunPrefix(p.RunID)
	for _, want := range []string{
		"labhost: removed network namespace " + p.ServerNS,
		"labhost: removed network namespace " + p.ClientNS,
		"local: nothing named " + prefix + "* to remove",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("cleanup output lacks %q:\n%s", want, out)
		}
	}
}
