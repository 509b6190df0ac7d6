//go:build unix

package lab

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/pages/lab/runctl"
)

// exitErr is a real process's exit status code.
func exitErr(t *testing.T, code string) error {
	t.Helper()
	err := exec.Command("sh", "-c", "exit "+code).Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("sh exit %s: %v", code, err)
	}
	return err
}

// TestShellEnd: a task step's shell that ended, however it ended, is
// checked, but for a shell that never ran and ssh's own failure (exit
// status 255 of ssh, not of a shell), which say why instead.
func TestShellEnd(t *testing.T) {
	c := common.NewCommon(true, 100, 30)
	for _, tc := range []struct {
		name  string
		msg   ShellDoneMsg
		shell runctl.ShellEnd
		why   string
	}{
		{name: "exit 0", msg: ShellDoneMsg{Index: 2}},
		{name: "the trainee's exit 1", msg: ShellDoneMsg{Index: 2, Err: exitErr(t, "1")}},
		{name: "ssh's exit 1", msg: ShellDoneMsg{Index: 2, Err: exitErr(t, "1"), SSH: true}},
		{name: "a shell's exit 255", msg: ShellDoneMsg{Index: 2, Err: exitErr(t, "255")}},
		{name: "ssh's exit 255", msg: ShellDoneMsg{Index: 2, Err: exitErr(t, "255"), SSH: true}, shell: runctl.ShellSSHFailed,
			why: "ssh could not connect to the host (exit status 255) · its message is above the TUI in the terminal; f has dpulab do the step"},
		{name: "never ran", msg: ShellDoneMsg{Index: 2, Err: errors.New("exec: no such file")}, shell: runctl.ShellNotRun,
			why: "the shell could not run: exec: no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, why := shellEnd(tc.msg, c.Styles, c.KeyMap)
			if ev.Kind != runctl.ShellExited || ev.Step != 2 || ev.Shell != tc.shell || ansi.Strip(why) != tc.why {
				t.Errorf("event %+v, why %q; want ShellExited of step 3, %v, %q", ev, ansi.Strip(why), tc.shell, tc.why)
			}
		})
	}
}

// TestShellRun: the shell runs in its folder after a banner saying where
// the trainee is and how to come back, and its end removes the run's
// temporary known_hosts and names the step, and whether it was ssh.
func TestShellRun(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh: ", err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		argv []string
		ssh  bool
	}{
		{argv: []string{"sh", "-c", "pwd"}},
		{argv: []string{"/usr/bin/ssh", "-V"}, ssh: true},
	} {
		cleaned := 0
		sh := runner.Shell{Argv: tc.argv, Dir: dir, Cleanup: func() { cleaned++ }}
		run, done := shellRun(sh, 1, "Start it", shellHost([]steps.PlannedCommand{{Host: "server1"}}))
		if run.cmd.Dir != dir || run.cmd.Args[0] != tc.argv[0] {
			t.Fatalf("runs %v in %q", run.cmd.Args, run.cmd.Dir)
		}
		msg := done(nil).(ShellDoneMsg)
		if cleaned != 1 || msg.Index != 1 || msg.SSH != tc.ssh || msg.Err != nil {
			t.Fatalf("%v: cleaned %d, end %+v", tc.argv, cleaned, msg)
		}
	}
	var out bytes.Buffer
	run, _ := shellRun(runner.Shell{Argv: []string{"sh", "-c", "pwd"}, Dir: dir}, 1, "Start it", "server1")
	run.SetStdout(&out)
	if err := run.Run(); err != nil {
		t.Fatal(err)
	}
	want := "\n── dpulab · step 2: Start it · a shell on server1 ──\nDo the step here, then type exit: the lab checks your work when this shell ends.\n\n"
	if got := out.String(); !strings.HasPrefix(got, want) || !strings.Contains(got[len(want):], dir) {
		t.Fatalf("terminal got %q, want the banner then the shell's output in %s", got, dir)
	}
}

// TestShellHost: a task step's shell is on its first command's host, else
// on this machine.
func TestShellHost(t *testing.T) {
	for _, tc := range []struct {
		cmds []steps.PlannedCommand
		want string
	}{
		{nil, "this machine"},
		{[]steps.PlannedCommand{{Host: "local"}}, "this machine"},
		{[]steps.PlannedCommand{{Host: ""}, {Host: "server2"}}, "this machine"},
		{[]steps.PlannedCommand{{Host: "server1"}, {Host: "server2"}}, "server1"},
	} {
		if got := shellHost(tc.cmds); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.cmds, got, tc.want)
		}
	}
}
