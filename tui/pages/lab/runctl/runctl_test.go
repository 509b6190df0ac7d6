package runctl

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/steps/results"
)

// lab is the tests' lab: a read step, a deploy and a bench that ask for the
// variables first (the bench shows the dashboard), a task step, a compare.
var lab = Lab{
	Steps: []Step{
		{},                                // 0 read
		{AsksVars: true},                  // 1 deploy
		{AsksVars: true, Dashboard: true}, // 2 bench
		{Task: true},                      // 3 task
		{AsksVars: true, Dashboard: true}, // 4 compare
	},
	HasVars: true,
}

// base is a typical state of each phase.
func base(p Phase) State {
	s := New(p == Review, true)
	s.Phase = p
	switch p {
	case Running:
		s.Running = 2
	case Asking:
		s.Running, s.Dialogs = 2, []Dialog{1, 2} // two engine dialogs stacked
	case AskQuit:
		s.Running, s.Dialogs = 2, []Dialog{QuitDialog}
	case Vars:
		s.Step, s.VarsRuns = 1, true
	case Shell:
		s.Step = 3
	case Failed:
		s.Step = 1
	case Interrupted:
		s.Step = 2
	case CleaningUp:
		s.Running, s.Then = 2, ThenStay // the bench being stopped
		s.Dialogs = []Dialog{1}         // the cleanup asks for a password
	}
	return s
}

// events are one event of each kind, as the page sends them.
var events = map[EventKind]Event{
	Run:             {Kind: Run, Step: 0},
	RunAll:          {Kind: RunAll, Step: 0},
	OpenShell:       {Kind: OpenShell, Step: 3},
	ShellExited:     {Kind: ShellExited, Step: 3, Shell: ShellOK},
	Check:           {Kind: Check, Step: 3},
	StepEnded:       {Kind: StepEnded, Step: 2, Status: results.Done},
	Skip:            {Kind: Skip, Step: 0},
	OpenVars:        {Kind: OpenVars, Step: 0},
	VarsApplied:     {Kind: VarsApplied, Redo: -1},
	VarsCancelled:   {Kind: VarsCancelled},
	VarsFailed:      {Kind: VarsFailed},
	Quit:            {Kind: Quit},
	QuitAnswer:      {Kind: QuitAnswer, Yes: true},
	Interrupt:       {Kind: Interrupt, By: "SIGTERM"},
	Back:            {Kind: Back},
	CleanupAsked:    {Kind: CleanupAsked, Then: ThenRestart},
	CleanupDone:     {Kind: CleanupDone, Then: ThenStay},
	FinishAsked:     {Kind: FinishAsked},
	ResultsWritten:  {Kind: ResultsWritten, OK: true, Benches: true},
	StartOver:       {Kind: StartOver},
	ToggleDashboard: {Kind: ToggleDashboard},
	ToggleCompare:   {Kind: ToggleCompare},
	ShowSteps:       {Kind: ShowSteps},
	Abort:           {Kind: Abort},
	DialogOpened:    {Kind: DialogOpened, Dialog: 5},
	DialogAnswered:  {Kind: DialogAnswered, Dialog: 1},
	DialogExpired:   {Kind: DialogExpired, Dialog: 1},
	Cancel:          {Kind: Cancel},
}

// want is a cell's expected outcome: the phase, the effects (by name, in
// order), the notice, the view shown; check tests the rest of the state.
type want struct {
	phase  Phase
	fx     string
	notice NoticeKind
	view   View
	check  func(s State) string
}

func runs(step int) func(State) string {
	return func(s State) string {
		if s.Running != step {
			return fmt.Sprintf("running %d, want %d", s.Running, step)
		}
		return ""
	}
}

func cleaning(then Then, by string) func(State) string {
	return func(s State) string {
		if s.Then != then || s.All || len(s.Dialogs) != 0 {
			return fmt.Sprintf("then %v all %v dialogs %v, want then %v, run all off, no dialog", s.Then, s.All, s.Dialogs, then)
		}
		return ""
	}
}

// dialogs checks the open dialogs, the shown one first.
func dialogs(want ...Dialog) func(State) string {
	return func(s State) string {
		if !slices.Equal(s.Dialogs, want) {
			return fmt.Sprintf("dialogs %v, want %v", s.Dialogs, want)
		}
		return ""
	}
}

// all runs every check.
func all(checks ...func(State) string) func(State) string {
	return func(s State) string {
		for _, c := range checks {
			if msg := c(s); msg != "" {
				return msg
			}
		}
		return ""
	}
}

