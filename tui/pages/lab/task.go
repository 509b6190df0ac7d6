package lab

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/dpulab/dpulab/steps"
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
		m.status = m.Styles.Error.Render("no shell: ") + err.Error() + " · " + m.KeyMap.DoIt.Help().Key + " has dpulab do it"
		return cmd
	}
	c := exec.Command(sh.Argv[0], sh.Argv[1:]...)
	c.Dir = sh.Dir
	s := m.list.Steps()[i]
	host := "this machine"
	if cmds := m.facts.Commands(i); len(cmds) > 0 && cmds[0].Host != "" && cmds[0].Host != "local" {
		host = cmds[0].Host
	}
	banner := fmt.Sprintf("\n── dpulab · step %d: %s · a shell on %s ──\nDo the step here, then type exit: the lab checks your work when this shell ends.\n\n",
		i+1, s.Title, host)
	m.status = fmt.Sprintf("in a shell for step %d: exit it to come back", i+1)
	viaSSH := filepath.Base(sh.Argv[0]) == "ssh"
	return tea.Exec(&bannerCmd{cmd: c, banner: banner}, func(err error) tea.Msg {
		if sh.Cleanup != nil {
			sh.Cleanup() // the host keys accepted for this run only
		}
		return ShellDoneMsg{Index: i, Err: err, SSH: viaSSH}
	})
}

// shellDone checks the work once the trainee's shell ended.
func (m *Model) shellDone(msg ShellDoneMsg) tea.Cmd {
	var exit *exec.ExitError
	ev := runctl.Event{Kind: runctl.ShellExited, Step: msg.Index}
	why := ""
	switch {
	case msg.Err != nil && !errors.As(msg.Err, &exit):
		ev.Shell = runctl.ShellNotRun
		why = m.Styles.Error.Render("the shell could not run: ") + msg.Err.Error()
	case msg.SSH && exit != nil && exit.ExitCode() == 255:
		// ssh's own failure, not the trainee's work: nothing to check.
		// (A host key accepted once only reaches ssh through the shell's
		// temporary known_hosts file, so this is the network, the key or
		// the login.)
		ev.Shell = runctl.ShellSSHFailed
		why = m.Styles.Error.Render("ssh could not connect to the host (exit status 255)") +
			fmt.Sprintf(" · its message is above the TUI in the terminal; %s has dpulab do the step", m.KeyMap.DoIt.Help().Key)
	}
	cmd := m.fire(ev)
	if why != "" {
		m.status = why
	}
	return cmd
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

// openShowMe opens the view of what would do task step i: the commands
// "do it for me" runs on each host, and the check.
func (m *Model) openShowMe(i int) {
	if !isTask(m.list.Steps(), i) {
		m.status = fmt.Sprintf("%s shows how to do a task step; step %d is not one", m.KeyMap.ShowMe.Help().Key, i+1)
		return
	}
	sol, err := m.sess.Solution(i)
	if err != nil {
		m.status = m.Styles.Error.Render("show me: ") + err.Error()
		return
	}
	var secs []section
	for _, s := range sol {
		prompt := s.Host + " $ "
		if s.Sudo {
			prompt = s.Host + " [sudo] $ "
		}
		var ls []string
		for _, c := range s.Run {
			ls = append(ls, prompt+c)
		}
		secs = append(secs, section{"On " + s.Host + ", these commands do it", ls})
		if s.Verify != "" {
			secs = append(secs, section{"On " + s.Host + ", the lab checks it with", []string{prompt + s.Verify}})
		}
	}
	km := m.KeyMap
	secs = append(secs, section{"Your turn", []string{
		fmt.Sprintf("%s (or enter) opens a shell on the host to do it yourself; the lab checks your work when you exit it.", km.Shell.Help().Key),
		fmt.Sprintf("%s has dpulab run the commands above for you, then the check.", km.DoIt.Help().Key),
	}})
	m.openView(fmt.Sprintf("Step %d: show me", i+1), secs, km.ShowMe)
}

// openFiles opens the rendered-files view: the files step i writes when it
// is a template or deploy step, else those of every such step of the lab.
func (m *Model) openFiles(i int) {
	ss := m.list.Steps()
	var which []int
	if i >= 0 && i < len(ss) && steps.KindWritesFiles(ss[i].Kind) {
		which = []int{i}
	} else {
		for j, s := range ss {
			if steps.KindWritesFiles(s.Kind) {
				which = append(which, j)
			}
		}
	}
	if len(which) == 0 {
		m.status = "this lab writes no files (it has no template or deploy step)"
		return
	}
	secs := []section{{"About these files", []string{
		"What the lab's template and deploy steps write on each host, rendered with the lab's current values: " +
			"the files as dpulab writes them, not as they are on the host now (an edit of yours in a shell is not shown here). " +
			"Passwords show as " + steps.HiddenSecret + ".",
	}}}
	for _, j := range which {
		files, more, err := m.sess.Rendered(j)
		step := fmt.Sprintf("step %d (%s, %s)", j+1, ss[j].ID, m.list.Status(j))
		if err != nil {
			secs = append(secs, section{step, []string{"cannot render: " + err.Error()}})
			continue
		}
		for _, f := range files {
			src := "dpulab's minimal config"
			if f.Source != "" {
				src = f.Source
			}
			ls := []string{m.Styles.Muted.Render(fmt.Sprintf("%s writes it · from %s", step, src))}
			secs = append(secs, section{f.Host + ":" + f.Path, append(ls, highlight(m.Styles, f.Content)...)})
		}
		if more > 0 {
			secs = append(secs, section{step, []string{fmt.Sprintf("… and %d more files, not shown", more)}})
		}
	}
	title := "Rendered files"
	if len(which) == 1 {
		title = fmt.Sprintf("Step %d: rendered files", which[0]+1)
	}
	m.openView(title, secs, m.KeyMap.Files)
}

// highlight colours a config file's lines: comments muted, each
// directive's name bold. The text is clean already (the session's); the
// styles are ours.
func highlight(st *styles.Styles, content string) []string {
	lines := strings.Split(strings.TrimRight(content, "\n"), "\n")
	for k, l := range lines {
		l = strings.ReplaceAll(l, "\t", "    ")
		t := strings.TrimSpace(l)
		switch {
		case t == "":
		case strings.HasPrefix(t, "#"):
			l = st.Muted.Render(l)
		default:
			lead := l[:len(l)-len(strings.TrimLeft(l, " "))]
			name, rest, _ := strings.Cut(strings.TrimLeft(l, " "), " ")
			l = lead + st.PaneTitle.Render(name)
			if rest != "" {
				l += " " + rest
			}
		}
		lines[k] = l
	}
	return lines
}

// openView opens a reader over secs; close is the key that opened it.
func (m *Model) openView(title string, secs []section, close key.Binding) {
	c := m.Common
	c.Height-- // the status line is the page's
	m.reader = newReader(c, title, secs, "")
	m.reader.close = close
}
