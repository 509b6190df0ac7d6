// Package tco is the tco step kind: fleet savings (labs/tco) from the
// step's inputs and, measured, from a compare of this run. Its keys
// (inputs, from) are read, checked and written back here (Spec),
// registered with labs.
//
//	steps:
//	  - id: tco
//	    title: Fleet savings
//	    kind: tco
//	    from: compare             # an earlier compare step
//	    inputs:
//	      servers: {default: 10000, unit: servers}
//	      server_price: 15000
package tco

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/labs/tco"
	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/results"
)

// A tco step estimates fleet savings (labs/tco). Its inputs are the step's
// defaults (assumed), then variables of the same names: a variable the
// person changed from the lab's default is entered. The share of servers
// saved is measured from the compare named in from (results.MeasuredSaving:
// cores per million TPS, the ESXi hosts' when vSphere was read, at the
// chosen instance count) unless a value was given; a saving that is ≤ 0
// or within the runs' noise is said, and no savings are shown. A rehearsal
// gets no estimate unless servers_saved_pct was entered, and then it is
// labelled.
func init() {
	labs.RegisterKind(labs.KindTCO, labs.KindSyntax{Keys: []string{"inputs", "from"}, Parse: parse, Encode: encode})
	kind.Register(labs.KindTCO, kind.Kind{
		Note: "arithmetic only",
		Resolve: func(env kind.Env, st *labs.Step, vars map[string]string) (kind.Plan, error) {
			in := map[string]float64{}
			p := tco.Provenance{Sources: map[string]string{}, Units: map[string]string{}}
			if spec := specOf(st); spec != nil {
				for _, i := range spec.Inputs {
					in[i.Name] = i.Default
					p.Sources[i.Name] = tco.Assumed
					if i.Unit != "" {
						p.Units[i.Name] = i.Unit
					}
				}
			}
			fromVars, err := tco.InputsFromVars(vars)
			if err != nil {
				return nil, err
			}
			for k, v := range fromVars {
				entered := true
				if def, ok := env.Lab().Var(k); ok {
					d, err := strconv.ParseFloat(def.Default, 64)
					entered = err != nil || d != v
				}
				_, fromStep := in[k]
				switch {
				case entered:
					in[k], p.Sources[k] = v, tco.Entered
				case !fromStep:
					// The lab's variable, at its default: the lab's
					// assumption, as a step default would be.
					in[k], p.Sources[k] = v, tco.Assumed
				}
			}
			return kind.PlanFunc{Do: func(ctx context.Context) error {
				return run(env, st, maps.Clone(in), p)
			}}, nil
		},
	})
}

// Spec is a tco step's own keys, kept in labs.Step.Spec. The arithmetic
// is labs/tco's and is written out in the lab's doc; the input names are
// tco.InputNames.
type Spec struct {
	// From is the compare step whose TPS per busy core gives the share of
	// servers saved when the servers_saved_pct input is left empty.
	From   string
	Inputs []Input
}

// Input is one editable input of a tco step.
type Input struct {
	Name        string
	Default     float64
	Unit        string
	Description string
	Line        int
}

// specOf is st's keys (nil for a step this package did not read).
func specOf(st *labs.Step) *Spec {
	t, _ := st.Spec.(*Spec)
	return t
}

// parse reads the keys: from names an earlier compare step, each input is
// one of tco.InputNames with a default that is a number ≥ 0, and the share
// of servers saved comes from one of the two.
func parse(sp *labs.StepParser, s *labs.Step) {
	t := &Spec{}
	s.Spec = t
	what := sp.What()
	if sp.Has("from") {
		t.From = sp.String("from")
		if st := sp.Lab().Step(t.From); st == nil || st.Kind != labs.KindCompare {
			sp.Errorf("from", "from %q is not an earlier compare step", t.From)
		}
	}
	im := sp.Node("inputs").Map(what + " inputs")
	if im == nil {
		sp.Errorf("", "a tco step needs inputs: (name: default or {default, unit, description})")
		return
	}
	for _, e := range im.Entries() {
		in := Input{Name: e.Name, Line: e.Key.Line()}
		if !slices.Contains(tco.InputNames, e.Name) {
			e.Key.Errorf("%s: unknown tco input %q (known: %s)", what, e.Name, strings.Join(tco.InputNames, ", "))
		}
		iwhat := what + " input " + e.Name
		def := e.Value
		if e.Value.IsMap() {
			vm := e.Value.Map(iwhat)
			vm.Allow("default", "unit", "description")
			vm.Require("default")
			def = vm.Node("default")
			in.Unit = vm.Text("unit")
			in.Description = strings.TrimSpace(vm.Text("description"))
		}
		if def.Present() {
			ds := def.String(iwhat + " default")
			f, err := strconv.ParseFloat(ds, 64)
			if err != nil {
				def.Errorf("%s: default %q is not a number", iwhat, ds)
			} else if f < 0 {
				def.Errorf("%s: default must not be negative", iwhat)
			}
			in.Default = f
		}
		t.Inputs = append(t.Inputs, in)
	}
	if t.From == "" && !slices.ContainsFunc(t.Inputs, func(i Input) bool { return i.Name == tco.SavedPct }) {
		sp.Errorf("", "give either from: (a compare step) or the input %s", tco.SavedPct)
	}
}

