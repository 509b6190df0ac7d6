package tco_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/steps/kind/kindtest"
	tcokind "github.com/dpulab/dpulab/steps/kinds/tco"
)

// TestKeys: the kind reads from: and its inputs (a bare default or
// {default, unit, description}) into its Spec, and Encode writes them
// back so that they read the same.
func TestKeys(t *testing.T) {
	l := kindtest.Lab(t, tcoLab, nil)
	got, ok := l.Step("tco").Spec.(*tcokind.Spec)
	want := &tcokind.Spec{From: "compare", Inputs: []tcokind.Input{
		{Name: "servers", Default: 10000, Unit: "servers", Line: 48},
		{Name: "server_price", Default: 15000, Line: 49},
	}}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("Spec %#v, want %#v", l.Step("tco").Spec, want)
	}
	b := kindtest.RoundTrip(t, l)
	back := b.Step("tco").Spec.(*tcokind.Spec)
	for i := range back.Inputs {
		back.Inputs[i].Line = want.Inputs[i].Line
	}
	if !reflect.DeepEqual(back, want) {
		t.Errorf("after the round trip %#v, want %#v", back, want)
	}
}

// TestKeyProblems: what the kind checks, each at its line.
func TestKeyProblems(t *testing.T) {
	got := kindtest.Problems(t, `id: keys
title: Keys
summary: tco steps
duration: 1m
roles: [local]
steps:
  - id: r
    title: R
    kind: run
    run: "true"
  - id: none
    title: No inputs
    kind: tco
  - id: scalar
    title: Inputs not a mapping
    kind: tco
    inputs: 3
  - id: nofrom
    title: Neither from nor the share
    kind: tco
    inputs:
      servers: -1
      server_cost: 2400
      pue:
        unit: x
      years:
        default: 3
        colour: red
      dpu_premium: {default: high}
  - id: fromrun
    title: From a run step
    kind: tco
    from: r
    on: [local]
    inputs:
      servers_saved_pct: 10
      servers: 10
      servers: 11
`, nil)
	want := []string{
		`lab.yaml:11: step none: a tco step needs inputs: (name: default or {default, unit, description})`,
		`lab.yaml:14: step scalar: a tco step needs inputs: (name: default or {default, unit, description})`,
		`lab.yaml:17: step scalar inputs must be a mapping of keys to values, not a scalar`,
		`lab.yaml:18: step nofrom: give either from: (a compare step) or the input servers_saved_pct`,
		`lab.yaml:22: step nofrom input servers: default must not be negative`,
		`lab.yaml:23: step nofrom: unknown tco input "server_cost" (known: servers, servers_saved_pct, instances, server_price, infra_per_server, dpu_premium, server_watts, price_per_kwh, pue, years)`,
		`lab.yaml:25: step nofrom input pue: missing required key "default"`,
		`lab.yaml:28: step nofrom input years: unknown key "colour" (allowed: default, description, unit)`,
		`lab.yaml:29: step nofrom input dpu_premium: default "high" is not a number`,
		`lab.yaml:33: step fromrun: from "r" is not an earlier compare step`,
		`lab.yaml:34: step fromrun: a tco step runs on no host; remove on:`,
		`lab.yaml:38: step fromrun inputs: key "servers" given twice (first on line 37)`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
