package lab

import (
	"fmt"
	"os"
	"strings"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/aymanbagabas/go-osc52/v2"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/components/prompt"
	"github.com/dpulab/dpulab/tui/keymap"
)

// key handles a key: an open dialog or form takes it first, then the
// page's own bindings.
func (m *Model) key(k tea.KeyMsg) tea.Cmd {
	km := m.KeyMap
	if p := m.Prompt(); p != nil {
		_, cmd := p.Update(k)
		return cmd
	}
	if m.form != nil {
		_, cmd := m.form.Update(k)
		return cmd
	}
	if m.reader != nil {
		if key.Matches(k, km.Back) || key.Matches(k, m.reader.close) || key.Matches(k, km.Quit) {
			m.reader = nil
			return nil
		}
		_, cmd := m.reader.Update(k)
		return cmd
	}
	if key.Matches(k, km.Whole) {
		// Reading is safe while cleanup runs or a run is finished.
		m.openReader()
		return nil
	}
	if m.view == ViewSteps {
		switch {
		case key.Matches(k, km.Files):
			m.openFiles(m.list.Selected())
			return nil
		case key.Matches(k, km.ShowMe):
			m.openShowMe(m.list.Selected())
			return nil
		}
	}
	if m.busy != "" {
		return nil
	}
	if m.review {
		if cmd, done := m.reviewKey(k); done {
			return cmd
		}
	}
	if m.view == ViewSteps && !m.review && m.isTask(m.list.Selected()) {
		if cmd, done := m.taskKey(k, m.list.Selected()); done {
			return cmd
		}
	}
	switch {
	case key.Matches(k, km.Quit):
		return m.quit()
	case key.Matches(k, km.Vars) && !m.review:
		return m.openVars(m.list.Selected(), false)
	case key.Matches(k, km.Dashboard):
		m.view = toggle(m.view, ViewDashboard)
		return nil
	case key.Matches(k, km.Compare):
		m.view = toggle(m.view, ViewCompare)
		if m.view == ViewCompare && m.cmp.Results() == nil {
			m.cmp.SetResults(m.sess.Results(), m.tco)
		}
		return nil
	}
	if m.view != ViewSteps {
		if key.Matches(k, km.Back) {
			m.view = ViewSteps
			return nil
		}
		_, cmd := m.screens[m.view].Update(k)
		return cmd
	}
	sel := m.list.Selected()
	switch {
	case key.Matches(k, km.Back):
		if m.running >= 0 {
			m.status = "a step is running: q stops it"
			return nil
		}
		// Leaving the lab stops what it started; progress stays saved.
		return m.cleanup(ThenBack)
	case key.Matches(k, km.Run) && m.focus != PaneOutput, key.Matches(k, km.Retry):
		return m.start(sel)
	case key.Matches(k, km.RunAll):
		m.runAll = true
		return m.start(sel)
	case key.Matches(k, km.Skip):
		if m.running == sel {
			m.status = "cannot skip the running step"
			return nil
		}
		m.sess.Skip(sel)
		m.list.SetStatus(sel, results.Skipped)
		delete(m.failures, sel)
		m.list.Select(sel + 1)
		m.layout()
		m.status = fmt.Sprintf("step %d skipped", sel+1)
		if sel == len(m.list.Steps())-1 {
			return m.finish()
		}
		return nil
	case key.Matches(k, km.Next):
		m.list.Select(sel + 1)
		m.outHold = -1
		m.layout()
		return nil
	case key.Matches(k, km.Prev):
		m.list.Select(sel - 1)
		m.outHold = -1
		m.layout()
		return nil
	case key.Matches(k, km.SwitchPane):
		m.focus = (m.focus + 1) % 3
		return nil
	case key.Matches(k, km.Copy):
		return m.copyCommands(sel)
	}
	before := m.list.Selected()
	_, cmd := m.panes[m.focus].Update(k)
	if m.list.Selected() != before {
		m.outHold = -1
		m.layout()
	}
	return cmd
}

