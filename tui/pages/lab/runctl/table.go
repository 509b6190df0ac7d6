package runctl

import (
	"maps"
	"slices"

	"github.com/dpulab/dpulab/steps/results"
)

// What the run records as having interrupted it when the page is left by
// a key (Interrupt events name their own: a signal, Ctrl+C).
const (
	ByQuitKey = "q in the TUI"
	ByBackKey = "leaving the lab in the TUI"
)

// rule is one allowed transition: it changes s and says what to do and say.
type rule func(l Lab, s *State, ev Event) ([]Effect, Notice)

type cell struct {
	p Phase
	e EventKind
}

// transitions is the table of allowed transitions: (phase, event) → rule.
// An event a phase has no rule for is ignored (Next says so with a Busy
// notice while the page is busy, else silently: the event is stale, like a
// step end of a run already replaced, or cannot reach the phase, like a
// key while the form has the keyboard).
var transitions = table()

var (
	atRest  = []Phase{Idle, Failed, Interrupted, Finished}
	running = []Phase{Running, Asking, AskQuit}
	// shown: the phases whose views take the view keys (the form and the
	// shell have the keyboard; a busy page ignores them).
	shown = append(append([]Phase{Review}, atRest...), running...)
	// live: every phase in which the page is still the lab's.
	live = append(append([]Phase{Vars, Shell, Finishing, CleaningUp, Review}, atRest...), running...)
)

