package vspherecheck_test

import (
	"strings"
	"testing"

	"github.com/dpulab/dpulab/steps/kind/kindtest"
	"github.com/dpulab/dpulab/steps/kinds/vspherecheck"
)

// TestVSphereKey: check's vsphere: is this package's: read into Spec,
// checked (one of Checks, and no command of the step's own), written
// back by Encode; a check without it is the check kind's, with verify:.
func TestVSphereKey(t *testing.T) {
	const head = `id: keys
title: Keys
summary: check steps
duration: 1m
roles: [local]
steps:
`
	l := kindtest.Lab(t, head+`  - id: dpus
    title: DPUs
    kind: check
    vsphere: dpus
    skip_if: "true"
  - id: plain
    title: Plain
    kind: check
    verify: {run: "true"}
`, nil)
	if s, ok := l.Steps[0].Spec.(*vspherecheck.Spec); !ok || s.Check != vspherecheck.DPUs || l.Steps[0].SkipIf != "true" {
		t.Errorf("vsphere: read as %#v (skip_if %q)", l.Steps[0].Spec, l.Steps[0].SkipIf)
	}
	if l.Steps[1].Spec != nil || l.Steps[1].Verify == nil {
		t.Errorf("a check without vsphere: keeps %#v, verify %v", l.Steps[1].Spec, l.Steps[1].Verify)
	}
	b := kindtest.RoundTrip(t, l)
	if s, ok := b.Steps[0].Spec.(*vspherecheck.Spec); !ok || s.Check != vspherecheck.DPUs || b.Steps[1].Spec != nil {
		t.Errorf("after the round trip: %#v, %#v", b.Steps[0].Spec, b.Steps[1].Spec)
	}

	got := kindtest.Problems(t, head+`  - id: c1
    title: Not a check
    kind: check
    vsphere: uptv3
  - id: c2
    title: With a command
    kind: check
    vsphere: dpus
    sudo: true
    verify:
      run: "true"
  - id: c3
    title: Neither
    kind: check
  - id: r
    title: On a run step
    kind: run
    run: "true"
    vsphere: dpus
`, nil)
	want := []string{
		`lab.yaml:10: step c1: vsphere: "uptv3" is not a vSphere check: use one of uptv2, uptv2-off, dpus, network-offload`,
		`lab.yaml:14: step c2: a check step with vsphere: asks vCenter, it runs no command of its own: remove verify: and sudo: (skip_if: still runs on the host)`,
		`lab.yaml:18: step c3: a check step needs verify: {run: COMMAND, ...} (or vsphere: uptv2|uptv2-off|dpus|network-offload)`,
		`lab.yaml:25: step r: unknown key "vsphere" (allowed: confirm, doc, hint, id, kind, on, record, run, skip_if, sudo, timeout, title, verify)`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
