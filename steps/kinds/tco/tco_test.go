package tco_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/labs/tco"
	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/kind/kindtest"
	_ "github.com/dpulab/dpulab/steps/kinds/tco"
	"github.com/dpulab/dpulab/steps/results"
)

func run(t *testing.T, env *kindtest.Env, vars map[string]string) error {
	t.Helper()
	k, ok := kind.Lookup("tco")
	if !ok || k.Note == "" {
		t.Fatal("the tco kind is not registered with its note")
	}
	p, err := k.Resolve(env, env.Step(t, "tco"), vars)
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Commands(); len(c) != 0 {
		t.Errorf("a tco step plans commands: %+v", c)
	}
	return p.Run(context.Background())
}

func said(env *kindtest.Env) string {
	var b strings.Builder
	for _, l := range env.Lines() {
		b.WriteString(l.Text + "\n")
	}
	return b.String()
}

// tcoLab has a compare of two roles swept over instances and a tco step
// reading it, with the instance count and the share of servers saved as
// variables a person may enter.
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

// sweptBench is the compare's results: the ESXi hosts' cores per million
// TPS of the standard and the accelerated host at 10 and 30 instances.
func sweptBench(at10, at30 [2]results.MeanStd) *results.Compare {
	c := &results.Compare{Step: "compare", Title: "Compare", Sweep: "instances",
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

func msd(mean, sd float64, n int) results.MeanStd {
	return results.MeanStd{Mean: mean, Stddev: sd, N: n}
}

// TestTCO runs the tco step on a compare's results: measured (at the
// instance count chosen), entered, no saving (within the noise, worse,
// noise not measured), a rehearsal (with and without an entered share).
// Each case checks the estimate kept and what the step said.
func TestTCO(t *testing.T) {
	sure := [2]results.MeanStd{msd(10, 0.1, 3), msd(8, 0.1, 3)} // 20% fewer cores, p < 0.001
	noise := [2]results.MeanStd{msd(10, 1, 3), msd(9.8, 1, 3)}  // 2%, within the noise
	worse := [2]results.MeanStd{msd(10, 0.1, 3), msd(11, 0.1, 3)}
	tests := []struct {
		name       string
		bench      *results.Compare
		vars       map[string]string
		rehearsal  bool
		wantSkip   bool
		wantPct    float64 // 0: no savings
		wantSource string
		wantOut    []string
		wantNoSave string
	}{
		{name: "measured", bench: sweptBench(noise, sure), wantPct: 20, wantSource: tco.Measured,
			wantOut: []string{"servers_saved_pct = 20 % (measured)", "at 30 instances per host, host (ESXi) CPU", "frees 4.0 cores per host",
				"server_price = 15,000 $ per server (assumed)", "dpu_premium = 2,560 $ per server (assumed)", "2,000 servers saved"}},
		{name: "measured at the entered instance count", bench: sweptBench(sure, noise), vars: map[string]string{"instances": "10"},
			wantPct: 20, wantSource: tco.Measured, wantOut: []string{"instances = 10 instances per host (entered)", "at 10 instances per host"}},
		{name: "entered", bench: sweptBench(noise, worse), vars: map[string]string{"servers_saved_pct": "12.5"},
			wantPct: 12.5, wantSource: tco.Entered, wantOut: []string{"servers_saved_pct = 12.5 % (entered)", "uses the entered servers_saved_pct instead", "1,250 servers saved"}},
		{name: "entered, no compare in this run", vars: map[string]string{"servers_saved_pct": "12.5"},
			wantPct: 12.5, wantSource: tco.Entered, wantOut: []string{"servers_saved_pct = 12.5 % (entered)", "1,250 servers saved"}},
		{name: "not significant", bench: sweptBench(sure, noise),
			wantOut: []string{"No savings shown: no saving measured", "within the runs' noise"}, wantNoSave: "within the runs' noise"},
		{name: "worse", bench: sweptBench(sure, worse),
			wantOut: []string{"No savings shown", "10.0% more cores per million TPS"}, wantNoSave: "no cores freed"},
		{name: "one run a side", bench: sweptBench(sure, [2]results.MeanStd{msd(10, 0, 1), msd(8, 0, 1)}),
			wantOut: []string{"No savings shown", "noise was not measured"}, wantNoSave: "1 run a side"},
		{name: "rehearsal", bench: sweptBench(sure, sure), rehearsal: true, wantSkip: true,
			wantOut: []string{"REHEARSAL: no TCO estimate from this run", "enter servers_saved_pct"}},
		{name: "rehearsal, asked for", bench: sweptBench(sure, sure), rehearsal: true, vars: map[string]string{"servers_saved_pct": "16"},
			wantPct: 16, wantSource: tco.Entered,
			wantOut: []string{"REHEARSAL: no DPU in this run", "servers_saved_pct = 16 % (entered)", "(REHEARSAL: servers_saved_pct entered, no DPU measured)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := kindtest.Lab(t, tcoLab, nil)
			env := kindtest.New(l)
			if tt.bench != nil {
				env.Compares = map[string]*results.Compare{"compare": tt.bench}
			}
			if tt.rehearsal {
				env.Why = "every role on this machine"
			}
			vars, err := l.ResolveVars(tt.vars)
			if err != nil {
				t.Fatal(err)
			}
			err = run(t, env, vars)
			out := said(env)
			if tt.wantSkip != errors.Is(err, kind.ErrSkipped) || (!tt.wantSkip && err != nil) {
				t.Fatalf("err = %v, want skipped %v; said:\n%s", err, tt.wantSkip, out)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("the step did not say %q:\n%s", w, out)
				}
			}
			est := env.TCO()
			if tt.wantSkip {
				if est != nil {
					t.Errorf("a rehearsal not asked for kept an estimate: %+v", est)
				}
				return
			}
			if est == nil {
				t.Fatalf("no estimate kept; said:\n%s", out)
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
			if tt.rehearsal != (est.Rehearsal != "") {
				t.Errorf("rehearsal label %q in a run with rehearsal=%v", est.Rehearsal, tt.rehearsal)
			}
			for _, k := range []string{tco.Servers, tco.ServerPrice, tco.DPUPremium, tco.Years} {
				if est.Sources[k] != tco.Assumed || est.Units[k] == "" {
					t.Errorf("%s: source %q unit %q", k, est.Sources[k], est.Units[k])
				}
			}
		})
	}
}

// TestTCOWithoutTheCompare: nothing to measure from and nothing entered
// fails, saying what to do.
func TestTCOWithoutTheCompare(t *testing.T) {
	env := kindtest.New(kindtest.Lab(t, tcoLab, nil))
	if err := run(t, env, nil); err == nil || !strings.Contains(err.Error(), "run it first, or enter servers_saved_pct") {
		t.Errorf("err = %v", err)
	}
	if env.TCO() != nil {
		t.Error("an estimate kept without a measurement")
	}
}