func table() map[cell]rule {
	t := map[cell]rule{}
	on := func(ps []Phase, es []EventKind, r rule) {
		for _, p := range ps {
			for _, e := range es {
				if _, dup := t[cell{p, e}]; dup {
					panic("runctl: two rules for " + p.String() + " × " + e.String()) // a programming error, at init
				}
				t[cell{p, e}] = r
			}
		}
	}
	one := func(p Phase) []Phase { return []Phase{p} }
	ev := func(es ...EventKind) []EventKind { return es }

	// At rest: a step may start, the person may leave.
	on(atRest, ev(Run), func(l Lab, s *State, ev Event) ([]Effect, Notice) { return start(l, s, ev.Step) })
	on(atRest, ev(RunAll), func(l Lab, s *State, ev Event) ([]Effect, Notice) {
		s.All = true
		return start(l, s, ev.Step)
	})
	on(atRest, ev(OpenShell), openShell)
	on(atRest, ev(Check), func(l Lab, s *State, ev Event) ([]Effect, Notice) { return begin(l, s, CheckStep, ev.Step) })
	on(atRest, ev(Skip), skip)
	on(atRest, ev(OpenVars), openVars)
	on(atRest, ev(FinishAsked), func(_ Lab, s *State, _ Event) ([]Effect, Notice) { return finish(s), Notice{} })
	on(append(one(Review), atRest...), ev(Quit), func(_ Lab, s *State, _ Event) ([]Effect, Notice) {
		return cleanup(s, ThenQuit, ByQuitKey), Notice{}
	})
	on(append(one(Review), atRest...), ev(Back), func(_ Lab, s *State, _ Event) ([]Effect, Notice) {
		if s.View != ViewSteps {
			s.View = ViewSteps
			return nil, Notice{}
		}
		return cleanup(s, ThenBack, ByBackKey), Notice{}
	})
	// A step of a run whose cleanup returned before the step's own end.
	on(atRest, ev(StepEnded), func(_ Lab, s *State, ev Event) ([]Effect, Notice) {
		if ev.Step == s.Running {
			s.Running = -1
		}
		return nil, Notice{}
	})

	// A step runs: starting another is refused with a word why; q asks.
	on(running, ev(Run, RunAll, Check, OpenShell), refuse(AlreadyRunning))
	on(running, ev(Skip), refuse(RunningNoSkip))
	on(running, ev(OpenVars), refuse(RunningNoVars))
	// The quit question opens over an engine dialog too: its answer comes
	// first, then the engine's dialog shows again (or gets its safe
	// answer in the cleanup that yes starts).
	on([]Phase{Running, Asking}, ev(Quit), func(_ Lab, s *State, _ Event) ([]Effect, Notice) {
		s.Dialogs = append([]Dialog{QuitDialog}, s.Dialogs...)
		s.Phase = AskQuit
		return []Effect{{Kind: AskToQuit, Step: s.Running}}, Notice{}
	})
	on(running, ev(Back), func(_ Lab, s *State, _ Event) ([]Effect, Notice) {
		if s.View != ViewSteps {
			s.View = ViewSteps
			return nil, Notice{}
		}
		return nil, Notice{Kind: RunningNoBack, Step: s.Running}
	})
	on(running, ev(StepEnded), func(l Lab, s *State, ev Event) ([]Effect, Notice) {
		if ev.Step != s.Running {
			return nil, Notice{} // a step of a run stopped and replaced
		}
		// The step's dialogs ask for a step that ended: nobody waits on
		// them. The quit question stays.
		fx := answerAll(s)
		more, n := stepEnded(l, s, ev)
		return append(fx, more...), n
	})
	// The quit dialog stays open when the step ends before the answer;
	// its answer counts wherever the page is then.
	on(live, ev(QuitAnswer), quitAnswer)

	// Engine dialogs. A running step's question is shown (stacked under
	// the ones open), and so are those of a cleanup or of the writing of
	// results; anywhere else nothing of the engine runs, so the question
	// is of a call that returned: it gets its safe answer unseen.
	on(append(running, CleaningUp, Finishing), ev(DialogOpened), func(_ Lab, s *State, ev Event) ([]Effect, Notice) {
		if ev.Dialog == QuitDialog || slices.Contains(s.Dialogs, ev.Dialog) {
			return nil, Notice{}
		}
		s.Dialogs = append(s.Dialogs, ev.Dialog)
		settle(s)
		return nil, Notice{}
	})
	on(append([]Phase{Vars, Shell, Review, Left}, atRest...), ev(DialogOpened), func(_ Lab, _ *State, ev Event) ([]Effect, Notice) {
		if ev.Dialog == QuitDialog {
			return nil, Notice{}
		}
		return []Effect{{Kind: AnswerDialog, Dialog: ev.Dialog}}, Notice{}
	})
	on(live, ev(DialogAnswered), func(_ Lab, s *State, ev Event) ([]Effect, Notice) {
		if ev.Dialog != QuitDialog {
			closeDialog(s, ev.Dialog)
		}
		return nil, Notice{}
	})
	on(live, ev(DialogExpired), func(_ Lab, s *State, ev Event) ([]Effect, Notice) {
		if ev.Dialog == QuitDialog || !closeDialog(s, ev.Dialog) {
			return nil, Notice{}
		}
		return []Effect{{Kind: AnswerDialog, Dialog: ev.Dialog, Auto: true}}, Notice{}
	})
	on(live, ev(Cancel), func(l Lab, s *State, _ Event) ([]Effect, Notice) {
		d, ok := s.Shown()
		switch {
		case !ok:
			return nil, Notice{}
		case d == QuitDialog:
			return quitAnswer(l, s, Event{Kind: QuitAnswer})
		}
		closeDialog(s, d)
		return []Effect{{Kind: AnswerDialog, Dialog: d}}, Notice{}
	})

	// The form and the shell.
	on(one(Vars), ev(VarsApplied), varsApplied)
	on(one(Vars), ev(VarsCancelled), func(_ Lab, s *State, _ Event) ([]Effect, Notice) {
		n := Notice{Kind: FormCancelled, Step: s.Step, Runs: s.VarsRuns}
		s.Phase, s.Step, s.VarsRuns, s.All = Idle, -1, false, false
		return nil, n
	})
	on(one(Vars), ev(VarsFailed), func(_ Lab, s *State, _ Event) ([]Effect, Notice) {
		s.Phase, s.Step, s.VarsRuns, s.All = Idle, -1, false, false
		return nil, Notice{}
	})
	on(one(Shell), ev(ShellExited), shellExited)

	// A finished run shown again: nothing runs.
	on(one(Review), ev(Run, RunAll, Skip, OpenShell), refuse(RunIsFinished))
	on(one(Review), ev(StartOver), func(_ Lab, s *State, _ Event) ([]Effect, Notice) {
		s.Phase = Left
		return []Effect{{Kind: EmitStartOver}}, Notice{}
	})

	// Leaving: Ctrl+C, a signal, a driver.
	on(append(append([]Phase{Vars, Shell, Review}, atRest...), running...), ev(Interrupt), func(_ Lab, s *State, ev Event) ([]Effect, Notice) {
		return cleanup(s, ThenQuit, ev.By), Notice{}
	})
	on([]Phase{CleaningUp, Finishing}, ev(Interrupt), func(_ Lab, s *State, ev Event) ([]Effect, Notice) {
		quitAfter(s, ev.By)
		// The cleanup may wait on a question (a password to stop a
		// server): the person wants out, so it goes on without it.
		return answerAll(s), Notice{Kind: Busy}
	})
	on(append(append([]Phase{Vars, Shell}, atRest...), running...), ev(CleanupAsked), func(_ Lab, s *State, ev Event) ([]Effect, Notice) {
		by := ""
		switch ev.Then {
		case ThenQuit:
			by = ByQuitKey
		case ThenBack:
			by = ByBackKey
		}
		return cleanup(s, ev.Then, by), Notice{}
	})
	on(one(CleaningUp), ev(StepEnded), func(_ Lab, s *State, ev Event) ([]Effect, Notice) {
		// The step the cleanup stopped: nothing follows from its end.
		if ev.Step == s.Running {
			s.Running = -1
		}
		return nil, Notice{}
	})
	// A cleanup or the writing of results that returned leaves no
	// question of its own open.
	on(one(CleaningUp), ev(CleanupDone), func(l Lab, s *State, ev Event) ([]Effect, Notice) {
		fx := answerAll(s)
		more, n := cleanupDone(l, s, ev)
		return append(fx, more...), n
	})
	on(one(Finishing), ev(ResultsWritten), func(l Lab, s *State, ev Event) ([]Effect, Notice) {
		fx := answerAll(s)
		more, n := resultsWritten(l, s, ev)
		return append(fx, more...), n
	})

	// Views.
	on(shown, ev(ToggleDashboard), func(_ Lab, s *State, _ Event) ([]Effect, Notice) {
		s.View = toggle(s.View, ViewDashboard)
		return nil, Notice{}
	})
	on(shown, ev(ToggleCompare), func(_ Lab, s *State, _ Event) ([]Effect, Notice) {
		s.View = toggle(s.View, ViewCompare)
		if s.View == ViewCompare && s.Figures == FiguresStale {
			s.Figures = FiguresCurrent
			return []Effect{{Kind: LoadFigures}}, Notice{}
		}
		return nil, Notice{}
	})
	on(live, ev(ShowSteps), func(_ Lab, s *State, _ Event) ([]Effect, Notice) {
		s.View = ViewSteps
		return nil, Notice{}
	})
	on(live, ev(Abort), func(_ Lab, s *State, _ Event) ([]Effect, Notice) {
		s.All = false
		// Stopped first, then answered: as for a cleanup.
		fx := append([]Effect{{Kind: CancelStep}}, answerAll(s)...)
		s.Dialogs = nil
		switch s.Phase {
		case Vars:
			s.Phase, s.Step, s.VarsRuns = Idle, -1, false
		case Asking, AskQuit:
			s.Phase = Running
		}
		return fx, Notice{}
	})
	return t
}

