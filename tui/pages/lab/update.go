package lab

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/components/prompt"
	"github.com/dpulab/dpulab/tui/components/varform"
	"github.com/dpulab/dpulab/tui/session"
)

// Update handles keys, engine events and the page's own messages.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	switch msg := msg.(type) {
	case session.EventsMsg:
		for _, ev := range msg {
			cmds = append(cmds, m.handleEvent(ev))
		}
	case StepDoneMsg:
		if msg.Index != m.running {
			// A step of a run that was stopped and replaced (booth
			// restart): nothing of this screen's.
			break
		}
		cmds = append(cmds, m.stepDone(msg))
	case FinishedMsg:
		m.busy = ""
		if msg.Err != nil {
			m.status = m.Styles.Error.Render("writing results failed: ") + msg.Err.Error()
			break
		}
		m.resDir = msg.Dir
		m.cmp.SetResults(m.sess.Results(), m.tco)
		if r := m.cmp.Results(); r != nil && len(r.Benches) > 0 {
			m.view = ViewCompare
		}
		// The path once, whole (the status line wraps it): the folder is
		// the report's.
		m.status = "results written, report: " + filepath.Join(msg.Dir, results.ReportHTMLFile)
		if m.unattended {
			// A visitor has no use for a path on the booth's disk.
			m.status = "results written"
		}
	case ShellDoneMsg:
		cmds = append(cmds, m.shellDone(msg))
	case RunMsg, FinishMsg, CleanupMsg, NoteMsg, StatusMsg, BannerMsg:
		cmds = append(cmds, m.drive(msg))
	case CleanupDoneMsg:
		m.busy = ""
		if msg.Err != nil {
			m.out.AppendText("cleanup: " + msg.Err.Error())
		}
		switch msg.Then {
		case ThenQuit:
			return m, func() tea.Msg { return QuitMsg{} }
		case ThenRestart:
			return m, func() tea.Msg { return RestartMsg{} }
		case ThenBack:
			return m, func() tea.Msg { return BackMsg{} }
		}
		m.status = "cleanup done"
	case ClockMsg:
		m.now = time.Time(msg)
		for _, p := range m.prompts {
			cmds = append(cmds, p.Tick(m.now))
		}
	case prompt.AnsweredMsg:
		cmds = append(cmds, m.answered(msg))
	case varform.SubmittedMsg:
		cmds = append(cmds, m.formSubmitted(msg))
	case varform.ConfirmedMsg:
		cmds = append(cmds, m.formConfirmed())
	case varform.BackToFieldsMsg:
		cmds = append(cmds, m.formBack())
	case varform.CancelledMsg:
		m.formCancelled()
	case spinner.TickMsg:
		_, cmd := m.list.Update(msg)
		cmds = append(cmds, cmd)
	case tea.KeyMsg:
		cmds = append(cmds, m.key(msg))
	default:
		// Cursor blinks and the like belong to the open dialog or form.
		if p := m.Prompt(); p != nil {
			_, cmd := p.Update(msg)
			cmds = append(cmds, cmd)
		} else if m.form != nil {
			_, cmd := m.form.Update(msg)
			cmds = append(cmds, cmd)
		}
	}
	return m, tea.Batch(cmds...)
}

