package compare

import (
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/dpulab/dpulab/labs/tco"
	"github.com/dpulab/dpulab/steps/results"
	"github.com/dpulab/dpulab/tui/common"
)

// enter types v into the form's input name, as the person would, and
// recomputes.
func enter(t *testing.T, f *tcoForm, name, v string) {
	t.Helper()
	i := slices.Index(f.names, name)
	if i < 0 {
		t.Fatalf("the form has no %s (has %v)", name, f.names)
	}
	f.inputs[i].SetValue(v)
	f.recompute()
	if f.err != nil {
		t.Fatalf("%s = %s: %v", name, v, f.err)
	}
}

// inputLine is the view's line for an input.
func inputLine(view, name string) string {
	for _, l := range strings.Split(ansi.Strip(view), "\n") {
		if f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(l), "›")); len(f) > 0 && f[0] == name {
			return l
		}
	}
	return ""
}

// TestTCOViewLabels: each input shows its unit and source; what the person
// changes becomes entered; no saving shows no estimate until a share is
// entered; a rehearsal's estimate, asked for, says REHEARSAL.
func TestTCOViewLabels(t *testing.T) {
	c := common.NewCommon(true, 120, 50)
	b := &tco.Basis{Step: "compare", Baseline: "Standard NIC", Accelerated: "BlueField UPTv2", CPU: results.CPUHostESXi, Sweep: tco.Instances, Chosen: "30",
		Points: []tco.BasisPoint{
			{Value: "10", BaselineCoresPerMOps: 10, AcceleratedCoresPerMOps: 9.8, SavedPct: 2, Why: "2.0% fewer cores per million TPS is within the runs' noise"},
			{Value: "30", BaselineCoresPerMOps: 10, AcceleratedCoresPerMOps: 8, AcceleratedMOps: 2, CoresFreed: 4, SavedPct: 20, HasP: true, P: 0.0001, Runs: 3, Saving: true},
		}}
	measured, err := tco.Make(map[string]float64{tco.SavedPct: 20, tco.Instances: 30},
		tco.Provenance{Basis: b, Sources: map[string]string{tco.SavedPct: tco.Measured}})
	if err != nil {
		t.Fatal(err)
	}
	f := newTCOForm(c, &results.Results{TCO: measured}, tco.Compute)
	v := f.View()
	for name, want := range map[string]string{tco.SavedPct: "%", tco.Servers: "servers", tco.DPUPremium: "$ per server"} {
		src := tco.Assumed
		if name == tco.SavedPct {
			src = tco.Measured
		}
		if l := inputLine(v, name); !strings.Contains(l, want) || !strings.Contains(l, src) {
			t.Errorf("%s's line %q lacks %q and %q", name, l, want, src)
		}
	}
	if !strings.Contains(v, "frees 4.0 cores per host") || !strings.Contains(v, "total_savings_usd") {
		t.Errorf("the measured estimate is not shown:\n%s", v)
	}

	// At 10 instances the saving is within the noise: no estimate.
	enter(t, f, tco.Instances, "10")
	v = ansi.Strip(f.View())
	if strings.Contains(v, "total_savings_usd") || !strings.Contains(v, "No savings shown") || !strings.Contains(inputLine(v, tco.Instances), tco.Entered) {
		t.Errorf("at 10 instances:\n%s", v)
	}
	// A share entered gives one again, labelled entered.
	enter(t, f, tco.SavedPct, "12")
	v = ansi.Strip(f.View())
	if !strings.Contains(inputLine(v, tco.SavedPct), tco.Entered) || f.out.Outputs[tco.ServersSaved] != 1200 {
		t.Errorf("entered 12%%: %v\n%s", f.out.Outputs, v)
	}

	// A rehearsal has no TCO in its results: none shown until asked for.
	rh := &results.Results{Rehearsal: true, RehearsalReason: "both roles ran on local"}
	f = newTCOForm(c, rh, tco.Compute)
	v = ansi.Strip(f.View())
	if strings.Contains(v, "total_savings_usd") || inputLine(v, tco.SavedPct) == "" {
		t.Errorf("a rehearsal shows an estimate, or no servers_saved_pct to enter:\n%s", v)
	}
	enter(t, f, tco.SavedPct, "16")
	v = ansi.Strip(f.View())
	if !strings.Contains(v, "REHEARSAL: no DPU in this run (both roles ran on local)") || !strings.Contains(v, "total_savings_usd") || f.out.Sources[tco.SavedPct] != tco.Entered {
		t.Errorf("a rehearsal's estimate, asked for:\n%s", v)
	}
}