// encode writes the keys back, each input as {default, unit, description}.
func encode(s *labs.Step, m *labs.StepEncoder) {
	t := specOf(s)
	if t == nil {
		return
	}
	m.Opt("from", t.From)
	in := m.Map("inputs")
	for _, i := range t.Inputs {
		im := in.Map(i.Name)
		im.String("default", strconv.FormatFloat(i.Default, 'f', -1, 64))
		im.Opt("unit", i.Unit)
		im.Opt("description", i.Description)
	}
}

// run measures the share of servers saved when none was given, computes
// the estimate and records it.
func run(env kind.Env, st *labs.Step, in map[string]float64, p tco.Provenance) error {
	_, given := in[tco.SavedPct]
	if why := env.Rehearsal(); why != "" {
		if p.Sources[tco.SavedPct] != tco.Entered {
			// An estimate from a rehearsal's numbers would be read as a
			// DPU's savings.
			env.Say(st.ID, "", "REHEARSAL: no TCO estimate from this run (%s); enter servers_saved_pct to see one labelled as a rehearsal; the published figures are in the lab's text", why)
			return kind.ErrSkipped
		}
		p.Rehearsal = why
		delete(in, tco.Instances)
	} else if spec := specOf(st); spec != nil && spec.From != "" {
		if err := measureSaving(env, st, in, &p, given); err != nil {
			return err
		}
	} else {
		delete(in, tco.Instances)
	}
	t, err := tco.Make(in, p)
	if err != nil {
		return err
	}
	v := results.ViewTCO(t)
	for _, n := range v.Notes {
		env.Say(st.ID, "", "%s", n)
	}
	for _, r := range v.Inputs {
		env.Say(st.ID, "", "%s = %s %s (%s)", r.Name, r.Value, r.Unit, r.Source)
	}
	if len(t.Outputs) > 0 {
		o := t.Outputs
		env.Say(st.ID, "", "%s servers saved: CapEx %s − DPUs %s + OpEx %s = %s over %g years%s",
			results.FormatNumber(o[tco.ServersSaved]), results.FormatDollars(o[tco.CapexUSD]), results.FormatDollars(o[tco.DPUCostUSD]),
			results.FormatDollars(o[tco.OpexUSD]), results.FormatDollars(o[tco.TotalUSD]), t.Inputs[tco.Years], rehearsalTag(t))
	}
	return env.SetTCO(t)
}

func rehearsalTag(t *tco.Estimate) string {
	if t.Rehearsal == "" {
		return ""
	}
	return " (REHEARSAL: servers_saved_pct entered, no DPU measured)"
}

// measureSaving reads the saving from the step's from compare at the
// chosen instance count into in and p: servers_saved_pct measured when it
// is a saving beyond the noise, else no savings with the reason. With a
// servers_saved_pct given, the measurement is only shown beside it.
func measureSaving(env kind.Env, st *labs.Step, in map[string]float64, p *tco.Provenance, given bool) error {
	from := specOf(st).From
	c := env.Compare(from)
	if c == nil && given {
		delete(in, tco.Instances)
		return nil
	}
	if c == nil {
		return fmt.Errorf("tco: step %s has no results in this run to measure servers_saved_pct from; run it first, or enter servers_saved_pct", from)
	}
	b, reason := results.MeasuredSaving(c)
	if b == nil {
		if !given {
			p.NoSaving = "no saving measured: " + reason
		}
		delete(in, tco.Instances)
		return nil
	}
	n, have := in[tco.Instances]
	b.Pick(n, have)
	p.Basis = b
	if b.Sweep == tco.Instances {
		if v, err := strconv.ParseFloat(b.Chosen, 64); err == nil {
			// The point used; Basis.Note says when it is not the
			// count asked for.
			in[tco.Instances] = v
		}
	} else {
		delete(in, tco.Instances)
	}
	pt, _ := b.Point(b.Chosen)
	if given {
		return nil
	}
	if !pt.Saving {
		p.NoSaving = "no saving measured: " + pt.Why
		return nil
	}
	in[tco.SavedPct] = pt.Pct()
	p.Sources[tco.SavedPct] = tco.Measured
	return nil
}
