package lab

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/keymap"
	"github.com/dpulab/dpulab/tui/pages/lab/runctl"
	"github.com/dpulab/dpulab/tui/styles"
)

// A task step is the trainee's to do, by hand, in a real shell on the
// step's host: enter (or t) hands the terminal to that shell with
// tea.ExecProcess, the TUI comes back when it exits and checks the work
// (the step's verify); c checks again, m shows the commands that would do
// it, f has dpulab run them (RunStep, as a headless run does).

// ShellDoneMsg says the shell opened for task step Index ended; Err is set
// when it could not run (a shell's own exit status is not an error here:
// the check decides).
type ShellDoneMsg struct {
	Index int
	Err   error
	// SSH says the shell was OpenSSH's ssh to a lab host, whose exit
	// status 255 means it could not connect.
	SSH bool
}

// isTask reports whether step i is a task step.
func isTask(ss []steps.StepInfo, i int) bool {
	return i >= 0 && i < len(ss) && ss[i].Kind == string(taskKind)
}

// taskKind is the kind whose steps the trainee does by hand.
const taskKind = "task"

// openShell hands the terminal to a shell on task step i's host.
// (The run control decided it may open: nothing runs.)
func (m *Model) openShell(i int) tea.Cmd {
	sh, err := m.sess.Shell(i)
	if err == nil && len(sh.Argv) == 0 {
		err = errors.New("the session gave no shell to run")
	}
	if err != nil {
		cmd := m.fire(runctl.Event{Kind: runctl.ShellExited, Step: i, Shell: runctl.ShellNotRun})
		m.bar.text = m.Styles.Error.Render("no shell: ") + err.Error() + " · " + m.KeyMap.DoIt.Help().Key + " has dpulab do it"
		return cmd
	}
	run, done := shellRun(sh, i, m.list.Steps()[i].Title, shellHost(m.facts.Commands(i)))
	m.bar.text = fmt.Sprintf("in a shell for step %d: exit it to come back", i+1)
	return tea.Exec(run, done)
}

// shellHost is where a task step whose commands are cmds has its shell.
func shellHost(cmds []steps.PlannedCommand) string {
	if len(cmds) > 0 && cmds[0].Host != "" && cmds[0].Host != "local" {
		return cmds[0].Host
	}
	return "this machine"
}

// shellRun is shell sh for task step i (title) on host, with its banner,
// and what its end says (ShellDoneMsg), once the temporary known_hosts of
// the run's accepted host keys is gone.
func shellRun(sh runner.Shell, i int, title, host string) (*bannerCmd, func(error) tea.Msg) {
	c := exec.Command(sh.Argv[0], sh.Argv[1:]...)
	c.Dir = sh.Dir
	banner := fmt.Sprintf("\n── dpulab · step %d: %s · a shell on %s ──\nDo the step here, then type exit: the lab checks your work when this shell ends.\n\n",
		i+1, title, host)
	viaSSH := filepath.Base(sh.Argv[0]) == "ssh"
	return &bannerCmd{cmd: c, banner: banner}, func(err error) tea.Msg {
		if sh.Cleanup != nil {
			sh.Cleanup() // the host keys accepted for this run only
		}
		return ShellDoneMsg{Index: i, Err: err, SSH: viaSSH}
	}
}

// shellEnd is the run control's event for the end of a task step's shell,
// and, when the work is not checked, why for the status line ("" it is).
func shellEnd(msg ShellDoneMsg, st *styles.Styles, km *keymap.KeyMap) (ev runctl.Event, why string) {
	var exit *exec.ExitError
	ev = runctl.Event{Kind: runctl.ShellExited, Step: msg.Index}
	switch {
	case msg.Err != nil && !errors.As(msg.Err, &exit):
		ev.Shell = runctl.ShellNotRun
		why = st.Error.Render("the shell could not run: ") + msg.Err.Error()
	case msg.SSH && exit != nil && exit.ExitCode() == 255:
		// ssh's own failure, not the trainee's work: nothing to check.
		// (A host key accepted once only reaches ssh through the shell's
		// temporary known_hosts file, so this is the network, the key or
		// the login.)
		ev.Shell = runctl.ShellSSHFailed
		why = st.Error.Render("ssh could not connect to the host (exit status 255)") +
			fmt.Sprintf(" · its message is above the TUI in the terminal; %s has dpulab do the step", km.DoIt.Help().Key)
	}
	return ev, why
}

// bannerCmd is a command whose run starts with a few lines of ours on the
// terminal, saying where the trainee is and how to come back.
type bannerCmd struct {
	cmd    *exec.Cmd
	banner string
	out    io.Writer
}

func (b *bannerCmd) SetStdin(r io.Reader) { b.cmd.Stdin = r }

// SetStderr keeps the shell's stderr on the TUI's terminal (SetStdout):
// the shell's prompt and errors go there, and dpulab's own stderr may be
// a file (2>log).
func (b *bannerCmd) SetStderr(io.Writer) {}

func (b *bannerCmd) SetStdout(w io.Writer) {
	b.cmd.Stdout, b.cmd.Stderr = w, w
	b.out = w
}

// Run writes the banner, then runs the shell.
func (b *bannerCmd) Run() error {
	if b.out != nil {
		// The terminal is in cooked mode again: \n starts a line.
		_, _ = io.WriteString(b.out, b.banner)
	}
	return b.cmd.Run()
}