// expected is the whole table: every phase × every event. A cell not
// listed here must leave the state as it was, with no effect.
func expected() map[Phase]map[EventKind]want {
	t := map[Phase]map[EventKind]want{}
	for _, p := range []Phase{Idle, Failed, Interrupted, Finished} {
		t[p] = map[EventKind]want{
			Run:             {phase: Running, fx: "start step", notice: Clear, check: runs(0)},
			RunAll:          {phase: Running, fx: "start step", notice: Clear, check: func(s State) string { return cond(s.All, "run all off") }},
			OpenShell:       {phase: Shell, fx: "run shell"},
			Check:           {phase: Running, fx: "check step", notice: Clear, check: runs(3)},
			StepEnded:       {phase: p}, // not the running step (none): nothing
			Skip:            {phase: Idle, fx: "skip step,select", notice: Skipped},
			OpenVars:        {phase: Vars, fx: "show vars", check: func(s State) string { return cond(!s.VarsRuns && s.Step == 0, "form should apply at step 1") }},
			Quit:            {phase: CleaningUp, fx: "cleanup", check: cleaning(ThenQuit, ByQuitKey)},
			QuitAnswer:      {phase: CleaningUp, fx: "cleanup", check: cleaning(ThenQuit, ByQuitKey)},
			Interrupt:       {phase: CleaningUp, fx: "cleanup", check: cleaning(ThenQuit, "SIGTERM")},
			Back:            {phase: CleaningUp, fx: "cleanup", check: cleaning(ThenBack, ByBackKey)},
			CleanupAsked:    {phase: CleaningUp, fx: "cleanup", check: cleaning(ThenRestart, "")},
			FinishAsked:     {phase: Finishing, fx: "write results"},
			ToggleDashboard: {phase: p, view: ViewDashboard},
			// A resumed run's compare opens on the figures read at open
			// (an earlier attempt's, labelled by the compare view): no
			// step ended here, nothing to read again.
			ToggleCompare: {phase: p, view: ViewCompare},
			ShowSteps:     {phase: p},
			Abort:         {phase: p, fx: "cancel step"},
			// Nothing of the engine runs: a question is of a call that
			// returned, and gets its safe answer unseen.
			DialogOpened:   {phase: p, fx: "answer dialog", check: dialogs()},
			DialogAnswered: {phase: p},
			DialogExpired:  {phase: p},
			Cancel:         {phase: p},
		}
	}
	runningRow := func(p Phase) map[EventKind]want {
		r := map[EventKind]want{
			Run:       {phase: p, notice: AlreadyRunning, check: runs(2)},
			RunAll:    {phase: p, notice: AlreadyRunning, check: runs(2)},
			Check:     {phase: p, notice: AlreadyRunning, check: runs(2)},
			OpenShell: {phase: p, notice: AlreadyRunning, check: runs(2)},
			// The bench passed: the task step after it is selected (the
			// bench's output held) and the compare's figures are stale.
			StepEnded: {phase: Idle, fx: "select", notice: StepPassed, check: func(s State) string {
				return cond(s.Running == -1 && s.Figures == FiguresStale, "running cleared, figures stale")
			}},
			Skip:            {phase: p, notice: RunningNoSkip},
			OpenVars:        {phase: p, notice: RunningNoVars},
			QuitAnswer:      {phase: CleaningUp, fx: "cleanup", check: cleaning(ThenQuit, ByQuitKey)},
			Interrupt:       {phase: CleaningUp, fx: "cleanup", check: cleaning(ThenQuit, "SIGTERM")},
			Back:            {phase: p, notice: RunningNoBack},
			CleanupAsked:    {phase: CleaningUp, fx: "cleanup", check: cleaning(ThenRestart, "")},
			ToggleDashboard: {phase: p, view: ViewDashboard},
			ToggleCompare:   {phase: p, view: ViewCompare},
			ShowSteps:       {phase: p},
			Abort:           {phase: Running, fx: "cancel step", check: all(runs(2), dialogs())},
			DialogAnswered:  {phase: p},
			DialogExpired:   {phase: p},
		}
		switch p {
		case Running:
			r[Quit] = want{phase: AskQuit, fx: "ask to quit", check: all(runs(2), dialogs(QuitDialog))}
			r[DialogOpened] = want{phase: Asking, check: all(runs(2), dialogs(5))}
			r[Cancel] = want{phase: Running}
		case AskQuit:
			// The engine's question waits under the quit question.
			r[DialogOpened] = want{phase: AskQuit, check: dialogs(QuitDialog, 5)}
			r[Cancel] = want{phase: Running, check: all(runs(2), dialogs())} // esc: keep running
		}
		return r
	}
	t[Running] = runningRow(Running)
	t[AskQuit] = runningRow(AskQuit)
	// Asking: bench step 2 waits on engine dialogs 1 (shown) and 2.
	t[Asking] = map[EventKind]want{
		Run:       {phase: Asking, notice: AlreadyRunning, check: runs(2)},
		RunAll:    {phase: Asking, notice: AlreadyRunning, check: runs(2)},
		Check:     {phase: Asking, notice: AlreadyRunning, check: runs(2)},
		OpenShell: {phase: Asking, notice: AlreadyRunning, check: runs(2)},
		// The step ended with its questions open: they get their safe
		// answers and close; it passed, so on as from Running.
		StepEnded: {phase: Idle, fx: "answer dialog,answer dialog,select", notice: StepPassed, check: all(runs(-1), dialogs())},
		Skip:      {phase: Asking, notice: RunningNoSkip},
		OpenVars:  {phase: Asking, notice: RunningNoVars},
		// q over an engine dialog: the quit question in front of it.
		Quit:            {phase: AskQuit, fx: "ask to quit", check: all(runs(2), dialogs(QuitDialog, 1, 2))},
		QuitAnswer:      {phase: CleaningUp, fx: "cleanup,answer dialog,answer dialog", check: cleaning(ThenQuit, ByQuitKey)},
		Interrupt:       {phase: CleaningUp, fx: "cleanup,answer dialog,answer dialog", check: cleaning(ThenQuit, "SIGTERM")},
		Back:            {phase: Asking, notice: RunningNoBack},
		CleanupAsked:    {phase: CleaningUp, fx: "cleanup,answer dialog,answer dialog", check: cleaning(ThenRestart, "")},
		ToggleDashboard: {phase: Asking, view: ViewDashboard},
		ToggleCompare:   {phase: Asking, view: ViewCompare},
		ShowSteps:       {phase: Asking},
		Abort:           {phase: Running, fx: "cancel step,answer dialog,answer dialog", check: all(runs(2), dialogs())},
		DialogOpened:    {phase: Asking, check: dialogs(1, 2, 5)}, // stacked under the shown one
		DialogAnswered:  {phase: Asking, check: dialogs(2)},       // the next one shows
		DialogExpired:   {phase: Asking, fx: "answer dialog", check: dialogs(2)},
		Cancel:          {phase: Asking, fx: "answer dialog", check: dialogs(2)}, // esc: the safe answer
	}
	t[Vars] = map[EventKind]want{
		// The form came before step 2 (deploy): its values set, it runs.
		VarsApplied:   {phase: Running, fx: "start step", notice: Clear, check: func(s State) string { return cond(s.VarsSet && s.Running == 1, "vars set, deploy running") }},
		VarsCancelled: {phase: Idle, notice: FormCancelled},
		VarsFailed:    {phase: Idle},
		Interrupt:     {phase: CleaningUp, fx: "cleanup", check: cleaning(ThenQuit, "SIGTERM")},
		CleanupAsked:  {phase: CleaningUp, fx: "cleanup", check: cleaning(ThenRestart, "")},
		ShowSteps:     {phase: Vars},
		Abort:         {phase: Idle, fx: "cancel step"},
	}
	t[Shell] = map[EventKind]want{
		ShellExited:  {phase: Running, fx: "check step", notice: Clear, check: runs(3)},
		Interrupt:    {phase: CleaningUp, fx: "cleanup", check: cleaning(ThenQuit, "SIGTERM")},
		CleanupAsked: {phase: CleaningUp, fx: "cleanup", check: cleaning(ThenRestart, "")},
		ShowSteps:    {phase: Shell},
		Abort:        {phase: Shell, fx: "cancel step"},
	}
	for _, p := range []Phase{Vars, Shell} {
		// The quit question can outlive its step (run all went on to the
		// form): yes still quits.
		t[p][QuitAnswer] = want{phase: CleaningUp, fx: "cleanup", check: cleaning(ThenQuit, ByQuitKey)}
		t[p][DialogOpened] = want{phase: p, fx: "answer dialog", check: dialogs()}
		t[p][DialogAnswered] = want{phase: p}
		t[p][DialogExpired] = want{phase: p}
		t[p][Cancel] = want{phase: p}
	}
	busy := func(p Phase) map[EventKind]want {
		r := map[EventKind]want{ShowSteps: {phase: p}, Abort: {phase: p, fx: "cancel step"}}
		for _, k := range EventKinds {
			if _, ok := r[k]; !ok && isKey(k) {
				r[k] = want{phase: p, notice: Busy} // ignored, and said why
			}
		}
		return r
	}
	t[Finishing] = busy(Finishing)
	t[Finishing][Interrupt] = want{phase: Finishing, notice: Busy, check: func(s State) string { return cond(s.QuitBy == "SIGTERM", "quit after the results") }}
	t[Finishing][QuitAnswer] = want{phase: Finishing, notice: Busy, check: func(s State) string { return cond(s.QuitBy == ByQuitKey, "quit after the results") }}
	t[Finishing][DialogOpened] = want{phase: Finishing, check: dialogs(5)}
	t[Finishing][DialogAnswered] = want{phase: Finishing}
	t[Finishing][DialogExpired] = want{phase: Finishing}
	t[Finishing][Cancel] = want{phase: Finishing}
	t[Finishing][ResultsWritten] = want{phase: Finished, fx: "load figures", view: ViewCompare, check: func(s State) string {
		return cond(s.Figures == FiguresCurrent, "figures current")
	}}
	// CleaningUp: the cleanup asks for a password (dialog 1).
	t[CleaningUp] = busy(CleaningUp)
	t[CleaningUp][Abort] = want{phase: CleaningUp, fx: "cancel step,answer dialog", check: dialogs()}
	// Ctrl+C: the cleanup goes on without what it asked, then the page quits.
	t[CleaningUp][Interrupt] = want{phase: CleaningUp, fx: "answer dialog", notice: Busy, check: all(dialogs(), func(s State) string { return cond(s.QuitBy == "SIGTERM", "quit after the cleanup") })}
	t[CleaningUp][QuitAnswer] = want{phase: CleaningUp, notice: Busy, check: all(dialogs(1), func(s State) string { return cond(s.QuitBy == ByQuitKey, "quit after the cleanup") })}
	t[CleaningUp][StepEnded] = want{phase: CleaningUp, check: all(runs(-1), dialogs(1))} // the cleanup's question stays
	t[CleaningUp][CleanupDone] = want{phase: Idle, fx: "answer dialog", notice: CleanupFinished, check: dialogs()}
	t[CleaningUp][DialogOpened] = want{phase: CleaningUp, check: dialogs(1, 5)}
	t[CleaningUp][DialogAnswered] = want{phase: CleaningUp, check: dialogs()}
	t[CleaningUp][DialogExpired] = want{phase: CleaningUp, fx: "answer dialog", check: dialogs()}
	t[CleaningUp][Cancel] = want{phase: CleaningUp, fx: "answer dialog", check: dialogs()}
	t[Review] = map[EventKind]want{
		Run:             {phase: Review, notice: RunIsFinished, view: ViewCompare},
		RunAll:          {phase: Review, notice: RunIsFinished, view: ViewCompare},
		Skip:            {phase: Review, notice: RunIsFinished, view: ViewCompare},
		OpenShell:       {phase: Review, notice: RunIsFinished, view: ViewCompare},
		Quit:            {phase: CleaningUp, fx: "cleanup", view: ViewCompare, check: cleaning(ThenQuit, ByQuitKey)},
		Interrupt:       {phase: CleaningUp, fx: "cleanup", view: ViewCompare, check: cleaning(ThenQuit, "SIGTERM")},
		Back:            {phase: Review, view: ViewSteps}, // esc leaves the compare view first
		StartOver:       {phase: Left, fx: "emit start over", view: ViewCompare},
		ToggleDashboard: {phase: Review, view: ViewDashboard},
		ToggleCompare:   {phase: Review, view: ViewSteps},
		ShowSteps:       {phase: Review, view: ViewSteps},
		Abort:           {phase: Review, fx: "cancel step", view: ViewCompare},
		QuitAnswer:      {phase: CleaningUp, fx: "cleanup", view: ViewCompare, check: cleaning(ThenQuit, ByQuitKey)},
		DialogOpened:    {phase: Review, fx: "answer dialog", view: ViewCompare},
		DialogAnswered:  {phase: Review, view: ViewCompare},
		DialogExpired:   {phase: Review, view: ViewCompare},
		Cancel:          {phase: Review, view: ViewCompare},
	}
	t[Left] = map[EventKind]want{DialogOpened: {phase: Left, fx: "answer dialog"}}
	return t
}