// Allowed reports whether phase p has a rule for event e.
func Allowed(p Phase, e EventKind) bool {
	_, ok := transitions[cell{p, e}]
	return ok
}

// Next is the transition for ev in s: the next state, the effects to
// perform in order, and what the status line should say. An event s's
// phase has no rule for leaves s as it is.
func Next(l Lab, s State, ev Event) (State, []Effect, Notice) {
	r, ok := transitions[cell{s.Phase, ev.Kind}]
	if !ok {
		if s.Busy() != "" && isKey(ev.Kind) {
			return s, nil, Notice{Kind: Busy}
		}
		return s, nil, Notice{}
	}
	s.Attempts = maps.Clone(s.Attempts) // s is the caller's copy; its map too
	s.Dialogs = slices.Clone(s.Dialogs)
	if s.Attempts == nil {
		s.Attempts = map[int]int{}
	}
	fx, n := r(l, &s, ev)
	return s, fx, n
}

// isKey reports whether events of kind k come from a person's key.
func isKey(k EventKind) bool {
	switch k {
	case Run, RunAll, OpenShell, Check, Skip, OpenVars, Quit, Back, StartOver, ToggleDashboard, ToggleCompare:
		return true
	}
	return false
}

func refuse(k NoticeKind) rule {
	return func(_ Lab, s *State, ev Event) ([]Effect, Notice) {
		return nil, Notice{Kind: k, Step: ev.Step, Next: s.Running}
	}
}

