package lab

import (
	"context"
	"errors"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/steps/results"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/pages/lab/runctl"
)

// Run control lives in package runctl: the page turns keys and messages
// into runctl events (fire), performs the effects the machine returns
// (perform) and words its notices (say). It keeps no flag of its own about
// what runs, nor about which dialogs are open: m.dialogs only draws the
// dialogs the machine has open (rc.Dialogs).

// fire hands ev to the run control and performs what follows.
func (m *Model) fire(ev runctl.Event) tea.Cmd {
	next, fx, n := runctl.Next(runLab(m.list.Steps(), len(m.sess.Variables()) > 0, m.unattended), m.rc, ev)
	m.rc = next
	if s, ok := noticeText(m.Common, m.unattended, n); ok {
		m.bar.text = s
	}
	var cmds []tea.Cmd
	for _, f := range fx {
		cmds = append(cmds, m.perform(f))
	}
	// A dialog the machine closed is drawn no more.
	m.dialogs.Sync(m.rc.Dialogs)
	return tea.Batch(cmds...)
}

// runLab is what the run control needs to know of the lab.
func runLab(ss []steps.StepInfo, hasVars, unattended bool) runctl.Lab {
	l := runctl.Lab{Steps: make([]runctl.Step, len(ss)), HasVars: hasVars, Unattended: unattended}
	for i, s := range ss {
		k := steps.DescribeKind(s.Kind)
		l.Steps[i] = runctl.Step{Task: s.Kind == taskKind, AsksVars: k.AsksVars, Dashboard: k.View == steps.ViewDashboard}
	}
	return l
}

// perform does one effect of a transition.
func (m *Model) perform(f runctl.Effect) tea.Cmd {
	sess := m.sess
	i := f.Step
	switch f.Kind {
	case runctl.StartStep:
		return m.launch(i, func(ctx context.Context) results.Status { return sess.RunStep(ctx, i) })
	case runctl.CheckStep:
		return m.launch(i, func(ctx context.Context) results.Status { return sess.CheckTask(ctx, i) })
	case runctl.RunShell:
		return m.openShell(i)
	case runctl.ShowVars:
		return m.vars.Open(m.list.Steps(), i, m.rc.VarsRuns)
	case runctl.AskToQuit:
		m.dialogs.AskQuit(i)
	case runctl.AnswerDialog:
		return m.dialogs.Answer(f, m.now)
	case runctl.Cleanup:
		m.abort()
		then, by := f.Then, f.By
		return func() tea.Msg {
			ctx := context.Background()
			err := sess.Cleanup(ctx)
			msg := CleanupDoneMsg{Then: then}
			if by != "" {
				// The run is left: its results say it was interrupted,
				// and by what.
				dir, lerr := sess.Leave(ctx, by)
				err = errors.Join(err, lerr)
				msg.Dir = dir
			}
			msg.Err = err
			return msg
		}
	case runctl.WriteResults:
		return func() tea.Msg {
			dir, err := sess.Finish(context.Background())
			return FinishedMsg{Dir: dir, Err: err}
		}
	case runctl.SkipStep:
		m.sess.Skip(i)
		m.list.SetStatus(i, results.Skipped)
		m.facts.Skipped(i)
	case runctl.Select:
		m.list.Select(i)
		m.route.Hold(f.Hold)
		m.layout()
	case runctl.LoadFigures:
		m.cmp.SetResults(m.sess.Results(), m.tco)
	case runctl.CancelStep:
		m.abort()
	case runctl.EmitQuit:
		return func() tea.Msg { return QuitMsg{} }
	case runctl.EmitBack:
		return func() tea.Msg { return BackMsg{} }
	case runctl.EmitRestart:
		return func() tea.Msg { return RestartMsg{} }
	case runctl.EmitStartOver:
		id := m.info.ID
		return func() tea.Msg { return StartOverMsg{ID: id} }
	}
	return nil
}

// launch runs step i with run (RunStep, or CheckTask for a task step the
// trainee did by hand) in the background; StepDoneMsg follows.
func (m *Model) launch(i int, run func(context.Context) results.Status) tea.Cmd {
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	m.facts.Launched(i)
	m.list.SetStatus(i, results.Running)
	m.list.Select(i)
	m.route.Release()
	m.out.ClearStep(i)
	m.bar.figures = results.Figures{}
	if steps.DescribeKind(m.list.Steps()[i].Kind).View == steps.ViewDashboard {
		m.dash.Reset()
	}
	m.layout()
	return tea.Batch(m.list.Init(), func() tea.Msg {
		return StepDoneMsg{Index: i, Status: run(ctx)}
	})
}

