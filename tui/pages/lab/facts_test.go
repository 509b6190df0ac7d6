package lab

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/steps/results"
)

// factsSrc is a session's plans and texts, counting the plans asked.
type factsSrc struct {
	plans [][]steps.PlannedCommand
	errs  []error
	docs  []string
	asked []int
}

func (s *factsSrc) Plan(i int) ([]steps.PlannedCommand, error) {
	s.asked = append(s.asked, i)
	if i < len(s.errs) && s.errs[i] != nil {
		return nil, s.errs[i]
	}
	return s.plans[i], nil
}

func (s *factsSrc) Doc(i int) string { return s.docs[i] }

func factSteps(sts ...results.Status) []steps.StepInfo {
	var ss []steps.StepInfo
	for i, st := range sts {
		ss = append(ss, steps.StepInfo{ID: string(rune('a' + i)), Title: "T" + string(rune('a'+i)), Kind: "run", Status: st})
	}
	return ss
}

// TestFactsCommands: a step's plan is asked once and kept; a plan that
// fails keeps its error and is not asked again; a step's StepStarted names
// what it runs, whatever the plan said; new variables forget every plan;
// an index past the list asks nothing.
func TestFactsCommands(t *testing.T) {
	a := []steps.PlannedCommand{{Host: "h", Cmd: "a"}}
	started := []steps.PlannedCommand{{Host: "h", Cmd: "started"}}
	src := &factsSrc{plans: [][]steps.PlannedCommand{a, nil}, errs: []error{nil, errors.New("no port")}}
	ss := factSteps(results.Pending, results.Pending)
	f := newStepFacts(src, func() []steps.StepInfo { return ss }, false, true)

	if got := f.Commands(0); !slices.Equal(got, a) || f.PlanErr(0) != "" {
		t.Fatalf("step 1: %v, error %q", got, f.PlanErr(0))
	}
	f.Commands(0)
	if got := f.Commands(1); got != nil || f.PlanErr(1) != "no port" {
		t.Fatalf("step 2: %v, error %q; want none and the plan's error", got, f.PlanErr(1))
	}
	f.Commands(1)
	if f.Commands(-1) != nil || f.Commands(2) != nil {
		t.Fatal("an index past the list has commands")
	}
	if !slices.Equal(src.asked, []int{0, 1}) {
		t.Fatalf("plans asked %v, want each step once", src.asked)
	}
	f.Started(1, started)
	if got := f.Commands(1); !slices.Equal(got, started) || f.PlanErr(1) != "" {
		t.Fatalf("after StepStarted: %v, error %q", got, f.PlanErr(1))
	}
	f.Started(0, nil) // a StepStarted naming no command keeps the plan
	if got := f.Commands(0); !slices.Equal(got, a) {
		t.Fatalf("after an empty StepStarted: %v", got)
	}
	f.ForgetPlans()
	f.Commands(0)
	f.Commands(1)
	if !slices.Equal(src.asked, []int{0, 1, 0, 1}) || f.PlanErr(1) != "no port" {
		t.Fatalf("after new values: asked %v, error %q; want both asked again", src.asked, f.PlanErr(1))
	}
}

