package steps

import (
	"context"
	"fmt"
	"time"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/labs/tco"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/results"
)

// A tco step estimates fleet savings (labs/tco): inputs from the step's
// defaults, then variables of the same names; the share of servers saved
// comes from the compare named in from when no value was given for it.
func init() {
	registerKind(labs.KindTCO, kind{
		note: "arithmetic only",
		resolve: func(e *Engine, st *labs.Step, vars map[string]string) (stepPlan, error) {
			in := map[string]float64{}
			given := map[string]bool{}
			if st.TCO != nil {
				for _, i := range st.TCO.Inputs {
					in[i.Name] = i.Default
					given[i.Name] = true
				}
			}
			fromVars, err := tco.InputsFromVars(vars)
			if err != nil {
				return nil, err
			}
			for k, v := range fromVars {
				in[k] = v
				given[k] = true
			}
			return planFunc{do: func(ctx context.Context) error {
				if why := e.Rehearsal(); why != "" {
					// An estimate from a rehearsal's numbers would be read
					// as a DPU's savings.
					e.say(st.ID, "", "REHEARSAL: no TCO estimate from this run (%s); the published figures are in the lab's text", why)
					return errSkipped
				}
				return e.runTCO(st, in, given[tco.SavedPct])
			}}, nil
		},
	})
}

// runTCO computes the estimate from in; unless savedGiven, the share of
// servers saved is derived from the step's from compare.
func (e *Engine) runTCO(st *labs.Step, in map[string]float64, savedGiven bool) error {
	note := ""
	if !savedGiven && st.TCO != nil && st.TCO.From != "" {
		e.mu.Lock()
		var c *results.Compare
		for i := range e.results.Benches {
			if e.results.Benches[i].Step == st.TCO.From {
				c = &e.results.Benches[i]
			}
		}
		pct, ok := results.ServersSavedPct(c)
		e.mu.Unlock()
		if !ok {
			return fmt.Errorf("tco: no TPS per busy core from step %s to derive servers_saved_pct from; run it first or give servers_saved_pct", st.TCO.From)
		}
		in[tco.SavedPct] = pct
		note = fmt.Sprintf(" (servers_saved_pct %.1f%% derived from %s)", pct, st.TCO.From)
	}
	t, err := tco.Compute(in)
	if err != nil {
		return err
	}
	o := t.Outputs
	e.opts.Emit(Output{Step: st.ID, Line: runner.Line{Host: runner.LocalName, Text: fmt.Sprintf("%s servers saved: CapEx %s + OpEx %s = %s over %g years%s",
		results.FormatNumber(o[tco.ServersSaved]), results.FormatDollars(o[tco.CapexUSD]), results.FormatDollars(o[tco.OpexUSD]),
		results.FormatDollars(o[tco.TotalUSD]), t.Inputs[tco.Years], note), Time: time.Now()}})
	e.mu.Lock()
	defer e.mu.Unlock()
	e.results.TCO = t
	return e.writeResultsLocked(false)
}
