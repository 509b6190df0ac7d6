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

const tcoLab = `
id: tco-test
title: TCO
summary: A compare and a TCO.
duration: 1m
roles:
  baseline: The standard NIC host.
  accelerated: The DPU host.
variables:
  servers_saved_pct:
    type: string
    default: ""
    pattern: '([0-9]+(\.[0-9]+)?)?'
    description: Share of servers saved.
steps:
  - id: deploy
    title: Deploy
    kind: deploy
    on: [baseline, accelerated]
    group: g
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
  - id: tco
    title: Fleet savings
    kind: tco
    from: compare
    inputs:
      servers: {default: 10000, unit: servers}
      server_price: 15000
`

// compare is a compare's result: the ESXi hosts' cores per million TPS
// of the standard and the accelerated host, three runs a side.
func compare(std, dpu float64) *results.Compare {
	c := &results.Compare{Step: "compare", Title: "Compare", Variants: []results.VariantResult{{Label: "Standard NIC"}, {Label: "BlueField UPTv2"}}}
	for i, v := range []float64{std, dpu} {
		c.Variants[i].Points = []results.SweepPoint{{Stats: results.Stats{OpsPerSec: results.MeanStd{Mean: 2e6, N: 3},
			Metrics: map[string]results.MeanStd{results.MetricESXiCoresPerMOps: {Mean: v, Stddev: 0.1, N: 3}}}}}
	}
	return c
}

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

// TestTCOMeasured: the share of servers saved is measured from the
// compare the step names, and the estimate goes to the results.
func TestTCOMeasured(t *testing.T) {
	env := kindtest.New(kindtest.Lab(t, tcoLab, nil))
	env.Compares = map[string]*results.Compare{"compare": compare(10, 8)}
	if err := run(t, env, nil); err != nil {
		t.Fatal(err)
	}
	est := env.TCO()
	if est == nil {
		t.Fatalf("no estimate kept; said:\n%s", said(env))
	}
	if math.Abs(est.Inputs[tco.SavedPct]-20) > 1e-9 || est.Sources[tco.SavedPct] != tco.Measured {
		t.Errorf("servers_saved_pct %v (%s), want 20 measured", est.Inputs[tco.SavedPct], est.Sources[tco.SavedPct])
	}
	if est.Sources[tco.Servers] != tco.Assumed || est.Outputs[tco.ServersSaved] != 2000 {
		t.Errorf("servers %s, saved %v", est.Sources[tco.Servers], est.Outputs[tco.ServersSaved])
	}
	if !strings.Contains(said(env), "2,000 servers saved") {
		t.Errorf("the step did not say the savings:\n%s", said(env))
	}
}

// TestTCOEntered: a share the person entered is used and labelled so.
func TestTCOEntered(t *testing.T) {
	env := kindtest.New(kindtest.Lab(t, tcoLab, nil))
	if err := run(t, env, map[string]string{"servers_saved_pct": "12.5"}); err != nil {
		t.Fatal(err)
	}
	if est := env.TCO(); est == nil || est.Sources[tco.SavedPct] != tco.Entered || est.Outputs[tco.ServersSaved] != 1250 {
		t.Errorf("estimate %+v", est)
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

// TestTCORehearsal: a rehearsal keeps no estimate unless the share was
// entered, and then the estimate is labelled a rehearsal.
func TestTCORehearsal(t *testing.T) {
	env := kindtest.New(kindtest.Lab(t, tcoLab, nil))
	env.Why = "every role on this machine"
	env.Compares = map[string]*results.Compare{"compare": compare(10, 8)}
	if err := run(t, env, nil); !errors.Is(err, kind.ErrSkipped) {
		t.Fatalf("err = %v, want skipped", err)
	}
	if env.TCO() != nil || !strings.Contains(said(env), "REHEARSAL: no TCO estimate") {
		t.Errorf("a rehearsal kept %+v; said:\n%s", env.TCO(), said(env))
	}
	if err := run(t, env, map[string]string{"servers_saved_pct": "16"}); err != nil {
		t.Fatal(err)
	}
	if est := env.TCO(); est == nil || est.Rehearsal == "" || !strings.Contains(said(env), "REHEARSAL: servers_saved_pct entered") {
		t.Errorf("an entered share in a rehearsal: %+v; said:\n%s", est, said(env))
	}
}