func toggle(cur, v View) View {
	if cur == v {
		return ViewSteps
	}
	return v
}

// start runs step i, after the variables form when it is the first step
// that asks for them.
func start(l Lab, s *State, i int) ([]Effect, Notice) {
	if s.Running >= 0 {
		return nil, Notice{Kind: AlreadyRunning, Step: i, Next: s.Running}
	}
	st, ok := l.step(i)
	if !ok {
		return nil, Notice{}
	}
	if !l.Unattended && st.AsksVars && !s.VarsSet && l.HasVars {
		s.Phase, s.Step, s.VarsRuns = Vars, i, true
		return []Effect{{Kind: ShowVars, Step: i}}, Notice{}
	}
	return begin(l, s, StartStep, i)
}

// begin runs step i (kind StartStep or CheckStep).
func begin(l Lab, s *State, kind EffectKind, i int) ([]Effect, Notice) {
	if s.Running >= 0 {
		return nil, Notice{Kind: AlreadyRunning, Step: i, Next: s.Running}
	}
	st, ok := l.step(i)
	if !ok {
		return nil, Notice{}
	}
	if s.WaitTask != i {
		s.WaitTask = -1
	}
	s.Phase, s.Running, s.Step = Running, i, -1
	s.Attempts[i]++
	n := Notice{Kind: Clear, Step: i}
	if st.Dashboard {
		if l.Unattended {
			// Nobody is there to press d: booth mode shows it.
			s.View = ViewDashboard
		} else {
			// The person opens it with d and closes it with d: it never
			// opens on its own under their keys.
			n.Kind = DashboardKey
		}
	}
	return []Effect{{Kind: kind, Step: i}}, n
}

func openShell(l Lab, s *State, ev Event) ([]Effect, Notice) {
	if _, ok := l.step(ev.Step); !ok {
		return nil, Notice{}
	}
	s.Phase, s.Step = Shell, ev.Step
	if ev.All {
		s.WaitTask = ev.Step
	}
	return []Effect{{Kind: RunShell, Step: ev.Step}}, Notice{}
}

func shellExited(l Lab, s *State, ev Event) ([]Effect, Notice) {
	i := s.Step
	s.Phase, s.Step = Idle, -1
	switch ev.Shell {
	case ShellOK:
		return begin(l, s, CheckStep, i)
	case ShellNotRun:
		s.WaitTask = -1
	}
	return nil, Notice{}
}

func skip(l Lab, s *State, ev Event) ([]Effect, Notice) {
	i := ev.Step
	if _, ok := l.step(i); !ok {
		return nil, Notice{}
	}
	s.Phase, s.Step = Idle, -1
	s.Figures = stale(s.Figures)
	fx := []Effect{{Kind: SkipStep, Step: i}, {Kind: Select, Step: i + 1, Hold: -1}}
	if i == len(l.Steps)-1 {
		fx = append(fx, finish(s)...)
	}
	return fx, Notice{Kind: Skipped, Step: i}
}

func openVars(l Lab, s *State, ev Event) ([]Effect, Notice) {
	if !l.HasVars {
		return nil, Notice{Kind: NoVars}
	}
	if s.Running >= 0 {
		return nil, Notice{Kind: RunningNoVars, Next: s.Running}
	}
	s.Phase, s.Step, s.VarsRuns = Vars, ev.Step, false
	return []Effect{{Kind: ShowVars, Step: ev.Step}}, Notice{}
}

