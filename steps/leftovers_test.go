//go:build unix

package steps

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/runner"
)

// TestLeftoverRemoveIsQuoted: the by-hand command quotes the directory
// and the ssh destination as a shell reads them.
func TestLeftoverRemoveIsQuoted(t *testing.T) {
	l := Leftover{Host: "web1", Dir: "/tmp/dpulab-it's here", Reach: runner.QuoteAll("ssh", "-p", "2222", "o'neil@192.0.2.7")}
	want := `pkill -f -- '/tmp/dpulab-it'\''s here'; rm -rf -- '/tmp/dpulab-it'\''s here'`
	if got := l.Remove(); got != want {
		t.Errorf("Remove() = %s, want %s", got, want)
	}
	s := l.String()
	for _, w := range []string{"web1", "ssh -p 2222 'o'\\''neil@192.0.2.7'", want} {
		if !strings.Contains(s, w) {
			t.Errorf("%q lacks %q", s, w)
		}
	}
	if s := (Leftover{Host: "local", Dir: "/tmp/dpulab-x"}).String(); !strings.Contains(s, "on this machine") || !strings.Contains(s, "rm -rf -- /tmp/dpulab-x") {
		t.Errorf("local: %q", s)
	}
}

// TestCleanupNamesWhatItLeaves: a host whose working directory cannot be
// removed at cleanup (its rm fails, as on a host gone unreachable; or the
// cleanup's time is up) is named with the directory and how to remove it
// by hand, in the step's output, in LabFinished and in the headless
// summary; Leftovers lists it.
func TestCleanupNamesWhatItLeaves(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rmFails bool
		timeout time.Duration
		why     string
	}{
		{"unreachable", true, 0, "exit status 255"},
		// A deadline already past when cleanup starts: no timing.
		{"timeout", false, time.Nanosecond, "deadline exceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) { cleanupLeaves(t, tc.rmFails, tc.timeout, tc.why) })
	}
}

func cleanupLeaves(t *testing.T, rmFails bool, timeout time.Duration, why string) {
	dir := t.TempDir()
	invPath := filepath.Join(dir, "hosts.yaml")
	inv := "hosts:\n  - name: web1\n    address: 192.0.2.7\n    port: 2222\n    user: lab\n    roles: [web]\n"
	if err := os.WriteFile(invPath, []byte(inv), 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := runner.LoadInventory(invPath)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeTarget{name: "web1", handle: func(cmd string) ([]string, int) {
		switch {
		case cmd == "cat done":
			return []string{"ok"}, 0
		case strings.HasPrefix(cmd, "sh -c ") && strings.Contains(cmd, "dpulab-stop-marked"):
			return []string{"0"}, 0
		case rmFails && strings.HasPrefix(cmd, "rm -rf -- /tmp/dpulab-"):
			return []string{"ssh: connect to host 192.0.2.7 port 2222: No route to host"}, 255
		}
		return nil, 0
	}}
	bin := filepath.Join(dir, "dpulab")
	if err := os.WriteFile(bin, []byte("not really dpulab"), 0o755); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	stateDir := t.TempDir()
	e := newEngine(t, loadLab(t, fakeRunLab), Options{Inventory: in, Binary: bin, StateDir: stateDir, CleanupTimeout: timeout, Targets: func(string) (runner.Target, error) { return f, nil }}, rec)
	_ = e.Run(testCtx(t, 30*time.Second))
	wd := e.workdir()
	remove := "pkill -f -- " + wd + "; rm -rf -- " + wd
	var said string
	for _, ev := range rec.events() {
		if o, ok := ev.(Output); ok && o.Line.Host == "web1" && strings.Contains(o.Line.Text, "could not clean up") {
			said = o.Line.Text
		}
	}
	for _, w := range []string{wd, "web1", "ssh -p 2222 lab@192.0.2.7", remove, "next run of this lab", why} {
		if !strings.Contains(said, w) {
			t.Errorf("the cleanup's message %q lacks %q", said, w)
		}
	}
	left := e.Leftovers()
	if len(left) != 1 || left[0].Host != "web1" || left[0].Dir != wd || left[0].Reach != "ssh -p 2222 lab@192.0.2.7" {
		t.Errorf("Leftovers() = %+v, want web1's %s", left, wd)
	}
	var fin *LabFinished
	for _, ev := range rec.events() {
		if lf, ok := ev.(LabFinished); ok {
			fin = &lf
		}
	}
	if fin == nil || len(fin.Leftovers) != 1 || fin.Leftovers[0] != left[0] {
		t.Errorf("LabFinished = %+v, want the leftover", fin)
	}
	// The headless summary says it.
	var b strings.Builder
	NewPrinter(&b).Print(*fin)
	if !strings.Contains(b.String(), "CLEANUP DID NOT FINISH: "+wd+" may be left on web1") || !strings.Contains(b.String(), remove) {
		t.Errorf("summary:\n%s", b.String())
	}
	// A dry run of the lab afterwards, over the same saved progress,
	// cleans nothing up, so it says nothing of what cleanup left: that
	// is the next real run's to sweep and to say.
	drec := &recorder{}
	d := newEngine(t, loadLab(t, fakeRunLab), Options{Inventory: in, Binary: bin, StateDir: stateDir, DryRun: true, Targets: func(string) (runner.Target, error) { return f, nil }}, drec)
	_ = d.Run(testCtx(t, 30*time.Second))
	for _, ev := range drec.events() {
		if lf, ok := ev.(LabFinished); ok && len(lf.Leftovers) != 0 {
			t.Errorf("a dry run's LabFinished lists leftovers %+v", lf.Leftovers)
		}
	}
}
