package lab

import (
	"path/filepath"
	"slices"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/components/prompt"
	"github.com/dpulab/dpulab/tui/components/varform"
	"github.com/dpulab/dpulab/tui/pages/lab/runctl"
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
		cmds = append(cmds, m.stepDone(msg))
	case FinishedMsg:
		cmds = append(cmds, m.finished(msg))
	case ShellDoneMsg:
		// The trainee's shell ended: its check runs, unless the shell
		// never ran.
		ev, why := shellEnd(msg, m.Styles, m.KeyMap)
		cmds = append(cmds, m.fire(ev))
		if why != "" {
			m.bar.text = why
		}
	case RunMsg, FinishMsg, CleanupMsg, NoteMsg, StatusMsg, BannerMsg:
		cmds = append(cmds, m.drive(msg))
	case CleanupDoneMsg:
		if msg.Err != nil {
			m.out.AppendText("cleanup: " + msg.Err.Error())
		}
		cmds = append(cmds, m.fire(runctl.Event{Kind: runctl.CleanupDone, Then: msg.Then}))
	case ClockMsg:
		m.now = time.Time(msg)
		// Booth mode gives dialogs deadlines: the run control answers
		// them as they pass.
		for _, d := range slices.Clone(m.rc.Dialogs) {
			if ev, ok := m.dialogs.Expired(d, m.now); ok {
				cmds = append(cmds, m.fire(ev))
			}
		}
	case prompt.AnsweredMsg:
		// Which open dialog the person answered: the quit question (with
		// its answer), or the engine's that are done.
		if msg.Prompt.Step == quitPromptStep {
			if ev, ok := m.dialogs.QuitAnswer(msg); ok {
				cmds = append(cmds, m.fire(ev))
			}
			break
		}
		for _, d := range slices.Clone(m.rc.Dialogs) {
			if ev, ok := m.dialogs.Answered(d); ok {
				cmds = append(cmds, m.fire(ev))
			}
		}
	case varform.SubmittedMsg:
		cmds = append(cmds, m.varsDone(m.vars.Submitted(msg, m.list.Steps())))
	case varform.ConfirmedMsg:
		cmds = append(cmds, m.varsDone(m.vars.Confirmed()))
	case varform.BackToFieldsMsg:
		cmds = append(cmds, m.varsDone(m.vars.Back()))
	case varform.CancelledMsg:
		cmds = append(cmds, m.varsDone(m.vars.Cancelled()))
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
		} else if f := m.vars.Form(); f != nil {
			_, cmd := f.Update(msg)
			cmds = append(cmds, cmd)
		}
	}
	return m, tea.Batch(cmds...)
}

func (m *Model) handleEvent(ev steps.Event) tea.Cmd {
	switch e := ev.(type) {
	case steps.LabStarted:
		m.bar.LabStarted(e)
		if len(e.Steps) > 0 {
			sel := m.list.Selected()
			m.list.SetSteps(shownSteps(e.Steps, m.unattended))
			m.list.Select(sel)
		}
	case steps.StepStarted:
		m.list.SetStatus(e.Index, results.Running)
		m.facts.Started(e.Index, e.Commands)
		m.layout()
	case steps.Output:
		m.out.AppendLinesTo(m.route.Owner(e.Step, m.list.Steps(), m.rc.Running, m.out.Shown()), []runnerLine{e.Line})
		// The pump hands events over after RunStep's return may have
		// moved the selection on: the ended step's late lines make it
		// the one shown.
		m.out.Show(m.route.Shown(m.list.Selected(), m.out))
	case steps.Progress:
		m.dash.SetProgress(e)
		m.bar.figures = e.Figures
	case steps.Sample:
		m.dash.AddSample(e)
		m.bar.figures = e.Figures
	case steps.StepFinished:
		m.list.SetStatus(e.Index, e.Status)
		m.facts.Finished(e)
		if e.Status == results.Failed {
			msg := "✘ step failed"
			if e.Err != "" {
				msg += ": " + e.Err
			}
			m.out.AppendTextTo(e.Index, msg)
		}
		m.layout()
	case steps.Prompt:
		// A dialog, if the run control shows it (a question of a call
		// that returned gets its safe answer unseen).
		d := m.rc.NextDialog()
		return tea.Batch(m.dialogs.Engine(d, e), m.fire(runctl.Event{Kind: runctl.DialogOpened, Dialog: d}))
	case steps.SoftwareRDMAFound:
		if e.Devices != "" {
			m.bar.softRDMA = e.Devices
		}
	}
	return nil
}

// stepDone records the end of the running step (RunStep's return value is
// the authority when the engine's StepFinished was dropped or never sent)
// and lets the run control go on from it. A step of a run that was stopped
// and replaced (booth restart) is nothing of this screen's.
func (m *Model) stepDone(msg StepDoneMsg) tea.Cmd {
	if msg.Index != m.rc.Running {
		return nil
	}
	if m.cancel != nil {
		m.cancel()
		m.cancel = nil
	}
	m.bar.figures = results.Figures{}
	m.list.SetStatus(msg.Index, msg.Status)
	return m.fire(runctl.Event{Kind: runctl.StepEnded, Step: msg.Index, Status: msg.Status})
}

// finished shows where the results went, and the compare view when they
// have benches.
func (m *Model) finished(msg FinishedMsg) tea.Cmd {
	if msg.Err != nil {
		m.bar.text = m.Styles.Error.Render("writing results failed: ") + msg.Err.Error()
		return m.fire(runctl.Event{Kind: runctl.ResultsWritten})
	}
	r := m.sess.Results()
	cmd := m.fire(runctl.Event{Kind: runctl.ResultsWritten, OK: true, Benches: r != nil && len(r.Benches) > 0})
	// The path once, whole (the status line wraps it): the folder is the
	// report's.
	m.bar.text = "results written, report: " + filepath.Join(msg.Dir, results.ReportHTMLFile)
	if m.unattended {
		// A visitor has no use for a path on the booth's disk.
		m.bar.text = "results written"
	}
	return cmd
}
