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

// tcoLab has a compare of two roles swept over instances (never run here:
// the tests put its results in place) and a tco step reading it, with the
// share of servers saved as a variable a person may enter.
const tcoLab = `
id: tco-test
title: TCO
summary: A compare and a TCO.
duration: 1m
roles:
  baseline: The standard NIC host.
  accelerated: The DPU host.
variables:
  instances:
    type: int
    default: 30
    min: 1
    max: 128
    description: Instances per host.
  servers_saved_pct:
    type: string
    default: ""
    pattern: '([0-9]+(\.[0-9]+)?)?'
    description: Share of servers saved, when you know better than the measurement.
steps:
  - id: deploy
    title: Deploy
    kind: deploy
    on: [baseline, accelerated]
    group: g
    instances: "{{.vars.instances}}"
    port: 7000
  - id: compare
    title: Compare
    kind: compare
    on: baseline
    variants:
      - label: Standard NIC
        on: baseline
        group: g
      - label: BlueField UPTv2
        on: accelerated
        group: g
    sweep:
      var: instances
      values: [10, 30]
  - id: tco
    title: Fleet savings
    kind: tco
    from: compare
    inputs:
      servers: {default: 10000, unit: servers}
      server_price: 15000
`

// tcoBench is the compare's results: the ESXi hosts' cores per million TPS
// of the standard and the accelerated host at 10 and 30 instances.
func tcoBench(at10, at30 [2]results.MeanStd) results.Compare {
	c := results.Compare{Step: "compare", Title: "Compare", Sweep: "instances",
		Variants: []results.VariantResult{{Label: "Standard NIC"}, {Label: "BlueField UPTv2"}}}
	for _, pt := range []struct {
		v  string
		ms [2]results.MeanStd
	}{{"10", at10}, {"30", at30}} {
		for i := range 2 {
			c.Variants[i].Points = append(c.Variants[i].Points, results.SweepPoint{Value: pt.v, Stats: results.Stats{
				OpsPerSec: results.MeanStd{Mean: 2e6, N: pt.ms[i].N},
				Metrics:   map[string]results.MeanStd{results.MetricESXiCoresPerMOps: pt.ms[i]}}})
		}
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

// TestTCOStep runs the tco step after a compare's results: measured,
// entered, no saving, a rehearsal (with and without an entered share). Each
// case checks results.json's estimate and the headless output's labels.
func TestTCOStep(t *testing.T) {
	sure := [2]results.MeanStd{msd(10, 0.1, 3), msd(8, 0.1, 3)} // 20% fewer cores, p < 0.001
	noise := [2]results.MeanStd{msd(10, 1, 3), msd(9.8, 1, 3)}  // 2%, within the noise
	worse := [2]results.MeanStd{msd(10, 0.1, 3), msd(11, 0.1, 3)}
	tests := []struct {
		name       string
		bench      results.Compare
		opts       Options
		wantStatus results.Status
		wantPct    float64 // 0: no savings
		wantSource string
		wantOut    []string
		wantNoSave string
	}{
		{name: "measured", bench: tcoBench(noise, sure), wantStatus: results.Done, wantPct: 20, wantSource: tco.Measured,
			wantOut: []string{"servers_saved_pct = 20 % (measured)", "at 30 instances per host, host (ESXi) CPU", "frees 4.0 cores per host",
				"server_price = 15,000 $ per server (assumed)", "dpu_premium = 2,560 $ per server (assumed)", "2,000 servers saved"}},
		{name: "measured at the entered instance count", bench: tcoBench(sure, noise), opts: Options{Vars: map[string]string{"instances": "10"}},
			wantStatus: results.Done, wantPct: 20, wantSource: tco.Measured, wantOut: []string{"instances = 10 instances per host (entered)", "at 10 instances per host"}},
		{name: "entered", bench: tcoBench(noise, worse), opts: Options{Vars: map[string]string{"servers_saved_pct": "12.5"}},
			wantStatus: results.Done, wantPct: 12.5, wantSource: tco.Entered, wantOut: []string{"servers_saved_pct = 12.5 % (entered)", "uses the entered servers_saved_pct instead", "1,250 servers saved"}},
		{name: "not significant", bench: tcoBench(sure, noise), wantStatus: results.Done,
			wantOut: []string{"No savings shown: no saving measured", "within the runs' noise"}, wantNoSave: "within the runs' noise"},
		{name: "worse", bench: tcoBench(sure, worse), wantStatus: results.Done,
			wantOut: []string{"No savings shown", "10.0% more cores per million TPS"}, wantNoSave: "no cores freed"},
		{name: "one run a side", bench: tcoBench(sure, [2]results.MeanStd{msd(10, 0, 1), msd(8, 0, 1)}), wantStatus: results.Done,
			wantOut: []string{"No savings shown", "noise was not measured"}, wantNoSave: "1 run a side"},
		{name: "rehearsal", bench: tcoBench(sure, sure), opts: Options{Rehearse: true}, wantStatus: results.Skipped,
			wantOut: []string{"REHEARSAL: no TCO estimate from this run", "enter servers_saved_pct"}},
		{name: "rehearsal, asked for", bench: tcoBench(sure, sure), opts: Options{Rehearse: true, Vars: map[string]string{"servers_saved_pct": "16"}},
			wantStatus: results.Done, wantPct: 16, wantSource: tco.Entered,
			wantOut: []string{"REHEARSAL: no DPU in this run", "servers_saved_pct = 16 % (entered)", "(REHEARSAL: servers_saved_pct entered, no DPU measured)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			tt.opts.Inventory = twoHosts(t)
			e := newEngine(t, loadLab(t, tcoLab), tt.opts, rec)
			e.mu.Lock()
			e.results.Benches = []results.Compare{tt.bench}
			e.mu.Unlock()
			got := e.RunStep(context.Background(), e.index("tco"))
			out := strings.Join(rec.output(), "\n")
			t.Log(out)
			if got != tt.wantStatus {
				t.Fatalf("tco step %s, want %s (%s)\n%s", got, tt.wantStatus, rec.finished()["tco"].Err, out)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("the output lacks %q:\n%s", w, out)
				}
			}
			r, err := results.LoadResults(e.ResultsDir())
			if tt.wantStatus == results.Skipped {
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
			if tt.wantPct == 0 {
				if len(est.Outputs) != 0 || !strings.Contains(est.NoSaving, tt.wantNoSave) || strings.Contains(out, "servers saved:") {
					t.Errorf("want no savings (%q): outputs %v, no saving %q", tt.wantNoSave, est.Outputs, est.NoSaving)
				}
				return
			}
			if math.Abs(est.Inputs[tco.SavedPct]-tt.wantPct) > 1e-9 || est.Sources[tco.SavedPct] != tt.wantSource || est.NoSaving != "" {
				t.Errorf("servers_saved_pct %v (%s), no saving %q; want %v (%s)", est.Inputs[tco.SavedPct], est.Sources[tco.SavedPct], est.NoSaving, tt.wantPct, tt.wantSource)
			}
			if want := math.Round(10000 * tt.wantPct / 100); est.Outputs[tco.ServersSaved] != want {
				t.Errorf("servers saved %v, want %v", est.Outputs[tco.ServersSaved], want)
			}
			if tt.opts.Rehearse != (est.Rehearsal != "") {
				t.Errorf("rehearsal label %q in a run with Rehearse=%v", est.Rehearsal, tt.opts.Rehearse)
			}
			for _, k := range []string{tco.Servers, tco.ServerPrice, tco.DPUPremium, tco.Years} {
				if est.Sources[k] != tco.Assumed || est.Units[k] == "" {
					t.Errorf("%s: source %q unit %q", k, est.Sources[k], est.Units[k])
				}
			}
			md := results.RenderMarkdown(r)
			if !strings.Contains(md, fmt.Sprintf("| servers_saved_pct | %s | %% | %s |", results.FormatInput(tt.wantPct), tt.wantSource)) {
				t.Errorf("report.md does not label servers_saved_pct %s:\n%s", tt.wantSource, md)
			}
		})
	}
}

// TestTCOWithoutTheCompare: --only tco in a run that has not compared
// fails, saying what to do.
func TestTCOWithoutTheCompare(t *testing.T) {
	rec := &recorder{}
	e := newEngine(t, loadLab(t, tcoLab), Options{Inventory: twoHosts(t)}, rec)
	if got := e.RunStep(context.Background(), e.index("tco")); got != results.Failed {
		t.Fatalf("status %s", got)
	}
	if err := rec.finished()["tco"].Err; !strings.Contains(err, "run it first, or enter servers_saved_pct") {
		t.Errorf("error %q", err)
	}
}
