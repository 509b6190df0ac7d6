package lab

import (
	"strings"

	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/steps/results"
	"github.com/dpulab/dpulab/tui/components/markdown"
)

// factSource is what stepFacts asks of the session: a step's plan and its
// text.
type factSource interface {
	Plan(i int) ([]steps.PlannedCommand, error)
	Doc(i int) string
}

// stepFacts is what the page has learnt of each step, by index, beyond
// the step list: the commands it runs (its StepStarted's, else the
// engine's plan, asked once and kept until the variables change), why its
// plan failed, why it failed (this session's StepFinished, or what the
// saved progress says of a step that failed in an earlier session), and
// its text rendered per width. It decides nothing of the run: the page
// tells it what happened.
type stepFacts struct {
	src factSource
	// steps is the step list as shown (its statuses move as steps run).
	steps func() []steps.StepInfo
	// unattended: a task step's text is booth mode's (boothTaskDoc).
	unattended, noColor bool

	plans    map[int][]steps.PlannedCommand
	planErr  map[int]string
	failures map[int]steps.StepFinished
	// savedFailed marks the steps the saved progress says failed, until
	// they run in this session.
	savedFailed map[int]bool
	docs        map[[2]int]string
}

func newStepFacts(src factSource, ss func() []steps.StepInfo, unattended, noColor bool) *stepFacts {
	f := &stepFacts{
		src: src, steps: ss, unattended: unattended, noColor: noColor,
		plans:       map[int][]steps.PlannedCommand{},
		planErr:     map[int]string{},
		failures:    map[int]steps.StepFinished{},
		savedFailed: map[int]bool{},
		docs:        map[[2]int]string{},
	}
	for i, s := range ss() {
		if s.Status == results.Failed {
			f.savedFailed[i] = true
		}
	}
	return f
}

// Commands returns what step i will run: from its StepStarted when it has
// run, else from the engine's plan (nil when it cannot be planned:
// PlanErr says why).
func (f *stepFacts) Commands(i int) []steps.PlannedCommand {
	if c, ok := f.plans[i]; ok {
		return c
	}
	if _, ok := f.planErr[i]; ok || i < 0 || i >= len(f.steps()) {
		return nil
	}
	c, err := f.src.Plan(i)
	if err != nil {
		f.planErr[i] = err.Error()
		return nil
	}
	f.plans[i] = c
	return c
}

// PlanErr is why step i cannot be planned, "" when it can (or was not
// asked yet: Commands asks).
func (f *stepFacts) PlanErr(i int) string { return f.planErr[i] }

// Started records the commands step i's StepStarted names: what it runs,
// whatever the plan said.
func (f *stepFacts) Started(i int, cmds []steps.PlannedCommand) {
	if len(cmds) > 0 {
		f.plans[i] = cmds
		delete(f.planErr, i)
	}
}

// ForgetPlans drops every plan: the variables changed, so they are asked
// again.
func (f *stepFacts) ForgetPlans() {
	f.plans = map[int][]steps.PlannedCommand{}
	f.planErr = map[int]string{}
}

// Finished records a step's StepFinished: why it failed, or, when it did
// not, that it has no failure any more.
func (f *stepFacts) Finished(e steps.StepFinished) {
	if e.Status == results.Failed {
		f.failures[e.Index] = e
		return
	}
	delete(f.failures, e.Index)
}

// Launched forgets every failure of step i: it runs in this session now.
func (f *stepFacts) Launched(i int) {
	delete(f.failures, i)
	delete(f.savedFailed, i)
}

// Skipped forgets this session's failure of step i.
func (f *stepFacts) Skipped(i int) { delete(f.failures, i) }

// Last returns step i's failure in this session, if it failed here.
func (f *stepFacts) Last(i int) (steps.StepFinished, bool) {
	e, ok := f.failures[i]
	return e, ok
}

// Failure is why step i failed: this session's StepFinished, else what the
// saved progress says of a step that failed in an earlier session and
// still shows as failed.
func (f *stepFacts) Failure(i int) (steps.StepFinished, bool) {
	if e, ok := f.failures[i]; ok {
		return e, true
	}
	// Only a step that had failed before this session opened: one that
	// failed here has its StepFinished (on its way through the pump when
	// RunStep's return value comes first).
	ss := f.steps()
	if !f.savedFailed[i] || i < 0 || i >= len(ss) || ss[i].Status != results.Failed {
		return steps.StepFinished{}, false
	}
	return savedFailure(i, ss[i]), true
}

// Earlier reports whether e is a failure from an earlier session.
func (f *stepFacts) Earlier(e steps.StepFinished) bool {
	_, here := f.failures[e.Index]
	return !here && f.savedFailed[e.Index]
}

// savedFailure is a failure from saved progress: the error, host,
// command, hint and last lines the session reports (StepInfo.Failure), or,
// from progress saved before they were kept, only that it failed.
func savedFailure(i int, s steps.StepInfo) steps.StepFinished {
	f := steps.StepFinished{Step: s.ID, Index: i, Status: results.Failed}
	if r := s.Failure; r != nil {
		f.Err, f.Host, f.Cmd, f.Hint, f.Tail = r.Err, r.Host, r.Cmd, r.Hint, r.Tail
		return f
	}
	f.Err = "in an earlier session"
	f.Hint = "That session saved no reason: r runs the step again and shows why if it fails."
	return f
}

// Doc renders step i's markdown with glamour at width w, cached per
// width because glamour is far too slow to run on every frame.
func (f *stepFacts) Doc(i, w int) string {
	ss := f.steps()
	if i < 0 || i >= len(ss) {
		return ""
	}
	if len(f.docs) > 4*len(ss)+16 {
		// Many resizes: forget old widths rather than grow for hours.
		f.docs = map[[2]int]string{}
	}
	k := [2]int{i, w}
	if s, ok := f.docs[k]; ok {
		return s
	}
	src := f.src.Doc(i)
	if f.unattended && isTask(ss, i) {
		src = boothTaskDoc(ss[i].Title)
	}
	if strings.TrimSpace(src) == "" {
		src = "_This step has no text._"
	}
	out := markdown.Render(src, w, f.noColor)
	f.docs[k] = out
	return out
}
