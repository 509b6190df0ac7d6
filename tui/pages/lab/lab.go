// Package lab is the lab screen: the step list, the selected step's
// markdown, the exact commands it runs (hosts and sudo marked), its live
// output, and — while a bench runs or when results exist — the dashboard and
// the compare view. Prompts from the engine open as modal dialogs; a
// variables form comes before the first bench or compare.
//
// What runs, what may start and which dialogs are open is the run control's
// (package runctl): the page turns keys and messages into its events,
// renders its State and performs its Effects.
//
// The Model holds the page's parts and does nothing else: it turns keys
// and messages into runctl events or calls of its parts, performs the
// effects (control.go), and composes the views. Each concern is a small
// part with tests of its own:
//   - stepFacts (facts.go): what is known of each step — its commands or
//     its plan's error, why it failed (here or in an earlier session), its
//     text rendered per width;
//   - varsFlow (vars.go): the variables form, the values set and taken
//     back, what a change affects, answered as runctl events;
//   - dialogSet (dialogs.go): the prompts of the dialogs the run control
//     has open, and their keys, answers and deadlines as runctl events;
//   - pager (pager.go): the whole-text overlay — a step in full, a task
//     step's show me, the rendered files — over reader (reader.go);
//   - stepView (stepsview.go), statusBar (statusbar.go), helpView
//     (help.go): the steps view, the status line and the footer's keys,
//     drawn from read-only inputs the page reads;
//   - outRoute (outroute.go): which step's output the output pane shows,
//     and whose a line of output is;
//   - task.go: a task step's shell (shellRun, shellEnd); clipboard.go:
//     copying a step's commands.
package lab

import (
	"context"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/components/compare"
	"github.com/dpulab/dpulab/tui/components/dashboard"
	"github.com/dpulab/dpulab/tui/components/logview"
	"github.com/dpulab/dpulab/tui/components/prompt"
	"github.com/dpulab/dpulab/tui/components/steplist"
	"github.com/dpulab/dpulab/tui/components/varform"
	"github.com/dpulab/dpulab/tui/pages/lab/runctl"
	"github.com/dpulab/dpulab/tui/session"
)

// StepDoneMsg says RunStep returned for step Index.
type StepDoneMsg struct {
	Index  int
	Status results.Status
}

// CleanupDoneMsg says Cleanup returned; Then says what comes next.
type CleanupDoneMsg struct {
	// Dir is the results folder written as the run was left ("" none).
	Dir  string
	Err  error
	Then AfterCleanup
}

// AfterCleanup is what the page does once cleanup finished.
type AfterCleanup = runctl.Then

// What follows a cleanup.
const (
	ThenStay    = runctl.ThenStay
	ThenQuit    = runctl.ThenQuit
	ThenRestart = runctl.ThenRestart
	ThenBack    = runctl.ThenBack
)

// FinishedMsg says Finish wrote the results (or failed to).
type FinishedMsg struct {
	Dir string
	Err error
}

// QuitMsg asks the root to end the program; cleanup has run.
type QuitMsg struct{}

// BackMsg asks the root to show the picker again.
type BackMsg struct{}

// RestartMsg asks the root to open the lab again from the first step
// (booth mode's loop).
type RestartMsg struct{}

// StartOverMsg asks the root to open the lab again from its first step,
// ignoring saved progress: the person pressed R on a finished run.
type StartOverMsg struct{ ID string }

// ClockMsg is the root's clock tick (about once a second), which drives
// dialog deadlines.
type ClockMsg time.Time

// Pane is the focused pane of the steps view.
type Pane int

// The panes, in tab order.
const (
	PaneSteps Pane = iota
	PaneDoc
	PaneOutput
)

// View is what the page shows.
type View = runctl.View

// The page's views.
const (
	ViewSteps     = runctl.ViewSteps
	ViewDashboard = runctl.ViewDashboard
	ViewCompare   = runctl.ViewCompare
)

// Model is the lab screen.
type Model struct {
	common.Common
	sess session.Session
	info session.LabInfo

	list *steplist.Model
	out  *logview.Model
	dash *dashboard.Model
	cmp  *compare.Model
	doc  *docPane
	parts

	// facts holds what is known of each step: commands, plan errors,
	// failures, rendered text.
	facts *stepFacts

	// dialogs draw the open dialogs of the run control (rc.Dialogs).
	dialogs *dialogSet
	// vars is the variables form and what its answers do.
	vars *varsFlow
	// pager is the whole-text overlay (a step in full, show me, the
	// rendered files).
	pager *pager
	// route says which step's output the output pane shows (the
	// selected one's, or the one that just ended) and whose a line is.
	route outRoute

	focus Pane
	// rc is the run control: what runs, what may start, the view shown
	// (package runctl decides every change of it).
	rc runctl.State
	// cancel stops the running step (rc.Running).
	cancel context.CancelFunc
	// bar is the status line's own part: the page's note, booth mode's
	// banner, where results go, what the run's figures are.
	bar statusBar
	now time.Time

	// unattended: nobody at the keyboard (booth mode); a driver sends
	// RunMsg and FinishMsg. The screen names no key to press then: a
	// visitor's key only pauses the loop and a failed step is retried by
	// the next loop, never by r or s.
	unattended bool
	tco        compare.TCOFunc
}