func cond(ok bool, what string) string {
	if ok {
		return ""
	}
	return what
}

func names(fx []Effect) string {
	var ns []string
	for _, f := range fx {
		ns = append(ns, f.Kind.String())
	}
	return strings.Join(ns, ",")
}

// TestTransitionTable: every phase × every event gives the expected phase,
// effects, notice and view; an event a phase has no rule for changes
// nothing.
func TestTransitionTable(t *testing.T) {
	table := expected()
	for _, p := range Phases {
		for _, k := range EventKinds {
			t.Run(p.String()+"/"+k.String(), func(t *testing.T) {
				s := base(p)
				ev := events[k]
				got, fx, n := Next(lab, s, ev)
				w, listed := table[p][k]
				if !listed {
					if Allowed(p, k) {
						t.Fatalf("the machine has a rule the table does not list")
					}
					if got.Phase != s.Phase || got.View != s.View || got.Running != s.Running || len(fx) != 0 || n.Kind != Keep {
						t.Fatalf("ignored event changed %+v to %+v, effects %q, notice %v", s, got, names(fx), n.Kind)
					}
					return
				}
				if got.Phase != w.phase || names(fx) != w.fx || n.Kind != w.notice || got.View != w.view {
					t.Fatalf("got %v, effects %q, notice %v, view %v; want %v, %q, %v, %v",
						got.Phase, names(fx), n.Kind, got.View, w.phase, w.fx, w.notice, w.view)
				}
				if w.check != nil {
					if msg := w.check(got); msg != "" {
						t.Fatalf("%s: state %+v", msg, got)
					}
				}
				if i := slices.IndexFunc(fx, func(f Effect) bool { return f.Kind == Cleanup }); i >= 0 {
					// What the run records as having ended it: the key,
					// the signal, or nothing when the page stays.
					by := map[EventKind]string{Quit: ByQuitKey, QuitAnswer: ByQuitKey, Interrupt: "SIGTERM", Back: ByBackKey}[k]
					if fx[i].By != by || fx[i].Then != got.Then {
						t.Fatalf("cleanup records %q then %v, want %q then %v", fx[i].By, fx[i].Then, by, got.Then)
					}
				}
			})
		}
	}
}

