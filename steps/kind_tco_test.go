//go:build unix

package steps

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/labs/tco"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/results"
)

// tcoLab has a compare (never run here: the tests put its results in
// place) and a tco step reading it; the kind's own cases use a swept one
// (steps/kinds/tco).
const tcoLab = `
id: tco-engine
title: TCO through the engine
summary: A compare's results and their savings.
duration: 1m
roles:
  baseline: The standard NIC host.
  accelerated: The DPU host.
steps:
  - {id: deploy, title: Deploy, kind: deploy, on: [baseline, accelerated], group: g}
  - id: compare
    title: Compare
    kind: compare
    on: baseline
    target: g
    variants:
      - {label: Standard NIC, on: baseline}
      - {label: BlueField UPTv2, on: accelerated}
  - {id: tco, title: Savings, kind: tco, from: compare, inputs: {servers: 10000}}
`

// tcoBench is the compare's results: the ESXi hosts' cores per million TPS
// of the standard and the accelerated host, one point.
func tcoBench(ms [2]results.MeanStd) results.Compare {
	c := results.Compare{Step: "compare", Title: "Compare", Variants: []results.VariantResult{{Label: "Standard NIC"}, {Label: "BlueField UPTv2"}}}
	for i := range c.Variants {
		c.Variants[i].Points = []results.SweepPoint{{Stats: results.Stats{OpsPerSec: results.MeanStd{Mean: 2e6, N: ms[i].N},
			Metrics: map[string]results.MeanStd{results.MetricESXiCoresPerMOps: ms[i]}}}}
	}
	return c
}

// twoHosts puts the roles on two hosts, so the run is not a rehearsal
// (nothing connects to them: the tco step runs nowhere).
func twoHosts(t *testing.T) *runner.Inventory {
	t.Helper()
	in, err := runner.ParseInventory("hosts.yaml", []byte(`hosts:
  - {name: esx-std-vm, address: 192.0.2.1, roles: [baseline]}
  - {name: esx-dpu-vm, address: 192.0.2.2, roles: [accelerated]}
`))
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func msd(mean, sd float64, n int) results.MeanStd {
	return results.MeanStd{Mean: mean, Stddev: sd, N: n}
}

// TestTCOStep: the engine's half of a tco step (the kind's own cases are
// steps/kinds/tco's TestTCO): the compare's results of this run reach the
// kind, its estimate reaches results.json and report.md, and a rehearsal
// (Options.Rehearse) reaches it, so the step is skipped and results.json
// carries no estimate.
func TestTCOStep(t *testing.T) {
	sure := [2]results.MeanStd{msd(10, 0.1, 3), msd(8, 0.1, 3)} // 20% fewer cores, p < 0.001
	for _, tt := range []struct {
		name       string
		opts       Options
		wantStatus results.Status
	}{
		{name: "measured", wantStatus: results.Done},
		{name: "rehearsal", opts: Options{Rehearse: true}, wantStatus: results.Skipped},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			tt.opts.Inventory = twoHosts(t)
			e := newEngine(t, loadLab(t, tcoLab), tt.opts, rec)
			e.mu.Lock()
			e.results.Benches = []results.Compare{tcoBench(sure)}
			e.mu.Unlock()
			got := e.RunStep(context.Background(), e.index("tco"))
			out := strings.Join(rec.output(), "\n")
			if got != tt.wantStatus {
				t.Fatalf("tco step %s, want %s (%s)\n%s", got, tt.wantStatus, rec.finished()["tco"].Err, out)
			}
			r, err := results.LoadResults(e.ResultsDir())
			if tt.wantStatus == results.Skipped {
				if !strings.Contains(out, "REHEARSAL: no TCO estimate") {
					t.Errorf("the rehearsal did not reach the kind:\n%s", out)
				}
				if err == nil && r.TCO != nil {
					t.Errorf("a rehearsal not asked for carries a TCO: %+v", r.TCO)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			est := r.TCO
			if est == nil {
				t.Fatal("no TCO in results.json")
			}
			if math.Abs(est.Inputs[tco.SavedPct]-20) > 1e-9 || est.Sources[tco.SavedPct] != tco.Measured || est.Outputs[tco.ServersSaved] != 2000 {
				t.Errorf("results.json's estimate: servers_saved_pct %v (%s), %v servers saved; want 20 measured, 2000", est.Inputs[tco.SavedPct], est.Sources[tco.SavedPct], est.Outputs[tco.ServersSaved])
			}
			md := results.RenderMarkdown(r)
			if !strings.Contains(md, fmt.Sprintf("| servers_saved_pct | %s | %% | %s |", results.FormatInput(20), tco.Measured)) {
				t.Errorf("report.md does not label servers_saved_pct measured:\n%s", md)
			}
		})
	}
}