// Options configure the page.
type Options struct {
	// Unattended is for a driver playing the lab with nobody at the
	// keyboard (booth mode): the variables form never opens (the lab's
	// defaults hold), a finished step leads neither to the next one nor
	// to writing results (the driver sends RunMsg and FinishMsg), and a
	// finished lab does not open for review.
	Unattended bool
	// TCO computes TCO estimates for the compare view (tco.Compute).
	TCO compare.TCOFunc
}

// New opens the lab screen over an open session, at its resume point.
func New(c common.Common, sess session.Session, opts Options) *Model {
	m := &Model{
		Common:     c,
		sess:       sess,
		info:       sess.Info(),
		list:       steplist.New(c),
		out:        logview.New(c),
		dash:       dashboard.New(c),
		doc:        newDocPane(c),
		dialogs:    newDialogSet(c),
		route:      newOutRoute(),
		tco:        opts.TCO,
		now:        time.Now(),
		unattended: opts.Unattended,
	}
	m.bar = statusBar{title: m.info.Title, unattended: m.unattended}
	m.cmp = compare.New(c, sess.Results(), opts.TCO)
	if m.unattended {
		m.dash.HideKeys()
	}
	m.panes = [...]common.Component{PaneSteps: m.list, PaneDoc: m.doc, PaneOutput: m.out}
	m.screens = map[View]common.Component{ViewDashboard: m.dash, ViewCompare: m.cmp}
	m.list.SetSteps(shownSteps(sess.Steps(), m.unattended))
	m.list.SetCannotRun(cannotRun(m.info, m.list.Steps()))
	m.vars = newVarsFlow(c, sess)
	m.pager = newPager(c, sess)
	m.facts = newStepFacts(sess, m.list.Steps, m.unattended, c.Styles.NoColor)
	m.list.Select(sess.Resume())
	review := sess.Review() && !m.unattended
	// What a person comes back to a finished lab for: its compare.
	m.rc = runctl.New(review, m.cmp.Results() != nil && len(m.cmp.Results().Benches) > 0)
	if review {
		m.bar.text = reviewWords(m.Styles, m.info)
	}
	m.SetSize(c.Width, c.Height)
	return m
}

// Init starts the spinner.
func (m *Model) Init() tea.Cmd { return m.list.Init() }

// Review reports whether the page shows a finished run (nothing runs; R
// starts the lab over).
func (m *Model) Review() bool { return m.rc.Phase == runctl.Review }

// Session returns the open session.
func (m *Model) Session() session.Session { return m.sess }

// Running is the index of the running step, -1 when none.
func (m *Model) Running() int { return m.rc.Running }

// ActiveView is the view shown.
func (m *Model) ActiveView() View { return m.rc.View }

// RunState is the run control's state.
func (m *Model) RunState() runctl.State { return m.rc }

// Focus is the focused pane.
func (m *Model) Focus() Pane { return m.focus }

// Steps returns the step list as shown.
func (m *Model) Steps() []steps.StepInfo { return m.list.Steps() }

// Selected is the selected step's index.
func (m *Model) Selected() int { return m.list.Selected() }

// Prompt returns the dialog shown, if any.
func (m *Model) Prompt() *prompt.Model { return m.dialogs.Shown(m.rc) }

// Prompts returns the open dialogs, the shown one first.
func (m *Model) Prompts() []*prompt.Model { return m.dialogs.List(m.rc) }

// Busy says what blocks new runs ("cleaning up", "writing results"), or "".
func (m *Model) Busy() string { return m.rc.Busy() }

// Form returns the open variables form, if any.
func (m *Model) Form() *varform.Model { return m.vars.Form() }

// Status is the status line's text.
func (m *Model) Status() string { return m.bar.text }

// Output returns the output pane.
func (m *Model) Output() *logview.Model { return m.out }

// Dashboard returns the dashboard.
func (m *Model) Dashboard() *dashboard.Model { return m.dash }

// Compare returns the compare view.
func (m *Model) Compare() *compare.Model { return m.cmp }

// Failure returns step i's last failure, if it failed.
func (m *Model) Failure(i int) (steps.StepFinished, bool) { return m.facts.Last(i) }

// SetSize implements common.Component.
func (m *Model) SetSize(w, h int) {
	m.Common.SetSize(w, h)
	for _, s := range m.screens {
		s.SetSize(w, h-1) // the status line is the page's
	}
	m.pager.SetSize(w, h)
	// The dialogs and the variables form are built at the page's size
	// (their views are sized again before they are drawn, in overlay).
	m.dialogs.SetSize(w, h)
	m.vars.SetSize(w, h)
	m.layout()
}

// Shutdown stops a running step and runs cleanup, then asks the root to
// quit (Ctrl+C).
func (m *Model) Shutdown() tea.Cmd { return m.ShutdownBy("Ctrl+C in the TUI") }

// ShutdownBy is Shutdown for what by names (a signal: "SIGTERM"), which
// the run's results record as what interrupted it.
//
// While a cleanup or the writing of results runs, the quit follows once
// it is done.
func (m *Model) ShutdownBy(by string) tea.Cmd {
	return m.fire(runctl.Event{Kind: runctl.Interrupt, By: by})
}

// Typing reports whether a dialog or form has the keyboard, so the root
// must not take keys like ? or q for itself.
func (m *Model) Typing() bool { return m.Prompt() != nil || m.vars.Form() != nil }

// Reading reports whether the whole-text view is open.
func (m *Model) Reading() bool { return m.pager.Reader() != nil }