// reviewKey handles the keys that would change a finished run: R starts
// the lab over, running or skipping says how to. done says k was used.
func (m *Model) reviewKey(k tea.KeyMsg) (tea.Cmd, bool) {
	km := m.KeyMap
	switch {
	case key.Matches(k, km.Restart):
		id := m.info.ID
		return func() tea.Msg { return StartOverMsg{ID: id} }, true
	case m.view == ViewSteps && (key.Matches(k, km.Run) && m.focus != PaneOutput ||
		key.Matches(k, km.RunAll) || key.Matches(k, km.Retry) || key.Matches(k, km.Skip) ||
		key.Matches(k, km.Shell) || key.Matches(k, km.DoIt)):
		m.status = m.Styles.Countdown.Render("this run is finished: R starts the lab over to run it again")
		return nil, true
	}
	return nil, false
}

func toggle(cur, v View) View {
	if cur == v {
		return ViewSteps
	}
	return v
}

// quitPurpose is the page's own question when q is pressed while a step
// runs: its buttons say what each answer does.
var quitPurpose = prompt.Purpose{
	Title:   "Quit while a step runs?",
	Choices: []prompt.Choice{{Value: "yes", Label: "Quit and clean up"}, {Value: "no", Label: "Keep running"}},
	Safe:    "no",
}

// quit asks first when a step runs; either way cleanup runs before exit.
func (m *Model) quit() tea.Cmd {
	if m.running < 0 {
		return m.cleanup(ThenQuit)
	}
	p := prompt.NewFor(m.Common, steps.Prompt{
		Step:    quitPromptStep,
		Type:    steps.PromptConfirm,
		Message: fmt.Sprintf("Step %d is still running. Quit anyway? It is stopped, then the lab's cleanup runs (servers it started are stopped). Your progress is kept.", m.running+1),
	}, quitPurpose)
	m.prompts = append([]*prompt.Model{p}, m.prompts...)
	return nil
}

// copyCommands puts step i's commands on the terminal's clipboard with
// OSC52 and says so; terminals that ignore OSC52 still show them in the
// commands pane.
func (m *Model) copyCommands(i int) tea.Cmd {
	cmds := m.commands(i)
	if len(cmds) == 0 {
		m.status = "this step has no commands to copy"
		return nil
	}
	var b strings.Builder
	for _, c := range cmds {
		if c.Sudo {
			b.WriteString("sudo ")
		}
		b.WriteString(c.Cmd + "\n")
	}
	if m.Clipboard == nil {
		m.status = "no terminal to copy to; the commands are in the commands pane"
		return nil
	}
	seq := osc52.New(b.String())
	if strings.HasPrefix(getenv("TERM"), "screen") || getenv("TMUX") != "" {
		seq = seq.Tmux()
	}
	if _, err := seq.WriteTo(m.Clipboard); err != nil {
		m.status = "copy failed: " + err.Error()
		return nil
	}
	m.status = fmt.Sprintf("copied %d command(s) via OSC52 (terminal clipboard; needs OSC52 support, e.g. tmux set-clipboard on)", len(cmds))
	return nil
}

type runnerLine = runner.Line

var getenv = os.Getenv

// ShortHelp implements help.KeyMap: the keys that matter right now.
func (m *Model) ShortHelp() []key.Binding {
	km := m.KeyMap
	switch {
	case m.Prompt() != nil:
		return m.Prompt().ShortHelp()
	case m.form != nil:
		return m.form.ShortHelp()
	case m.reader != nil:
		return m.reader.ShortHelp()
	case m.view == ViewCompare && m.review:
		return append(m.compareKeys(), km.Back, km.Restart, km.Quit, km.Help)
	case m.view == ViewCompare:
		return append(m.compareKeys(), km.Back, km.Quit, km.Help)
	case m.view == ViewDashboard:
		return []key.Binding{keymap.Relabel(km.Dashboard, "close dashboard"), km.Back, km.Compare, km.Whole, km.Quit, km.Help}
	}
	if m.review {
		return []key.Binding{km.Restart, km.Compare, keymap.Relabel(km.NextPrev, "next/prev"), km.Whole, km.SwitchPane, km.Copy, km.Quit, km.Help}
	}
	// n/p's short word, so that w and v fit a 100-column footer.
	km.NextPrev = keymap.Relabel(km.NextPrev, "next/prev")
	sel := m.list.Selected()
	if m.running >= 0 && steps.DescribeKind(m.list.Steps()[m.running].Kind).View == steps.ViewDashboard {
		return []key.Binding{km.Dashboard, km.NextPrev, km.Whole, km.SwitchPane, km.Quit, km.Help}
	}
	if m.isTask(sel) {
		// Short words, so that all four fit 80 columns.
		return []key.Binding{keymap.Relabel(km.Shell, "shell"), keymap.Relabel(km.Check, "check"), km.ShowMe, km.DoIt, km.Skip, km.NextPrev, km.Whole, km.Quit, km.Help}
	}
	if f, ok := m.failureOf(sel); ok && f.Status != 0 {
		return []key.Binding{km.Retry, km.Skip, km.Whole, km.Vars, km.NextPrev, km.SwitchPane, km.Copy, km.Quit, km.Help}
	}
	// In the order they give way when the footer is too narrow: the
	// last first.
	if steps.KindWritesFiles(m.list.Steps()[sel].Kind) {
		return []key.Binding{km.Run, km.RunAll, km.Skip, km.NextPrev, km.Files, km.Whole, km.Vars, km.SwitchPane, km.Copy, km.Quit, km.Help}
	}
	return []key.Binding{km.Run, km.RunAll, km.Skip, km.NextPrev, km.Whole, km.Vars, km.SwitchPane, km.Copy, km.Quit, km.Help}
}

