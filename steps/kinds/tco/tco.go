// Package tco is the tco step kind: fleet savings (labs/tco) from the
// step's inputs and, measured, from a compare of this run.
package tco

import (
	"context"
	"fmt"
	"maps"
	"strconv"

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
	kind.Register(labs.KindTCO, kind.Kind{
		Note: "arithmetic only",
		Resolve: func(env kind.Env, st *labs.Step, vars map[string]string) (kind.Plan, error) {
			in := map[string]float64{}
			p := tco.Provenance{Sources: map[string]string{}, Units: map[string]string{}}
			if st.TCO != nil {
				for _, i := range st.TCO.Inputs {
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
	} else if st.TCO != nil && st.TCO.From != "" {
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
	c := env.Compare(st.TCO.From)
	if c == nil && given {
		delete(in, tco.Instances)
		return nil
	}
	if c == nil {
		return fmt.Errorf("tco: step %s has no results in this run to measure servers_saved_pct from; run it first, or enter servers_saved_pct", st.TCO.From)
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