func varsApplied(l Lab, s *State, ev Event) ([]Effect, Notice) {
	i, runs := s.Step, s.VarsRuns
	s.Phase, s.Step, s.VarsRuns, s.VarsSet = Idle, -1, false, true
	if ev.Redo >= 0 {
		// Work done before must run again first.
		s.All = false
		return []Effect{{Kind: Select, Step: ev.Redo, Hold: -1}}, Notice{}
	}
	if runs {
		return start(l, s, i)
	}
	return nil, Notice{}
}

// stepEnded goes on from the end of the running step, whose dialogs
// were answered.
func stepEnded(l Lab, s *State, ev Event) ([]Effect, Notice) {
	i := ev.Step
	s.Running = -1
	s.Phase = Idle
	var fx []Effect
	if s.View == ViewCompare {
		// The compare view shown as a step ends shows its figures now.
		s.Figures = FiguresCurrent
		fx = append(fx, Effect{Kind: LoadFigures})
	} else {
		s.Figures = stale(s.Figures)
	}
	if s.View == ViewDashboard && (l.Unattended || ev.Status == results.Failed) {
		// Booth mode's dashboard goes with its step; a person who opened
		// it keeps it, except on a failure, which the steps view explains.
		s.View = ViewSteps
	}
	if s.WaitTask == i && ev.Status == results.Done {
		// The task step "run all" waited at passed: on from here.
		s.WaitTask = -1
		s.All = true
	}
	more, n := after(l, s, i, ev.Status)
	fx = append(fx, more...)
	settle(s) // the next step may start under the open quit question
	return fx, n
}

// settle sets a running phase from the open dialogs: the quit question
// shown, an engine dialog waited on, or neither.
func settle(s *State) {
	if s.Phase != Running && s.Phase != Asking && s.Phase != AskQuit {
		return
	}
	switch {
	case slices.Contains(s.Dialogs, QuitDialog):
		s.Phase = AskQuit
	case len(s.Dialogs) > 0:
		s.Phase = Asking
	default:
		s.Phase = Running
	}
}

// closeDialog closes dialog d, if open.
func closeDialog(s *State, d Dialog) bool {
	i := slices.Index(s.Dialogs, d)
	if i < 0 {
		return false
	}
	s.Dialogs = slices.Delete(s.Dialogs, i, i+1)
	settle(s)
	return true
}

// answerAll gives every open engine dialog its safe answer and closes it;
// the quit question stays.
func answerAll(s *State) []Effect {
	var fx []Effect
	kept := s.Dialogs[:0]
	for _, d := range s.Dialogs {
		if d == QuitDialog {
			kept = append(kept, d)
			continue
		}
		fx = append(fx, Effect{Kind: AnswerDialog, Dialog: d})
	}
	s.Dialogs = kept
	settle(s)
	return fx
}

// quitAnswer is the quit question's answer, wherever the page is then:
// yes quits through a cleanup that records q (once the cleanup or the
// writing of results under way is done); no closes the question.
func quitAnswer(_ Lab, s *State, ev Event) ([]Effect, Notice) {
	if i := slices.Index(s.Dialogs, QuitDialog); i >= 0 {
		s.Dialogs = slices.Delete(s.Dialogs, i, i+1)
	}
	settle(s)
	if !ev.Yes {
		return nil, Notice{}
	}
	if s.Busy() != "" {
		quitAfter(s, ByQuitKey)
		return nil, Notice{Kind: Busy}
	}
	return cleanup(s, ThenQuit, ByQuitKey), Notice{}
}

// quitAfter makes the page quit, recording by, once the cleanup or the
// writing of results under way is done.
func quitAfter(s *State, by string) {
	if s.QuitBy != "" || (s.Phase == CleaningUp && s.Then == ThenQuit) {
		return
	}
	s.QuitBy = by
}