// TestNextNeverPanics: odd steps in every phase are ignored or refused.
func TestNextNeverPanics(t *testing.T) {
	for _, p := range Phases {
		for _, k := range EventKinds {
			for _, step := range []int{-1, 99} {
				ev := events[k]
				ev.Step, ev.Redo = step, step
				s := base(p)
				s.Step = step
				s.Attempts = nil
				got, fx, _ := Next(lab, s, ev)
				for _, f := range fx {
					if (f.Kind == StartStep || f.Kind == CheckStep || f.Kind == RunShell) && (f.Step < 0 || f.Step >= len(lab.Steps)) {
						t.Errorf("%v × %v step %d: %v of step %d", p, k, step, f.Kind, f.Step)
					}
				}
				if got.Running >= len(lab.Steps) {
					t.Errorf("%v × %v step %d: running %d", p, k, step, got.Running)
				}
			}
		}
	}
}

// step is one event of a scenario and what must follow it.
type step struct {
	ev     Event
	phase  Phase
	fx     string
	notice NoticeKind
}

// play feeds the scenario's events one after the other, failing at the
// first outcome other than the one given, and returns the last state.
func play(t *testing.T, l Lab, s State, steps []step) State {
	t.Helper()
	for i, st := range steps {
		var fx []Effect
		var n Notice
		s, fx, n = Next(l, s, st.ev)
		if s.Phase != st.phase || names(fx) != st.fx || n.Kind != st.notice {
			t.Fatalf("step %d (%v): got %v, %q, %v; want %v, %q, %v", i, st.ev.Kind, s.Phase, names(fx), n.Kind, st.phase, st.fx, st.notice)
		}
	}
	return s
}