func (m *Model) handleEvent(ev steps.Event) tea.Cmd {
	switch e := ev.(type) {
	case steps.LabStarted:
		m.rehearsal = e.Rehearsal
		m.setSoftwareRDMA(e.SoftwareRDMA)
		// Before the first step: where its results will be (empty in a
		// dry run). The path is sanitised with every other event field.
		if e.ResultsDir != "" {
			m.resultsDir = e.ResultsDir
			if !m.unattended {
				m.status = "results go to " + e.ResultsDir
			}
		}
		if len(e.Steps) > 0 {
			sel := m.list.Selected()
			m.list.SetSteps(m.shownSteps(e.Steps))
			m.list.Select(sel)
		}
	case steps.StepStarted:
		m.list.SetStatus(e.Index, results.Running)
		if len(e.Commands) > 0 {
			m.plans[e.Index] = e.Commands
			delete(m.planErr, e.Index)
		}
		m.layout()
	case steps.Output:
		m.out.AppendLinesTo(m.stepIndex(e.Step), []runnerLine{e.Line})
		// The pump hands events over after RunStep's return may have
		// moved the selection on: the ended step's late lines make it
		// the one shown.
		m.out.Show(m.outStep())
	case steps.Progress:
		m.dash.SetProgress(e)
		m.figures = e.Figures
	case steps.Sample:
		m.dash.AddSample(e)
		m.figures = e.Figures
	case steps.StepFinished:
		m.list.SetStatus(e.Index, e.Status)
		if e.Status == results.Failed {
			m.failures[e.Index] = e
			msg := "✘ step failed"
			if e.Err != "" {
				msg += ": " + e.Err
			}
			m.out.AppendTextTo(e.Index, msg)
		} else {
			delete(m.failures, e.Index)
		}
		m.layout()
	case steps.Prompt:
		p := prompt.New(m.Common, e)
		m.prompts = append(m.prompts, p)
		return p.Init()
	case steps.SoftwareRDMAFound:
		m.setSoftwareRDMA(e.Devices)
	case steps.LabFinished:
		if e.ResultsDir != "" {
			m.resDir = e.ResultsDir
		}
	}
	return nil
}

// stepIndex is the index of the step with this id. Output naming no step of
// the list belongs to the running step (the engine names every step; a
// note of its own may not), else to the one that just ended, else to the
// step shown.
func (m *Model) stepIndex(id string) int {
	for i, s := range m.list.Steps() {
		if s.ID == id {
			return i
		}
	}
	if m.running >= 0 {
		return m.running
	}
	if m.outHold >= 0 {
		return m.outHold // the step that just ended, its events still coming
	}
	return m.out.Shown()
}

func (m *Model) stepDone(msg StepDoneMsg) tea.Cmd {
	if m.cancel != nil {
		m.cancel()
		m.cancel = nil
	}
	m.running = -1
	m.figures = results.Figures{}
	// The engine's StepFinished normally set this already; the return
	// value is the authority when the event was dropped or never sent.
	m.list.SetStatus(msg.Index, msg.Status)
	if m.view == ViewDashboard && (m.unattended || msg.Status == results.Failed) {
		// Booth mode's dashboard goes with its step; a person who opened
		// it keeps it, except on a failure, which the steps view explains.
		m.view = ViewSteps
	}
	if m.allAfter == msg.Index && msg.Status == results.Done {
		// The task step "run all" waited at passed: on from here. (A
		// failed check waits on: the trainee tries again.)
		m.allAfter = -1
		m.runAll = true
	}
	switch msg.Status {
	case results.Done, results.Skipped:
		next := msg.Index + 1
		if next >= len(m.list.Steps()) {
			m.runAll = false
			if m.unattended {
				return nil // the driver sends FinishMsg
			}
			return m.finish()
		}
		m.list.Select(next)
		m.outHold = msg.Index
		m.layout()
		if m.unattended {
			return nil // the driver sends RunMsg
		}
		if m.runAll && m.isTask(next) {
			// The trainee's to do: the run waits, and goes on when it
			// passes.
			m.runAll = false
			m.allAfter = next
			m.status = fmt.Sprintf("step %d is yours to do: enter opens a shell, and the run goes on when your work passes its check", next+1)
			return nil
		}
		if m.runAll {
			return m.start(next)
		}
		m.status = fmt.Sprintf("step %d %s · enter runs step %d", msg.Index+1, msg.Status, next+1)
	case results.Interrupted:
		// Stopped by the person (or a signal), not failed: nothing to
		// explain, and it runs again like any step not done.
		m.runAll = false
		m.list.Select(msg.Index)
		m.status = fmt.Sprintf("step %d interrupted · enter runs it again", msg.Index+1)
	case results.Failed:
		m.runAll = false
		m.list.Select(msg.Index)
		m.layout()
		what := fmt.Sprintf("step %d failed", msg.Index+1)
		if n := m.attempts[msg.Index]; n > 1 {
			what += fmt.Sprintf(" (attempt %d)", n)
		}
		if m.unattended {
			m.status = m.Styles.Error.Render(what)
			return nil
		}
		if km := m.KeyMap; m.isTask(msg.Index) {
			m.status = m.Styles.Error.Render(what) + fmt.Sprintf(" · %s opens the shell again · %s checks again · %s shows how · %s does it for you",
				km.Shell.Help().Key, km.Check.Help().Key, km.ShowMe.Help().Key, km.DoIt.Help().Key)
			return nil
		}
		m.status = m.Styles.Error.Render(what) + " · r retry · s skip"
	}
	return nil
}

