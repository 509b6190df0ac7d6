package lab

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/steps/results"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/components/varform"
	"github.com/dpulab/dpulab/tui/pages/lab/runctl"
	"github.com/dpulab/dpulab/tui/session"
	"github.com/dpulab/dpulab/tui/session/sessiontest"
)

// refusingVars is a session that refuses new values.
type refusingVars struct{ *sessiontest.Fake }

func (refusingVars) SetVars(map[string]string) error { return errors.New("port: out of range") }

// TestVarsFlow: what the form's answers do to the session's values and
// what they tell the page: values that change only steps not yet run are
// set at once; values that change a done step wait for a confirmation
// (which keeps them) or a step back to the fields (which takes them back);
// cancelling, also while asking, leaves the values as they were; a refusal
// closes the form with an error.
func TestVarsFlow(t *testing.T) {
	// Step 1 (done) uses port, step 2 (pending) uses clients, step 3
	// uses neither.
	plan := func(i int, v map[string]string) []steps.PlannedCommand {
		switch i {
		case 0:
			return []steps.PlannedCommand{{Cmd: "serve " + v["port"]}}
		case 1:
			return []steps.PlannedCommand{{Cmd: "bench " + v["clients"]}}
		}
		return []steps.PlannedCommand{{Cmd: "read"}}
	}
	orig := map[string]string{"port": "6379", "clients": "4"}
	type answer func(v *varsFlow, ss []steps.StepInfo) varsResult
	submit := func(vals map[string]string) answer {
		return func(v *varsFlow, ss []steps.StepInfo) varsResult {
			return v.Submitted(varform.SubmittedMsg{Vars: vals}, ss)
		}
	}
	confirm := func(v *varsFlow, _ []steps.StepInfo) varsResult { return v.Confirmed() }
	back := func(v *varsFlow, _ []steps.StepInfo) varsResult { return v.Back() }
	cancel := func(v *varsFlow, _ []steps.StepInfo) varsResult { return v.Cancelled() }
	for _, tc := range []struct {
		name    string
		refuse  bool
		answers []answer
		// What the last answer gives.
		applied    bool
		redo, chg  []int
		events     []runctl.EventKind
		err        string
		open, asks bool
		// values are the session's at the end.
		values map[string]string
	}{
		{name: "no change", answers: []answer{submit(orig)}, applied: true, values: orig},
		{name: "a step not yet run changes", answers: []answer{submit(map[string]string{"port": "6379", "clients": "8"})},
			applied: true, chg: []int{1}, values: map[string]string{"port": "6379", "clients": "8"}},
		{name: "a done step changes: asks", answers: []answer{submit(map[string]string{"port": "7000", "clients": "4"})},
			open: true, asks: true, values: map[string]string{"port": "7000", "clients": "4"}},
		{name: "asked, confirmed", answers: []answer{submit(map[string]string{"port": "7000", "clients": "8"}), confirm},
			applied: true, redo: []int{0}, chg: []int{1}, values: map[string]string{"port": "7000", "clients": "8"}},
		// (The form shows its fields again itself, as it sends
		// BackToFieldsMsg; here nobody pressed its key.)
		{name: "asked, back to the fields", answers: []answer{submit(map[string]string{"port": "7000", "clients": "4"}), back},
			open: true, asks: true, values: orig},
		{name: "asked, cancelled", answers: []answer{submit(map[string]string{"port": "7000", "clients": "4"}), cancel},
			events: []runctl.EventKind{runctl.VarsCancelled}, values: orig},
		{name: "cancelled", answers: []answer{cancel}, events: []runctl.EventKind{runctl.VarsCancelled}, values: orig},
		{name: "refused", refuse: true, answers: []answer{submit(map[string]string{"port": "0", "clients": "4"})},
			events: []runctl.EventKind{runctl.VarsFailed}, err: "variables: port: out of range", values: orig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &sessiontest.Fake{
				Vars:     []session.Variable{{Name: "port", Default: "6379"}, {Name: "clients", Default: "4"}},
				PlanVars: plan,
			}
			f.SetTo = maps.Clone(orig)
			ss := factSteps(results.Done, results.Pending, results.Pending)
			var sess varsSession = f
			if tc.refuse {
				sess = refusingVars{f}
			}
			v := newVarsFlow(common.NewCommon(true, 100, 30), sess)
			v.Open(ss, 1, false)
			if v.Form() == nil {
				t.Fatal("the form did not open")
			}
			var r varsResult
			for _, a := range tc.answers {
				r = a(v, ss)
			}
			var kinds []runctl.EventKind
			for _, ev := range r.events {
				kinds = append(kinds, ev.Kind)
			}
			if !slices.Equal(kinds, tc.events) {
				t.Errorf("events %v, want %v", kinds, tc.events)
			}
			if r.applied != tc.applied || !slices.Equal(r.impact.redo, tc.redo) || !slices.Equal(r.impact.changed, tc.chg) {
				t.Errorf("applied %v, impact %+v; want %v, redo %v, changed %v", r.applied, r.impact, tc.applied, tc.redo, tc.chg)
			}
			if (r.err == nil) != (tc.err == "") || (r.err != nil && r.err.Error() != tc.err) {
				t.Errorf("error %v, want %q", r.err, tc.err)
			}
			if (v.Form() != nil) != tc.open || (v.Form() != nil && v.Form().Confirming() != tc.asks) {
				t.Fatalf("form open %v, want %v (asking %v)", v.Form() != nil, tc.open, tc.asks)
			}
			if tc.asks && len(tc.answers) == 1 && !strings.Contains(ansi.Strip(strings.Join(v.Form().Notes(), " ")), "step 1 Ta will run again") {
				t.Errorf("the form asks %q", v.Form().Notes())
			}
			if got := currentVars(f); !maps.Equal(got, tc.values) {
				t.Errorf("values %v, want %v", got, tc.values)
			}
			v.Close()
			if v.Form() != nil {
				t.Error("Close left the form open")
			}
		})
	}
}