func ended(i int, st results.Status) Event { return Event{Kind: StepEnded, Step: i, Status: st} }

// TestQuitEndsCleanly: q at rest and the quit dialog's yes run the cleanup
// that records the run as left by q, then quit; Ctrl+C while cleaning up
// or writing results quits once that is done, recording the signal; a
// quit never ends the program without a cleanup that recorded it.
func TestQuitEndsCleanly(t *testing.T) {
	t.Run("q at rest", func(t *testing.T) {
		play(t, lab, New(false, false), []step{
			{Event{Kind: Quit}, CleaningUp, "cleanup", Keep},
			{Event{Kind: CleanupDone, Then: ThenQuit}, Left, "emit quit", Keep},
		})
	})
	t.Run("q while a step runs, then yes", func(t *testing.T) {
		play(t, lab, New(false, false), []step{
			{Event{Kind: Run, Step: 0}, Running, "start step", Clear},
			{Event{Kind: Quit}, AskQuit, "ask to quit", Keep},
			{Event{Kind: QuitAnswer, Yes: true}, CleaningUp, "cleanup", Keep},
			{ended(0, results.Interrupted), CleaningUp, "", Keep},
			{Event{Kind: CleanupDone, Then: ThenQuit}, Left, "emit quit", Keep},
		})
	})
	t.Run("q while a step runs, then no, and the step ends", func(t *testing.T) {
		play(t, lab, New(false, false), []step{
			{Event{Kind: Run, Step: 0}, Running, "start step", Clear},
			{Event{Kind: Quit}, AskQuit, "ask to quit", Keep},
			{Event{Kind: QuitAnswer}, Running, "", Keep},
			{ended(0, results.Done), Idle, "select", StepPassed},
		})
	})
	t.Run("the step ends before the answer; yes still quits", func(t *testing.T) {
		play(t, lab, New(false, false), []step{
			{Event{Kind: Run, Step: 0}, Running, "start step", Clear},
			{Event{Kind: Quit}, AskQuit, "ask to quit", Keep},
			{ended(0, results.Done), Idle, "select", StepPassed},
			{Event{Kind: QuitAnswer, Yes: true}, CleaningUp, "cleanup", Keep},
		})
	})
	t.Run("Ctrl+C while writing results", func(t *testing.T) {
		s := play(t, lab, New(false, false), []step{
			{Event{Kind: FinishAsked}, Finishing, "write results", Keep},
			{Event{Kind: Interrupt, By: "Ctrl+C in the TUI"}, Finishing, "", Busy},
			{Event{Kind: ResultsWritten, OK: true}, CleaningUp, "load figures,cleanup", Keep},
		})
		if s.Then != ThenQuit || s.QuitBy != "" {
			t.Fatalf("then %v, pending %q", s.Then, s.QuitBy)
		}
	})
	t.Run("Ctrl+C while cleaning up to stay", func(t *testing.T) {
		s := New(false, false)
		s, fx, _ := Next(lab, s, Event{Kind: CleanupAsked, Then: ThenStay})
		if fx[0].By != "" {
			t.Fatalf("a cleanup the page stays after recorded %q", fx[0].By)
		}
		s, _, _ = Next(lab, s, Event{Kind: Interrupt, By: "SIGHUP"})
		s, fx, _ = Next(lab, s, Event{Kind: CleanupDone, Then: ThenStay})
		if s.Phase != CleaningUp || names(fx) != "cleanup" || fx[0].By != "SIGHUP" || fx[0].Then != ThenQuit {
			t.Fatalf("got %v %+v: want a quitting cleanup recording SIGHUP", s.Phase, fx)
		}
		s, fx, _ = Next(lab, s, Event{Kind: CleanupDone, Then: ThenQuit})
		if s.Phase != Left || names(fx) != "emit quit" {
			t.Fatalf("got %v %q", s.Phase, names(fx))
		}
	})
	t.Run("Ctrl+C while leaving the lab", func(t *testing.T) {
		play(t, lab, New(false, false), []step{
			{Event{Kind: Back}, CleaningUp, "cleanup", Keep},
			{Event{Kind: Interrupt, By: "SIGTERM"}, CleaningUp, "", Busy},
			// Leaving recorded the run already: quit instead of the picker.
			{Event{Kind: CleanupDone, Then: ThenBack}, Left, "emit quit", Keep},
		})
	})
	t.Run("booth: a driver turns the quit into a stay", func(t *testing.T) {
		// Booth mode rewrites CleanupDone{Quit} to Stay to write its loop's
		// record first: the page stays, and no second cleanup follows.
		l := lab
		l.Unattended = true
		play(t, l, New(false, false), []step{
			{Event{Kind: Interrupt, By: "SIGTERM"}, CleaningUp, "cleanup", Keep},
			{Event{Kind: CleanupDone, Then: ThenStay}, Idle, "", CleanupFinished},
			{Event{Kind: FinishAsked}, Finishing, "write results", Keep},
		})
	})
}