// start runs step i (after the variables form when it is the first bench or
// compare and the lab has variables).
func (m *Model) start(i int) tea.Cmd {
	if m.running >= 0 || m.busy != "" {
		m.status = "a step is already running; wait for it or press q"
		return nil
	}
	if i < 0 || i >= len(m.list.Steps()) {
		return nil
	}
	s := m.list.Steps()[i]
	if !m.unattended && steps.DescribeKind(s.Kind).AsksVars && !m.varsSet && len(m.sess.Variables()) > 0 {
		return m.openVars(i, true)
	}
	sess := m.sess
	return m.begin(i, func(ctx context.Context) results.Status { return sess.RunStep(ctx, i) })
}

// begin runs step i with run (RunStep, or CheckTask for a task step the
// trainee did by hand) in the background; StepDoneMsg follows.
func (m *Model) begin(i int, run func(context.Context) results.Status) tea.Cmd {
	if m.running >= 0 || m.busy != "" {
		m.status = "a step is already running; wait for it or press q"
		return nil
	}
	if i < 0 || i >= len(m.list.Steps()) {
		return nil
	}
	if m.allAfter != i {
		m.allAfter = -1
	}
	s := m.list.Steps()[i]
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	m.running = i
	m.attempts[i]++
	delete(m.failures, i)
	delete(m.savedFailed, i)
	m.list.SetStatus(i, results.Running)
	m.list.Select(i)
	m.outHold = -1
	m.out.ClearStep(i)
	m.status = ""
	m.figures = results.Figures{}
	if steps.DescribeKind(s.Kind).View == steps.ViewDashboard {
		m.dash.Reset()
		if m.unattended {
			// Nobody is there to press d: booth mode shows it.
			m.view = ViewDashboard
		} else {
			// The person opens it with d and closes it with d: it
			// never opens on its own under their keys.
			m.status = "d shows the live dashboard"
		}
	}
	m.layout()
	return tea.Batch(m.list.Init(), func() tea.Msg {
		return StepDoneMsg{Index: i, Status: run(ctx)}
	})
}

func (m *Model) finish() tea.Cmd {
	m.busy = "writing results"
	sess := m.sess
	return func() tea.Msg {
		dir, err := sess.Finish(context.Background())
		return FinishedMsg{Dir: dir, Err: err}
	}
}

// cleanup stops a running step and runs the lab's cleanup in the
// background; then decides what follows. Quitting or leaving the lab
// records how the run ended (Session.Leave: interrupted, by m.leaveBy)
// unless it had already written its end.
func (m *Model) cleanup(then AfterCleanup) tea.Cmd {
	m.Abort()
	m.busy = "cleaning up (stopping what the lab started)"
	sess := m.sess
	by := m.leaveBy
	if by == "" {
		by = "q in the TUI"
		if then == ThenBack {
			by = "leaving the lab in the TUI"
		}
	}
	m.leaveBy = ""
	return func() tea.Msg {
		ctx := context.Background()
		err := sess.Cleanup(ctx)
		msg := CleanupDoneMsg{Then: then}
		if then == ThenQuit || then == ThenBack {
			dir, lerr := sess.Leave(ctx, by)
			err = errors.Join(err, lerr)
			msg.Dir = dir
		}
		msg.Err = err
		return msg
	}
}

func (m *Model) answered(msg prompt.AnsweredMsg) tea.Cmd {
	// Drop the answered dialog (and any others already answered).
	kept := m.prompts[:0]
	for _, p := range m.prompts {
		if !p.Done() {
			kept = append(kept, p)
		}
	}
	m.prompts = kept
	if msg.Prompt.Step == quitPromptStep {
		if msg.Answer.Choice == "yes" {
			return m.cleanup(ThenQuit)
		}
		return nil
	}
	return nil
}

// setSoftwareRDMA labels the run as one over the software RDMA devices
// devs: the status line and the live dashboard say so from now on.
func (m *Model) setSoftwareRDMA(devs string) {
	if devs == "" {
		return
	}
	m.softRDMA = devs
}
