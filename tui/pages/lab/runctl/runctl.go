// Package runctl is the lab page's run control as a state machine: what
// runs, what may start, what q, Ctrl+C and esc do, what follows a step's
// end, a cleanup and the writing of results, and which view and compare
// figures the page shows after each of them.
//
// The dialogs that open while a run goes are part of it: the engine's
// questions (a step's confirm, a sudo or SSH password, a host key to
// accept, a variable asked at run time) and the page's own "quit anyway?".
// State.Dialogs holds them, the shown one first; the machine decides when
// one opens, which is shown, and when one is answered on the person's
// behalf (its safe answer as a step ends, a cleanup starts or Ctrl+C is
// pressed; booth mode's answer when its deadline passes).
//
// It is pure data and functions (no terminal, no session): the lab page
// turns keys and messages into Events, hands them to Next, renders the
// State it gets back and performs the Effects in order. The allowed
// transitions are one table (transitions, in table.go): an event a phase
// has no entry for is ignored, with a Notice saying why when a person
// caused it, never a panic.
package runctl

import "github.com/dpulab/dpulab/steps/results"

// Phase is where the run stands.
type Phase int

// The phases. Idle, Failed, Interrupted and Finished are at rest: nothing
// runs and a step may start; they differ in what the page says.
const (
	// Idle: nothing runs.
	Idle Phase = iota
	// Running: step State.Running runs.
	Running
	// Asking: step State.Running runs and waits on the person's answer to
	// an engine dialog (State.Dialogs, the shown one first; several may be
	// stacked).
	Asking
	// AskQuit: step State.Running runs and the page asks whether to quit
	// anyway; the quit question is shown over any engine dialog, which
	// shows again when the answer is no.
	AskQuit
	// Vars: the variables form is open at State.Step (State.VarsRuns:
	// submitting runs the step).
	Vars
	// Shell: a task step's shell has the terminal (State.Step); its check
	// runs when it exits.
	Shell
	// Failed: step State.Step failed; r retries it.
	Failed
	// Interrupted: step State.Step was stopped mid-way; it runs again.
	Interrupted
	// Finishing: the run's results are being written.
	Finishing
	// Finished: the run's results were written.
	Finished
	// CleaningUp: the lab's cleanup runs (a step being stopped may still
	// end meanwhile); State.Then says what follows.
	CleaningUp
	// Review: a run finished in an earlier session is shown; nothing runs,
	// R starts the lab over.
	Review
	// Left: the page asked the root to quit, show the picker or restart;
	// nothing more happens here.
	Left
)

// Phases lists every phase, for tables and tests.
var Phases = []Phase{Idle, Running, Asking, AskQuit, Vars, Shell, Failed, Interrupted, Finishing, Finished, CleaningUp, Review, Left}

var phaseNames = [...]string{"idle", "running", "asking", "asking to quit", "variables form", "task shell", "failed", "interrupted", "writing results", "finished", "cleaning up", "review", "left"}

func (p Phase) String() string {
	if p < 0 || int(p) >= len(phaseNames) {
		return "phase?"
	}
	return phaseNames[p]
}

// AtRest reports whether nothing runs and a step may start.
func (p Phase) AtRest() bool { return p == Idle || p == Failed || p == Interrupted || p == Finished }

// Then is what follows a cleanup.
type Then int

// What follows a cleanup.
const (
	// ThenStay: the page stays (booth mode between loops).
	ThenStay Then = iota
	// ThenQuit: the program ends.
	ThenQuit
	// ThenRestart: the lab opens again from its first step (booth mode).
	ThenRestart
	// ThenBack: the picker shows again.
	ThenBack
)

// View is the page's view.
type View int

// The views.
const (
	ViewSteps View = iota
	ViewDashboard
	ViewCompare
)

// Figures says which results the compare view holds.
type Figures int

// What the compare view holds.
const (
	// FiguresAtOpen: the session's results as the page opened. For a
	// resumed run they are an earlier attempt's, which the compare view
	// labels as such (results.Warnings).
	FiguresAtOpen Figures = iota
	// FiguresStale: a step ended since they were read; the view reads
	// them again before it shows them.
	FiguresStale
	// FiguresCurrent: read after this session's last step end or the
	// writing of the results.
	FiguresCurrent
)