// TestResumeShowsCurrentFigures: a resumed run opens with the results read
// at open, an earlier attempt's, which the compare view shows labelled;
// once a step ends here the compare view reads them again before it shows
// them (the stale compare figures after a resume), at once when it is shown
// as the step ends.
func TestResumeShowsCurrentFigures(t *testing.T) {
	s := New(false, true) // resumed: earlier benches in the results
	s.VarsSet = true
	if s.Figures != FiguresAtOpen || s.View != ViewSteps {
		t.Fatalf("opened with %v in %v", s.Figures, s.View)
	}
	s = play(t, lab, s, []step{
		{Event{Kind: ToggleCompare}, Idle, "", Keep}, // the earlier attempt's, labelled
		{Event{Kind: ToggleCompare}, Idle, "", Keep},
		{Event{Kind: Run, Step: 4}, Running, "start step", DashboardKey},
		{ended(4, results.Done), Finishing, "write results", Keep},
	})
	if s.Figures != FiguresStale {
		t.Fatalf("figures %v after the compare ran here, want stale", s.Figures)
	}
	// Results written: this attempt's figures, compare view in front.
	s = play(t, lab, s, []step{{Event{Kind: ResultsWritten, OK: true, Benches: true}, Finished, "load figures", Keep}})
	if s.View != ViewCompare || s.Figures != FiguresCurrent {
		t.Fatalf("view %v figures %v", s.View, s.Figures)
	}

	t.Run("compare opened after a step ended", func(t *testing.T) {
		s := New(false, true)
		s = play(t, lab, s, []step{
			{Event{Kind: Run, Step: 0}, Running, "start step", Clear},
			{ended(0, results.Done), Idle, "select", StepPassed},
			{Event{Kind: ToggleCompare}, Idle, "load figures", Keep},
			{Event{Kind: ToggleCompare}, Idle, "", Keep},
			{Event{Kind: ToggleCompare}, Idle, "", Keep}, // current still: not read again
		})
		if s.Figures != FiguresCurrent {
			t.Fatalf("figures %v", s.Figures)
		}
	})
	t.Run("compare shown as a step ends", func(t *testing.T) {
		s := New(false, true)
		s = play(t, lab, s, []step{
			{Event{Kind: Run, Step: 0}, Running, "start step", Clear},
			{Event{Kind: ToggleCompare}, Running, "", Keep},
			{ended(0, results.Failed), Failed, "load figures,select", StepFailed},
		})
		if s.View != ViewCompare || s.Figures != FiguresCurrent {
			t.Fatalf("view %v figures %v", s.View, s.Figures)
		}
	})
	t.Run("skipping makes them stale too", func(t *testing.T) {
		s := play(t, lab, New(false, true), []step{{Event{Kind: Skip, Step: 0}, Idle, "skip step,select", Skipped}})
		if s.Figures != FiguresStale {
			t.Fatalf("figures %v", s.Figures)
		}
	})
}