// TestVarsOpenTitle: the form says where it was opened and what submitting
// does.
func TestVarsOpenTitle(t *testing.T) {
	ss := factSteps(results.Pending, results.Pending)
	f := &sessiontest.Fake{Vars: []session.Variable{{Name: "port", Default: "6379"}}}
	v := newVarsFlow(common.NewCommon(true, 100, 30), f)
	for _, tc := range []struct {
		run  bool
		want string
	}{
		{false, "Variables (at step 2: Tb)"},
		{true, "Variables for Tb"},
	} {
		v.Open(ss, 1, tc.run)
		if got := ansi.Strip(v.Form().View()); !strings.Contains(got, tc.want) {
			t.Errorf("run=%v: the form lacks %q:\n%s", tc.run, tc.want, got)
		}
	}
}

// TestAppliedWords: the status line around new values, by what they
// changed and whether the form was opened to run its step.
func TestAppliedWords(t *testing.T) {
	ss := factSteps(results.Done, results.Pending, results.Done)
	st := common.NewCommon(true, 100, 30).Styles
	for _, tc := range []struct {
		name     string
		im       impact
		runs     bool
		before   string
		after    string
		redo     int
		relayout bool
	}{
		{name: "nothing changes", im: impact{}, before: "No step's commands change.", after: "new values set · no step's commands change", redo: -1, relayout: true},
		{name: "nothing changes, the form runs its step", im: impact{}, runs: true, before: "No step's commands change.", redo: -1},
		{name: "a step not yet run", im: impact{changed: []int{1}}, before: "New commands for the steps not yet run: step 2 Tb.",
			after: "new values set · New commands for the steps not yet run: step 2 Tb.", redo: -1, relayout: true},
		{name: "done steps run again", im: impact{redo: []int{2, 0}, changed: []int{1}}, runs: true,
			before: "step 3 Tc, step 1 Ta will run again: done, but its commands change. New commands for the steps not yet run: step 2 Tb.",
			after:  "new values set · step 1 runs again: enter runs it", redo: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, after, redo, relayout := appliedWords(st, ss, tc.im, tc.runs)
			if ansi.Strip(before) != tc.before || after != tc.after || redo != tc.redo || relayout != tc.relayout {
				t.Errorf("got %q, %q, redo %d, relayout %v\nwant %q, %q, redo %d, relayout %v",
					ansi.Strip(before), after, redo, relayout, tc.before, tc.after, tc.redo, tc.relayout)
			}
		})
	}
}