// Step is what the machine needs to know of a step of the lab.
type Step struct {
	// Task: the trainee does the step by hand in a shell.
	Task bool
	// AsksVars: the variables form comes before the step's first run.
	AsksVars bool
	// Dashboard: the live dashboard is the step's view.
	Dashboard bool
}

// Lab is what the machine needs to know of the lab and the page.
type Lab struct {
	Steps []Step
	// HasVars: the lab has variables (the form has something to ask).
	HasVars bool
	// Unattended: booth mode; a driver runs the steps and writes the
	// results, the form never opens, the dashboard shows by itself.
	Unattended bool
}

func (l Lab) step(i int) (Step, bool) {
	if i < 0 || i >= len(l.Steps) {
		return Step{}, false
	}
	return l.Steps[i], true
}

// State is the run control's whole state.
type State struct {
	Phase Phase
	// Running is the step that runs (-1: none). In CleaningUp it is the
	// step being stopped, until its end arrives.
	Running int
	// Step is the step the phase is about: the form's, the shell's, the
	// one that failed or was interrupted (-1: none).
	Step int
	// VarsRuns says submitting the form runs Step.
	VarsRuns bool
	// VarsSet says the variables were set in this session: the form does
	// not open by itself again.
	VarsSet bool
	// All says "run all": the next step starts when one passes.
	All bool
	// WaitTask is the task step "run all" waits at until it passes (-1).
	WaitTask int
	// Then is what follows the running cleanup.
	Then Then
	// QuitBy is a quit asked for while a cleanup or the writing of results
	// ran (Ctrl+C, a signal): the page quits once it is done, recording
	// this as what interrupted the run.
	QuitBy string
	// View is the view shown.
	View View
	// Figures says which results the compare view holds.
	Figures Figures
	// Attempts counts each step's runs in this session.
	Attempts map[int]int
	// Dialogs are the open dialogs, the shown one first: the quit
	// question (QuitDialog) in front, then the engine's in the order they
	// opened.
	Dialogs []Dialog
}

// Dialog names an open dialog. The page numbers the engine's from 1
// (State.NextDialog); QuitDialog is the page's own quit question.
type Dialog int

// QuitDialog is the page's "quit while a step runs?" question.
const QuitDialog Dialog = 0

// Shown is the dialog shown, which has the keyboard (ok false: none).
func (s State) Shown() (Dialog, bool) {
	if len(s.Dialogs) == 0 {
		return 0, false
	}
	return s.Dialogs[0], true
}

// NextDialog is the number for an engine dialog about to open: above
// every open one.
func (s State) NextDialog() Dialog {
	n := QuitDialog
	for _, d := range s.Dialogs {
		n = max(n, d)
	}
	return n + 1
}

// Busy is what blocks new runs ("cleaning up…", "writing results"), or "".
func (s State) Busy() string {
	switch s.Phase {
	case CleaningUp:
		return "cleaning up (stopping what the lab started)"
	case Finishing:
		return "writing results"
	}
	return ""
}

// New is the state of a page just opened: at rest, or reviewing a finished
// run (with the compare view first when it has benches to show).
func New(review, benches bool) State {
	s := State{Running: -1, Step: -1, WaitTask: -1, Attempts: map[int]int{}}
	if review {
		s.Phase = Review
		if benches {
			s.View = ViewCompare
		}
	}
	return s
}

// EventKind is what happened.
type EventKind int