// TestStepEnds: what follows each way a step ends, and what each view
// shows after it.
func TestStepEnds(t *testing.T) {
	t.Run("failed twice counts attempts; the dashboard gives way to the steps view", func(t *testing.T) {
		s := New(false, false)
		s.VarsSet = true
		s = play(t, lab, s, []step{
			{Event{Kind: Run, Step: 2}, Running, "start step", DashboardKey},
			{Event{Kind: ToggleDashboard}, Running, "", Keep},
			{ended(2, results.Failed), Failed, "select", StepFailed},
		})
		if s.View != ViewSteps || s.Step != 2 {
			t.Fatalf("view %v step %d", s.View, s.Step)
		}
		_, _, n := Next(lab, play(t, lab, s, []step{{Event{Kind: Run, Step: 2}, Running, "start step", DashboardKey}}), ended(2, results.Failed))
		if n.Attempt != 2 {
			t.Fatalf("attempt %d, want 2", n.Attempt)
		}
	})
	t.Run("a passed bench keeps the dashboard the person opened", func(t *testing.T) {
		s := New(false, false)
		s.VarsSet = true
		s = play(t, lab, s, []step{
			{Event{Kind: Run, Step: 2}, Running, "start step", DashboardKey},
			{Event{Kind: ToggleDashboard}, Running, "", Keep},
			{ended(2, results.Done), Idle, "select", StepPassed},
		})
		if s.View != ViewDashboard {
			t.Fatalf("view %v", s.View)
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		s := play(t, lab, New(false, false), []step{
			{Event{Kind: RunAll, Step: 0}, Running, "start step", Clear},
			{ended(0, results.Interrupted), Interrupted, "select", StepInterrupted},
		})
		if s.All || s.Step != 0 {
			t.Fatalf("run all %v step %d", s.All, s.Step)
		}
	})
	t.Run("run all: the form first, then on until the task step waits, then on after it passes", func(t *testing.T) {
		s := play(t, lab, New(false, false), []step{
			{Event{Kind: RunAll, Step: 0}, Running, "start step", Clear},
			{ended(0, results.Done), Vars, "select,show vars", Keep}, // deploy asks for the variables
			{Event{Kind: VarsApplied, Redo: -1}, Running, "start step", Clear},
			{ended(1, results.Done), Running, "select,start step", DashboardKey},
			{ended(2, results.Skipped), Idle, "select", TaskWaits},
			{Event{Kind: OpenShell, Step: 3}, Shell, "run shell", Keep},
			{Event{Kind: ShellExited, Step: 3}, Running, "check step", Clear},
			{ended(3, results.Failed), Failed, "select", StepFailed}, // waits on: the trainee tries again
			{Event{Kind: Check, Step: 3}, Running, "check step", Clear},
			{ended(3, results.Done), Running, "select,start step", DashboardKey},
			{ended(4, results.Done), Finishing, "write results", Keep},
		})
		if s.All {
			t.Fatal("run all still on after the last step")
		}
	})
	t.Run("the quit dialog stays over the next step of run all", func(t *testing.T) {
		s := New(false, false)
		s.VarsSet = true
		play(t, lab, s, []step{
			{Event{Kind: RunAll, Step: 1}, Running, "start step", Clear},
			{Event{Kind: Quit}, AskQuit, "ask to quit", Keep},
			{ended(1, results.Done), AskQuit, "select,start step", DashboardKey},
			{Event{Kind: QuitAnswer}, Running, "", Keep},
		})
	})
	t.Run("booth: the dashboard shows by itself and goes with its step; the driver goes on", func(t *testing.T) {
		l := lab
		l.Unattended = true
		s := play(t, l, New(false, false), []step{
			{Event{Kind: Run, Step: 2}, Running, "start step", Clear}, // no form at the booth
		})
		if s.View != ViewDashboard {
			t.Fatalf("view %v", s.View)
		}
		s = play(t, l, s, []step{{ended(2, results.Done), Idle, "select", Keep}})
		if s.View != ViewSteps {
			t.Fatalf("view %v", s.View)
		}
		s.Running = 4
		s.Phase = Running
		play(t, l, s, []step{{ended(4, results.Done), Idle, "", Keep}}) // the driver asks for the results
	})
	t.Run("a step of a replaced run is not ours", func(t *testing.T) {
		s := play(t, lab, New(false, false), []step{{Event{Kind: Run, Step: 0}, Running, "start step", Clear}})
		play(t, lab, s, []step{{ended(3, results.Done), Running, "", Keep}})
	})
	t.Run("cleanup returned before the stopped step's end", func(t *testing.T) {
		s := play(t, lab, New(false, false), []step{
			{Event{Kind: Run, Step: 0}, Running, "start step", Clear},
			{Event{Kind: CleanupAsked, Then: ThenStay}, CleaningUp, "cleanup", Keep},
			{Event{Kind: CleanupDone, Then: ThenStay}, Idle, "", CleanupFinished},
			{Event{Kind: Run, Step: 0}, Idle, "", AlreadyRunning},
			{ended(0, results.Interrupted), Idle, "", Keep},
			{Event{Kind: Run, Step: 0}, Running, "start step", Clear},
		})
		if s.Running != 0 {
			t.Fatalf("running %d", s.Running)
		}
	})
}

// TestVariablesForm: the form before the first step that asks for it, and
// from v; a change that redoes finished work selects it and runs nothing.
func TestVariablesForm(t *testing.T) {
	s := play(t, lab, New(false, false), []step{
		{Event{Kind: Run, Step: 1}, Vars, "show vars", Keep},
		{Event{Kind: VarsCancelled}, Idle, "", FormCancelled},
		{Event{Kind: Run, Step: 1}, Vars, "show vars", Keep},
		{Event{Kind: VarsApplied, Redo: -1}, Running, "start step", Clear},
		{ended(1, results.Done), Idle, "select", StepPassed},
		{Event{Kind: Run, Step: 2}, Running, "start step", DashboardKey}, // set once: no form again
		{ended(2, results.Done), Idle, "select", StepPassed},
		{Event{Kind: OpenVars, Step: 3}, Vars, "show vars", Keep},
	})
	_, fx, _ := Next(lab, s, Event{Kind: VarsApplied, Redo: 1})
	if names(fx) != "select" || fx[0].Step != 1 {
		t.Fatalf("redo: %+v", fx)
	}
	if _, _, n := Next(Lab{Steps: lab.Steps}, New(false, false), Event{Kind: OpenVars}); n.Kind != NoVars {
		t.Fatalf("a lab without variables: %v", n.Kind)
	}
}

// TestReview: a finished run shown again runs nothing; R starts over.
func TestReview(t *testing.T) {
	s := New(true, true)
	if s.Phase != Review || s.View != ViewCompare {
		t.Fatalf("opened %v in %v", s.Phase, s.View)
	}
	s = New(true, false)
	if s.View != ViewSteps {
		t.Fatalf("a review without benches opened in %v", s.View)
	}
	play(t, lab, s, []step{
		{Event{Kind: Run, Step: 0}, Review, "", RunIsFinished},
		{Event{Kind: OpenShell, Step: 3}, Review, "", RunIsFinished},
		{Event{Kind: StartOver}, Left, "emit start over", Keep},
		{Event{Kind: Run, Step: 0}, Left, "", Keep},
	})
}

// answers is what the AnswerDialog effects of fx answer: dialog numbers,
// "auto" marking the deadline's answer.
func answers(fx []Effect) string {
	var as []string
	for _, f := range fx {
		if f.Kind == AnswerDialog {
			a := fmt.Sprint(f.Dialog)
			if f.Auto {
				a += " auto"
			}
			as = append(as, a)
		}
	}
	return strings.Join(as, ",")
}

// TestDialogs: the engine's dialogs as a running step asks, stacked; the
// quit question over them; what each closes, and which answers the page
// gives on the person's behalf (the safe one, or booth mode's at its
// deadline).
func TestDialogs(t *testing.T) {
	opened := func(d Dialog) Event { return Event{Kind: DialogOpened, Dialog: d} }
	running := func() State {
		return play(t, lab, New(false, false), []step{{Event{Kind: Run, Step: 0}, Running, "start step", Clear}})
	}
	t.Run("stacked, answered in turn, q and esc over them", func(t *testing.T) {
		s := play(t, lab, running(), []step{
			{opened(1), Asking, "", Keep},
			{opened(2), Asking, "", Keep},
			{Event{Kind: Quit}, AskQuit, "ask to quit", Keep},
			{Event{Kind: Cancel}, Asking, "", Keep}, // esc on the quit question: keep running
			{Event{Kind: DialogAnswered, Dialog: 1}, Asking, "", Keep},
		})
		if d, _ := s.Shown(); d != 2 || s.NextDialog() != 3 {
			t.Fatalf("shown %d, next %d: want dialog 2 shown, 3 next", d, s.NextDialog())
		}
		s, fx, _ := Next(lab, s, Event{Kind: Cancel})
		if s.Phase != Running || answers(fx) != "2" || len(s.Dialogs) != 0 {
			t.Fatalf("esc: %v, answered %q, dialogs %v", s.Phase, answers(fx), s.Dialogs)
		}
	})
	t.Run("q over a dialog, then yes: its safe answer, and the cleanup records q", func(t *testing.T) {
		s := play(t, lab, running(), []step{
			{opened(1), Asking, "", Keep},
			{Event{Kind: Quit}, AskQuit, "ask to quit", Keep},
			{Event{Kind: QuitAnswer}, Asking, "", Keep}, // no: the dialog shows again
			{Event{Kind: Quit}, AskQuit, "ask to quit", Keep},
		})
		s, fx, _ := Next(lab, s, Event{Kind: QuitAnswer, Yes: true})
		if s.Phase != CleaningUp || answers(fx) != "1" || fx[0].Kind != Cleanup || fx[0].By != ByQuitKey || fx[0].Then != ThenQuit {
			t.Fatalf("yes: %v, %+v", s.Phase, fx)
		}
	})
	t.Run("Ctrl+C over a dialog", func(t *testing.T) {
		s := play(t, lab, running(), []step{{opened(1), Asking, "", Keep}, {opened(2), Asking, "", Keep}})
		s, fx, _ := Next(lab, s, Event{Kind: Interrupt, By: "Ctrl+C in the TUI"})
		// Stopped before answered: the step ends interrupted, not refused.
		if s.Phase != CleaningUp || answers(fx) != "1,2" || fx[0].Kind != Cleanup || fx[0].By != "Ctrl+C in the TUI" {
			t.Fatalf("Ctrl+C: %v, %+v", s.Phase, fx)
		}
	})
	t.Run("the step ends with a dialog open; a late question is answered unseen", func(t *testing.T) {
		s := play(t, lab, running(), []step{{opened(1), Asking, "", Keep}})
		s, fx, _ := Next(lab, s, ended(0, results.Interrupted))
		if s.Phase != Interrupted || answers(fx) != "1" || len(s.Dialogs) != 0 {
			t.Fatalf("end: %v, %+v, %v", s.Phase, fx, s.Dialogs)
		}
		s, fx, _ = Next(lab, s, opened(1))
		if answers(fx) != "1" || len(s.Dialogs) != 0 {
			t.Fatalf("late question: %+v, %v", fx, s.Dialogs)
		}
	})
	t.Run("booth mode's deadline", func(t *testing.T) {
		s := play(t, lab, running(), []step{{opened(1), Asking, "", Keep}})
		s, fx, _ := Next(lab, s, Event{Kind: DialogExpired, Dialog: 1})
		if s.Phase != Running || answers(fx) != "1 auto" {
			t.Fatalf("deadline: %v, %+v", s.Phase, fx)
		}
		if _, fx, _ = Next(lab, s, Event{Kind: DialogExpired, Dialog: 1}); len(fx) != 0 {
			t.Fatalf("a closed dialog's deadline answered again: %+v", fx)
		}
	})
	t.Run("the quit question outlives its step; run all's next step asks under it", func(t *testing.T) {
		s := New(false, false)
		s.VarsSet = true
		s = play(t, lab, s, []step{
			{Event{Kind: RunAll, Step: 0}, Running, "start step", Clear},
			{Event{Kind: Quit}, AskQuit, "ask to quit", Keep},
			{ended(0, results.Done), AskQuit, "select,start step", Clear},
			{opened(1), AskQuit, "", Keep},
			{Event{Kind: QuitAnswer}, Asking, "", Keep},
		})
		if d, _ := s.Shown(); d != 1 || s.Running != 1 {
			t.Fatalf("shown %d running %d", d, s.Running)
		}
	})
	t.Run("a cleanup asks; it returns with the question open", func(t *testing.T) {
		s := play(t, lab, running(), []step{
			{Event{Kind: CleanupAsked, Then: ThenStay}, CleaningUp, "cleanup", Keep},
			{opened(1), CleaningUp, "", Keep},
			{ended(0, results.Interrupted), CleaningUp, "", Keep},
		})
		if d, ok := s.Shown(); !ok || d != 1 {
			t.Fatal("the cleanup's question is not shown")
		}
		s, fx, _ := Next(lab, s, Event{Kind: CleanupDone, Then: ThenStay})
		if s.Phase != Idle || answers(fx) != "1" {
			t.Fatalf("cleanup done: %v, %+v", s.Phase, fx)
		}
	})
}