// after is what follows step i's end with status st.
func after(l Lab, s *State, i int, st results.Status) ([]Effect, Notice) {
	switch st {
	case results.Done, results.Skipped:
		next := i + 1
		if next >= len(l.Steps) {
			if l.Unattended {
				s.All = false
				return nil, Notice{} // the driver asks for the results
			}
			return finish(s), Notice{}
		}
		fx := []Effect{{Kind: Select, Step: next, Hold: i}}
		if l.Unattended {
			return fx, Notice{} // the driver runs the next step
		}
		if s.All && l.Steps[next].Task {
			// The trainee's to do: the run waits, and goes on when it
			// passes.
			s.All, s.WaitTask = false, next
			return fx, Notice{Kind: TaskWaits, Step: next}
		}
		if s.All {
			more, n := start(l, s, next)
			return append(fx, more...), n
		}
		return fx, Notice{Kind: StepPassed, Step: i, Next: next, Status: st}
	case results.Interrupted:
		// Stopped by the person or a signal, not failed: it runs again
		// like any step not done.
		s.All = false
		s.Phase, s.Step = Interrupted, i
		return []Effect{{Kind: Select, Step: i, Hold: -1}}, Notice{Kind: StepInterrupted, Step: i}
	case results.Failed:
		s.All = false
		s.Phase, s.Step = Failed, i
		return []Effect{{Kind: Select, Step: i, Hold: -1}},
			Notice{Kind: StepFailed, Step: i, Attempt: s.Attempts[i], Task: l.Steps[i].Task}
	}
	s.All = false
	return nil, Notice{}
}

func finish(s *State) []Effect {
	s.All = false
	s.Phase, s.Step = Finishing, -1
	return []Effect{{Kind: WriteResults}}
}

// cleanup stops what runs and cleans up, then does then; by, when set, is
// recorded as what interrupted the run (only leaving it is recorded: a
// cleanup the page stays after is not the run's end).
func cleanup(s *State, then Then, by string) []Effect {
	if then != ThenQuit && then != ThenBack {
		by = ""
	}
	s.All = false
	// The engine's dialogs get their safe answer, after the cleanup
	// stopped their step: the step ends stopped (interrupted), not
	// refused, and the engine never acts on an answer nobody gave. The
	// quit question has had its answer or is moot.
	fx := append([]Effect{{Kind: Cleanup, Then: then, By: by}}, answerAll(s)...)
	s.Dialogs = nil
	s.Phase, s.Step, s.VarsRuns, s.Then = CleaningUp, -1, false, then
	return fx
}

func cleanupDone(_ Lab, s *State, ev Event) ([]Effect, Notice) {
	then := ev.Then // a driver may have changed what follows on the way
	if s.QuitBy != "" && then != ThenQuit {
		by := s.QuitBy
		s.QuitBy = ""
		if then == ThenBack {
			// The run was left (recorded) already: quit instead.
			s.Phase = Left
			return []Effect{{Kind: EmitQuit}}, Notice{}
		}
		return cleanup(s, ThenQuit, by), Notice{}
	}
	switch then {
	case ThenQuit:
		s.Phase = Left
		return []Effect{{Kind: EmitQuit}}, Notice{}
	case ThenRestart:
		s.Phase = Left
		return []Effect{{Kind: EmitRestart}}, Notice{}
	case ThenBack:
		s.Phase = Left
		return []Effect{{Kind: EmitBack}}, Notice{}
	}
	s.Phase = Idle
	return nil, Notice{Kind: CleanupFinished}
}

func resultsWritten(_ Lab, s *State, ev Event) ([]Effect, Notice) {
	var fx []Effect
	s.Phase = Idle
	if ev.OK {
		s.Phase = Finished
		s.Figures = FiguresCurrent
		fx = append(fx, Effect{Kind: LoadFigures})
		if ev.Benches {
			s.View = ViewCompare
		}
	}
	if s.QuitBy != "" {
		by := s.QuitBy
		s.QuitBy = ""
		fx = append(fx, cleanup(s, ThenQuit, by)...)
	}
	return fx, Notice{}
}

func stale(f Figures) Figures {
	if f == FiguresCurrent || f == FiguresAtOpen {
		return FiguresStale
	}
	return f
}