// The events.
const (
	// Run: run Step (enter, r, f on a task step, a driver's RunMsg).
	Run EventKind = iota
	// RunAll: run Step and go on with the next ones.
	RunAll
	// OpenShell: open task Step's shell (All: then go on as run all).
	OpenShell
	// ShellExited: the shell of task Step ended (Shell says how).
	ShellExited
	// Check: check task Step (the trainee did it).
	Check
	// StepEnded: RunStep or CheckTask of Step returned Status.
	StepEnded
	// Skip: skip Step.
	Skip
	// OpenVars: open the variables form at Step.
	OpenVars
	// VarsApplied: the form's values were set; Redo is the first step
	// done that must run again (-1: none).
	VarsApplied
	// VarsCancelled: the form was closed without new values.
	VarsCancelled
	// VarsFailed: the session refused the values.
	VarsFailed
	// Quit: q.
	Quit
	// QuitAnswer: the quit dialog's answer (Yes).
	QuitAnswer
	// Interrupt: Ctrl+C or a signal (By names it).
	Interrupt
	// Back: esc.
	Back
	// CleanupAsked: a driver asks for a cleanup, then Then.
	CleanupAsked
	// CleanupDone: the cleanup returned; Then is what follows (a driver
	// may have changed it on the way).
	CleanupDone
	// FinishAsked: a driver asks to write the results.
	FinishAsked
	// ResultsWritten: Finish returned (OK false: writing failed).
	ResultsWritten
	// StartOver: R on a finished run.
	StartOver
	// ToggleDashboard: d.
	ToggleDashboard
	// ToggleCompare: c.
	ToggleCompare
	// ShowSteps: a driver's note brings the steps view to the front.
	ShowSteps
	// Abort: the program ends without the page cleaning up; the running
	// step is stopped and dialogs answered by the page itself.
	Abort
	// DialogOpened: the engine asks something (Dialog is its number).
	DialogOpened
	// DialogAnswered: the person answered engine dialog Dialog in it.
	DialogAnswered
	// DialogExpired: the deadline booth mode gave engine dialog Dialog
	// passed.
	DialogExpired
	// Cancel: esc over the shown dialog (its safe answer; for the quit
	// question, "keep running").
	Cancel
)

var eventNames = [...]string{"run", "run all", "open shell", "shell exited", "check", "step ended", "skip", "open vars",
	"vars applied", "vars cancelled", "vars failed", "quit", "quit answer", "interrupt", "back", "cleanup asked",
	"cleanup done", "finish asked", "results written", "start over", "toggle dashboard", "toggle compare", "show steps", "abort", "dialog opened", "dialog answered",
	"dialog expired", "cancel"}

func (k EventKind) String() string {
	if k < 0 || int(k) >= len(eventNames) {
		return "event?"
	}
	return eventNames[k]
}

// EventKinds lists every event kind, for tables and tests.
var EventKinds = []EventKind{Run, RunAll, OpenShell, ShellExited, Check, StepEnded, Skip, OpenVars, VarsApplied,
	VarsCancelled, VarsFailed, Quit, QuitAnswer, Interrupt, Back, CleanupAsked, CleanupDone, FinishAsked, ResultsWritten,
	StartOver, ToggleDashboard, ToggleCompare, ShowSteps, Abort, DialogOpened, DialogAnswered, DialogExpired, Cancel}

// ShellEnd is how a task step's shell ended.
type ShellEnd int

// How a shell ended.
const (
	// ShellOK: it ran and exited (whatever its status): check the work.
	ShellOK ShellEnd = iota
	// ShellNotRun: it could not be opened or run.
	ShellNotRun
	// ShellSSHFailed: ssh could not connect (exit status 255).
	ShellSSHFailed
)

// Event is one thing that happened, with what the transition needs of it.
type Event struct {
	Kind EventKind
	// Step is the step the event is about (the selected one for keys).
	Step int
	// Status is a StepEnded's.
	Status results.Status
	// All is OpenShell's "then run all".
	All bool
	// Shell is ShellExited's.
	Shell ShellEnd
	// Redo is VarsApplied's.
	Redo int
	// Yes is QuitAnswer's.
	Yes bool
	// By is Interrupt's.
	By string
	// Then is CleanupAsked's and CleanupDone's.
	Then Then
	// OK and Benches are ResultsWritten's: written, and with benches to
	// compare.
	OK, Benches bool
	// Dialog is DialogOpened's, DialogAnswered's and DialogExpired's.
	Dialog Dialog
}

// EffectKind is something for the page to do.
type EffectKind int

