package lab

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/steps/results"
	"github.com/dpulab/dpulab/tui/pages/lab/runctl"
)

// key handles a key: an open dialog or form takes it first, then the
// whole-text views, then the run control (runKey), then the page's own
// bindings.
func (m *Model) key(k tea.KeyMsg) tea.Cmd {
	km := m.KeyMap
	if p := m.Prompt(); p != nil {
		if ev, ok := m.dialogs.Key(k, m.rc, m.list.Selected()); ok {
			return m.fire(ev)
		}
		_, cmd := p.Update(k)
		return cmd
	}
	if f := m.vars.Form(); f != nil {
		_, cmd := f.Update(k)
		return cmd
	}
	if m.pager.Reader() != nil {
		return m.pager.Key(k)
	}
	if key.Matches(k, km.Whole) {
		// Reading is safe while cleanup runs or a run is finished.
		m.openReader()
		return nil
	}
	if m.rc.View == ViewSteps {
		switch {
		case key.Matches(k, km.Files):
			if s := m.pager.Files(m.list.Steps(), m.list.Selected()); s != "" {
				m.bar.text = s
			}
			return nil
		case key.Matches(k, km.ShowMe):
			if s := m.pager.ShowMe(m.list.Steps(), m.list.Selected()); s != "" {
				m.bar.text = s
			}
			return nil
		}
	}
	if m.rc.Busy() != "" {
		// Cleaning up or writing results: nothing else until it is done.
		return nil
	}
	if ev, ok := m.runKey(k); ok {
		return m.fire(ev)
	}
	if m.rc.View != ViewSteps {
		_, cmd := m.screens[m.rc.View].Update(k)
		return cmd
	}
	sel := m.list.Selected()
	switch {
	case key.Matches(k, km.Next):
		m.list.Select(sel + 1)
		m.route.Release()
		m.layout()
		return nil
	case key.Matches(k, km.Prev):
		m.list.Select(sel - 1)
		m.route.Release()
		m.layout()
		return nil
	case key.Matches(k, km.SwitchPane):
		m.focus = (m.focus + 1) % 3
		return nil
	case key.Matches(k, km.Copy):
		m.bar.text = copyCommands(m.Clipboard, m.facts.Commands(sel), getenv)
		return nil
	}
	before := m.list.Selected()
	_, cmd := m.panes[m.focus].Update(k)
	if m.list.Selected() != before {
		m.route.Release()
		m.layout()
	}
	return cmd
}

// runKey is the run control's event for k, if k is one of its keys: the
// selected step's run, run all, retry, skip, shell, check and "do it for
// me"; q, esc, R, v, and the views' d and c. On a task step in the steps
// view, enter and t open its shell and c checks it (the compare view has
// nothing to show before the lab's benches anyway).
func (m *Model) runKey(k tea.KeyMsg) (runctl.Event, bool) {
	km := m.KeyMap
	sel := m.list.Selected()
	ev := func(kind runctl.EventKind) (runctl.Event, bool) { return runctl.Event{Kind: kind, Step: sel}, true }
	review := m.rc.Phase == runctl.Review
	steps := m.rc.View == ViewSteps
	run := key.Matches(k, km.Run) && m.focus != PaneOutput
	switch {
	case review && key.Matches(k, km.Restart):
		return ev(runctl.StartOver)
	case steps && review && (run || key.Matches(k, km.RunAll) || key.Matches(k, km.Retry) ||
		key.Matches(k, km.Skip) || key.Matches(k, km.Shell) || key.Matches(k, km.DoIt)):
		return ev(runctl.Run) // refused: the run is finished
	case steps && !review && isTask(m.list.Steps(), sel):
		switch {
		case key.Matches(k, km.Shell), run:
			return ev(runctl.OpenShell)
		case key.Matches(k, km.RunAll):
			// Run all from here: the shell first, then on from its check.
			return runctl.Event{Kind: runctl.OpenShell, Step: sel, All: true}, true
		case key.Matches(k, km.Check), key.Matches(k, km.Retry):
			return ev(runctl.Check)
		case key.Matches(k, km.DoIt):
			return ev(runctl.Run)
		}
	}
	switch {
	case key.Matches(k, km.Quit):
		return ev(runctl.Quit)
	case key.Matches(k, km.Vars) && !review:
		return ev(runctl.OpenVars)
	case key.Matches(k, km.Dashboard):
		return ev(runctl.ToggleDashboard)
	case key.Matches(k, km.Compare):
		return ev(runctl.ToggleCompare)
	case key.Matches(k, km.Back):
		return ev(runctl.Back)
	case steps && (run || key.Matches(k, km.Retry)):
		return ev(runctl.Run)
	case steps && key.Matches(k, km.RunAll):
		return ev(runctl.RunAll)
	case steps && key.Matches(k, km.Skip):
		return ev(runctl.Skip)
	}
	return runctl.Event{}, false
}

type runnerLine = runner.Line

// helpView reads what the footer's help depends on from the page's parts.
func (m *Model) helpView() helpView {
	h := helpView{km: m.KeyMap, view: m.rc.View, review: m.Review(), compare: m.screens[ViewCompare]}
	switch {
	case m.Prompt() != nil:
		h.overlay = m.Prompt()
	case m.vars.Form() != nil:
		h.overlay = m.vars.Form()
	case m.pager.Reader() != nil:
		h.overlay = m.pager.Reader()
	}
	if r := m.cmp.Results(); r != nil {
		h.benches = len(r.Benches)
	}
	ss, sel := m.list.Steps(), m.list.Selected()
	if r := m.rc.Running; r >= 0 && r < len(ss) {
		h.dashRunning = steps.DescribeKind(ss[r].Kind).View == steps.ViewDashboard
	}
	h.task = isTask(ss, sel)
	if f, ok := m.facts.Failure(sel); ok && f.Status != 0 {
		h.failed = true
	}
	h.writesFiles = sel >= 0 && sel < len(ss) && steps.KindWritesFiles(ss[sel].Kind)
	return h
}

// ShortHelp implements help.KeyMap: the keys that matter right now.
func (m *Model) ShortHelp() []key.Binding { return m.helpView().short() }

// FullHelp implements help.KeyMap: everything the view shown answers to.
func (m *Model) FullHelp() [][]key.Binding { return m.helpView().full() }

// openReader opens the whole-text view of the selected step, at the
// section of the focused pane.
func (m *Model) openReader() {
	i := m.list.Selected()
	t := stepText{index: i, steps: m.list.Steps(), start: secStep, output: m.out.StepLines(i)}
	switch {
	case m.focus == PaneOutput:
		t.start = secOutput
	case m.list.Status(i) == results.Failed:
		t.start = secFailure
	}
	if f, ok := m.facts.Failure(i); ok {
		t.failure, t.earlier = &f, m.facts.Earlier(f)
	}
	t.status = m.bar.text // the page's note; wholeText leaves out an empty one
	if isTask(t.steps, i) && !m.unattended {
		t.hideCmds = true
	} else {
		t.cmds, t.planErr = m.facts.Commands(i), m.facts.PlanErr(i)
	}
	m.pager.Whole(t)
}