// abort stops the running step; the form closes. (The AnswerDialog
// effects that follow close the open dialogs: after the stop, so that the
// engine sees the stop, not a refusal.)
func (m *Model) abort() {
	if m.cancel != nil {
		m.cancel()
		m.cancel = nil
	}
	m.vars.Close()
}

// varsDone does what the variables form's answer asks of the page:
// events for the run control, an error to show, and, for values set,
// plans read again, done steps whose commands changed marked to run
// again, and the status line saying what changed. A form opened before a
// step runs it, unless work before it must run again first.
func (m *Model) varsDone(r varsResult) tea.Cmd {
	var cmds []tea.Cmd
	for _, ev := range r.events {
		cmds = append(cmds, m.fire(ev))
	}
	if r.err != nil {
		cmds = append(cmds, common.ErrorCmd(r.err))
	}
	if !r.applied {
		return tea.Batch(cmds...)
	}
	before, after, redo, relayout := appliedWords(m.Styles, m.list.Steps(), r.impact, m.rc.VarsRuns)
	// Plans depend on the variables.
	m.facts.ForgetPlans()
	for _, i := range r.impact.redo {
		m.list.SetStatus(i, results.Pending)
	}
	m.bar.text = before
	cmds = append(cmds, m.fire(runctl.Event{Kind: runctl.VarsApplied, Redo: redo}))
	if relayout {
		m.layout()
	}
	if after != "" {
		m.bar.text = after
	}
	return tea.Batch(cmds...)
}

// dashboardHint is the status line's pointer to the dashboard, said while
// the dashboard is not already shown (statusLine).
const dashboardHint = "d shows the live dashboard"

// noticeText words a notice of the run control for the status line; ok
// false: the status line stays as it is.
func noticeText(c common.Common, unattended bool, n runctl.Notice) (s string, ok bool) {
	km, st := c.KeyMap, c.Styles
	switch n.Kind {
	case runctl.Keep, runctl.Busy:
		return "", false
	case runctl.Clear:
		s = ""
	case runctl.DashboardKey:
		s = dashboardHint
	case runctl.AlreadyRunning:
		s = "a step is already running; wait for it or press q"
	case runctl.RunningNoBack:
		s = "a step is running: q stops it"
	case runctl.RunningNoSkip:
		s = "cannot skip the running step"
		if n.Step != n.Next {
			s = fmt.Sprintf("step %d is running: skip once it ends", n.Next+1)
		}
	case runctl.RunningNoVars:
		// The running step reads the variables; changing them under it
		// would make its commands and the plan shown disagree.
		s = "a step is running: change the variables once it ends"
	case runctl.NoVars:
		s = "this lab has no variables"
	case runctl.StepPassed:
		s = fmt.Sprintf("step %d %s · enter runs step %d", n.Step+1, n.Status, n.Next+1)
	case runctl.TaskWaits:
		s = fmt.Sprintf("step %d is yours to do: enter opens a shell, and the run goes on when your work passes its check", n.Step+1)
	case runctl.StepInterrupted:
		s = fmt.Sprintf("step %d interrupted · enter runs it again", n.Step+1)
	case runctl.StepFailed:
		what := fmt.Sprintf("step %d failed", n.Step+1)
		if n.Attempt > 1 {
			what += fmt.Sprintf(" (attempt %d)", n.Attempt)
		}
		switch {
		case unattended:
			s = st.Error.Render(what)
		case n.Task:
			s = st.Error.Render(what) + fmt.Sprintf(" · %s opens the shell again · %s checks again · %s shows how · %s does it for you",
				km.Shell.Help().Key, km.Check.Help().Key, km.ShowMe.Help().Key, km.DoIt.Help().Key)
		default:
			s = st.Error.Render(what) + " · r retry · s skip"
		}
	case runctl.Skipped:
		s = fmt.Sprintf("step %d skipped", n.Step+1)
	case runctl.RunIsFinished:
		s = st.Countdown.Render("this run is finished: R starts the lab over to run it again")
	case runctl.FormCancelled:
		s = "variables unchanged"
		if n.Runs {
			s = "not run: variables form cancelled"
		}
	case runctl.CleanupFinished:
		s = "cleanup done"
	}
	return s, true
}