// The effects.
const (
	// StartStep: run Step (RunStep) in the background; StepEnded follows.
	StartStep EffectKind = iota
	// CheckStep: run task Step's check (CheckTask); StepEnded follows.
	CheckStep
	// RunShell: hand the terminal to task Step's shell; ShellExited follows.
	RunShell
	// ShowVars: open the variables form at Step.
	ShowVars
	// AskToQuit: open the quit dialog (QuitDialog) over running Step.
	AskToQuit
	// AnswerDialog: answer engine dialog Dialog for the person, which
	// closes it: its safe answer (refuse, no, cancel), or with Auto the
	// answer booth mode set for its deadline.
	AnswerDialog
	// Cleanup: stop the running step, close the form, run the lab's
	// cleanup (the AnswerDialog effects that follow close the open
	// dialogs); when By is set, record the run as left, interrupted by
	// By. CleanupDone{Then} follows.
	Cleanup
	// WriteResults: write the run's results; Finished follows.
	WriteResults
	// SkipStep: mark Step skipped.
	SkipStep
	// Select: select Step; Hold is the step that just ended, whose output
	// stays shown until Step has its own (-1: none).
	Select
	// LoadFigures: the compare view reads the session's results again.
	LoadFigures
	// CancelStep: stop the running step, without a cleanup (the program
	// is ending; the AnswerDialog effects that follow close the open
	// dialogs).
	CancelStep
	// EmitQuit, EmitBack, EmitRestart, EmitStartOver: tell the root.
	EmitQuit
	EmitBack
	EmitRestart
	EmitStartOver
)

var effectNames = [...]string{"start step", "check step", "run shell", "show vars", "ask to quit", "answer dialog", "cleanup",
	"write results", "skip step", "select", "load figures", "cancel step", "emit quit", "emit back", "emit restart",
	"emit start over"}

func (k EffectKind) String() string {
	if k < 0 || int(k) >= len(effectNames) {
		return "effect?"
	}
	return effectNames[k]
}

// Effect is one thing for the page to do, in order.
type Effect struct {
	Kind   EffectKind
	Step   int
	Hold   int
	Then   Then
	By     string
	Dialog Dialog
	// Auto is AnswerDialog's: the deadline's answer, not the safe one.
	Auto bool
}

// NoticeKind is what the status line should say after a transition.
type NoticeKind int

// The notices. The page words them (it has the styles and the key map).
const (
	// Keep: leave the status line as it is.
	Keep NoticeKind = iota
	// Clear: a step starts; the status line says so itself.
	Clear
	// DashboardKey: a dashboard step starts; d shows it.
	DashboardKey
	// AlreadyRunning: a step runs or the page is busy; nothing started.
	AlreadyRunning
	// RunningNoBack: esc while a step runs.
	RunningNoBack
	// RunningNoSkip: s while a step runs.
	RunningNoSkip
	// RunningNoVars: v while a step runs.
	RunningNoVars
	// NoVars: v in a lab without variables.
	NoVars
	// StepPassed: Step ended (Status), Next is selected.
	StepPassed
	// TaskWaits: run all waits at task Step.
	TaskWaits
	// StepInterrupted: Step was stopped.
	StepInterrupted
	// StepFailed: Step failed on attempt Attempt.
	StepFailed
	// Skipped: Step was skipped.
	Skipped
	// RunIsFinished: a key that would change a finished run.
	RunIsFinished
	// FormCancelled: the form closed; Runs says it would have run Step.
	FormCancelled
	// CleanupFinished: the cleanup returned and the page stays.
	CleanupFinished
	// Busy: the page is cleaning up or writing results; the key waits.
	Busy
)

var noticeNames = [...]string{"keep", "clear", "dashboard key", "already running", "running: no back",
	"running: no skip", "running: no vars", "no vars", "step passed", "task waits", "step interrupted",
	"step failed", "skipped", "run is finished", "form cancelled", "cleanup finished", "busy"}

func (k NoticeKind) String() string {
	if k < 0 || int(k) >= len(noticeNames) {
		return "notice?"
	}
	return noticeNames[k]
}

// Notice is what the status line should say.
type Notice struct {
	Kind    NoticeKind
	Step    int
	Next    int
	Attempt int
	Status  results.Status
	// Runs is FormCancelled's: the form would have run the step.
	Runs bool
	// Task is StepFailed's: the step is a task step.
	Task bool
}