// compareKeys are the compare view's own keys, with b (next bench) when
// the view has more than one bench to show and does not list it itself.
func (m *Model) compareKeys() []key.Binding {
	ks := m.screens[ViewCompare].ShortHelp()
	for _, k := range ks {
		if k.Help().Key == m.KeyMap.NextBench.Help().Key {
			return ks
		}
	}
	if r := m.cmp.Results(); r != nil && len(r.Benches) > 1 {
		ks = append(ks, m.KeyMap.NextBench)
	}
	return ks
}

// FullHelp implements help.KeyMap: everything the view shown answers to,
// in columns: a dialog's, the form's, the whole-text view's, the
// dashboard's or the compare view's own keys, else the lab screen's.
func (m *Model) FullHelp() [][]key.Binding {
	km := m.KeyMap
	switch {
	case m.Prompt() != nil:
		return m.Prompt().FullHelp()
	case m.form != nil:
		return m.form.FullHelp()
	case m.reader != nil:
		return m.reader.FullHelp()
	case m.view == ViewCompare:
		own := m.screens[ViewCompare].FullHelp()
		bench := []key.Binding{}
		if len(m.compareKeys()) > len(m.screens[ViewCompare].ShortHelp()) {
			bench = append(bench, km.NextBench)
		}
		page := []key.Binding{km.Compare, km.Dashboard, km.Back, km.Quit}
		if m.review {
			page = append(page, km.Restart)
		}
		return append(append(own, append(bench, km.Whole)), page, []key.Binding{km.ForceQuit, km.Help})
	case m.view == ViewDashboard:
		return [][]key.Binding{
			{keymap.Relabel(km.Dashboard, "close dashboard"), km.Back, km.Compare},
			{km.Whole, km.Quit, km.ForceQuit, km.Help},
		}
	}
	// Three columns of up to seven rows (the help's height), so that all
	// of it fits 80 columns; the compare view's tabs are in its own help.
	run := []key.Binding{km.Run, km.RunAll, km.Retry, km.Skip, km.Vars, km.Whole, km.Copy}
	views := []key.Binding{km.Files, km.Dashboard, km.Compare, km.Back, km.Quit, km.ForceQuit, km.Help}
	switch {
	case m.review:
		run = []key.Binding{km.Restart, km.Whole, km.Copy}
	case m.isTask(m.list.Selected()):
		// A task step's own keys; c checks here, so the compare view
		// is not among them.
		run = []key.Binding{keymap.Relabel(km.Shell, "open a shell (enter too)"), km.Check, km.ShowMe, km.DoIt, km.Skip, km.Vars, km.Whole}
		views = []key.Binding{km.Files, km.Copy, km.Dashboard, km.Back, km.Quit, km.ForceQuit, km.Help}
	}
	return [][]key.Binding{
		run,
		{km.Next, km.Prev, km.Up, km.Down, km.SwitchPane, km.Top, km.Bottom},
		views,
	}
}