// TestFactsFailure: which failure a step shows, from what happened to it:
// this session's StepFinished, the saved progress's reason (or the words
// for progress saved without one), and none once it runs here, passes,
// or is skipped.
func TestFactsFailure(t *testing.T) {
	saved := &steps.Failure{Err: "port taken", Host: "server1", Cmd: "redis-server", Hint: "free it", Tail: []string{"x"}}
	here := steps.StepFinished{Index: 0, Status: results.Failed, Err: "exit 1"}
	for _, tc := range []struct {
		name string
		// status and failure are the step's as the saved progress has it.
		status  results.Status
		failure *steps.Failure
		// do is what happens in this session, in order.
		do func(f *stepFacts, ss []steps.StepInfo)
		// want is the failure shown ("" none), earlier whether it is
		// said to be an earlier session's, last this session's.
		want          string
		earlier, last bool
	}{
		{name: "never failed", status: results.Pending},
		{name: "saved with a reason", status: results.Failed, failure: saved, want: "port taken", earlier: true},
		{name: "saved without a reason", status: results.Failed, want: "in an earlier session", earlier: true},
		{name: "failed here", status: results.Pending, do: func(f *stepFacts, ss []steps.StepInfo) {
			ss[0].Status = results.Failed
			f.Finished(here)
		}, want: "exit 1", last: true},
		{name: "saved, then failed here", status: results.Failed, failure: saved, do: func(f *stepFacts, ss []steps.StepInfo) {
			f.Finished(here)
		}, want: "exit 1", last: true},
		{name: "saved, then runs here", status: results.Failed, failure: saved, do: func(f *stepFacts, ss []steps.StepInfo) {
			f.Launched(0)
			ss[0].Status = results.Running
		}},
		{name: "saved, run here, fails again with its StepFinished on the way", status: results.Failed, failure: saved, do: func(f *stepFacts, ss []steps.StepInfo) {
			f.Launched(0)
			ss[0].Status = results.Failed // RunStep's return came first
		}},
		{name: "failed here, then passed", status: results.Pending, do: func(f *stepFacts, ss []steps.StepInfo) {
			f.Finished(here)
			f.Finished(steps.StepFinished{Index: 0, Status: results.Done})
			ss[0].Status = results.Done
		}},
		{name: "failed here, then skipped", status: results.Pending, do: func(f *stepFacts, ss []steps.StepInfo) {
			f.Finished(here)
			f.Skipped(0)
			ss[0].Status = results.Skipped
		}},
		{name: "saved, then skipped", status: results.Failed, failure: saved, do: func(f *stepFacts, ss []steps.StepInfo) {
			f.Skipped(0)
			ss[0].Status = results.Skipped
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ss := factSteps(tc.status)
			ss[0].Failure = tc.failure
			f := newStepFacts(&factsSrc{}, func() []steps.StepInfo { return ss }, false, true)
			if tc.do != nil {
				tc.do(f, ss)
			}
			got, ok := f.Failure(0)
			if ok != (tc.want != "") || got.Err != tc.want {
				t.Fatalf("failure %v %q, want %q", ok, got.Err, tc.want)
			}
			if ok && f.Earlier(got) != tc.earlier {
				t.Errorf("earlier %v, want %v", f.Earlier(got), tc.earlier)
			}
			if _, last := f.Last(0); last != tc.last {
				t.Errorf("this session's failure %v, want %v", last, tc.last)
			}
			if tc.failure != nil && tc.earlier && (got.Host != saved.Host || got.Cmd != saved.Cmd || got.Hint != saved.Hint || len(got.Tail) != 1) {
				t.Errorf("saved failure %+v lacks the saved reason's parts", got)
			}
			if _, ok := f.Failure(5); ok {
				t.Error("a step past the list has a failure")
			}
		})
	}
}

// TestFactsDoc: a step's text is rendered once per width; a step without
// text says so; at a booth a task step's text is booth mode's own.
func TestFactsDoc(t *testing.T) {
	for _, tc := range []struct {
		name       string
		kind, doc  string
		unattended bool
		want       string
	}{
		{name: "text", kind: "run", doc: "Start **the** server.", want: "Start the server."},
		{name: "no text", kind: "run", doc: "  \n", want: "This step has no text."},
		{name: "task at a booth", kind: "task", doc: "Open a shell.", unattended: true, want: "a trainee does this step by hand"},
		{name: "task in the lab", kind: "task", doc: "Open a shell.", want: "Open a shell."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ss := []steps.StepInfo{{ID: "a", Title: "A", Kind: tc.kind}}
			src := &factsSrc{docs: []string{tc.doc}}
			f := newStepFacts(src, func() []steps.StepInfo { return ss }, tc.unattended, true)
			out := f.Doc(0, 60)
			if !strings.Contains(out, tc.want) {
				t.Fatalf("doc lacks %q:\n%s", tc.want, out)
			}
			src.docs[0] = "changed"
			if f.Doc(0, 60) != out {
				t.Error("the text was rendered again at the same width")
			}
			if tc.kind == "run" && !strings.Contains(f.Doc(0, 70), "changed") {
				t.Error("a new width did not render again")
			}
			if f.Doc(1, 60) != "" || f.Doc(-1, 60) != "" {
				t.Error("a step past the list has text")
			}
		})
	}
}
