package command_test

import (
	"strings"
	"testing"

	"github.com/dpulab/dpulab/steps/kind/kindtest"
	"github.com/dpulab/dpulab/steps/kinds/command"
)

// TestRecordKey: run's record: is this package's: read into RunSpec,
// checked against RecordFormats, written back by Encode; a run step
// without it keeps no Spec, and no other kind takes it.
func TestRecordKey(t *testing.T) {
	const head = `id: keys
title: Keys
summary: run steps
duration: 1m
roles: [local]
steps:
`
	l := kindtest.Lab(t, head+`  - id: perf
    title: Perf
    kind: run
    run: ib_send_lat
    record: perftest
  - id: plain
    title: Plain
    kind: run
    run: "true"
`, nil)
	if r, ok := l.Steps[0].Spec.(*command.RunSpec); !ok || r.Record != "perftest" {
		t.Errorf("record: read as %#v", l.Steps[0].Spec)
	}
	if l.Steps[1].Spec != nil {
		t.Errorf("a run step without record: keeps %#v", l.Steps[1].Spec)
	}
	b := kindtest.RoundTrip(t, l)
	if r, ok := b.Steps[0].Spec.(*command.RunSpec); !ok || r.Record != "perftest" || b.Steps[1].Spec != nil {
		t.Errorf("after the round trip: %#v, %#v", b.Steps[0].Spec, b.Steps[1].Spec)
	}

	got := kindtest.Problems(t, head+`  - id: r1
    title: Bad record
    kind: run
    run: "true"
    record: perfest
  - id: r2
    title: Not a string
    kind: run
    run: "true"
    record: [a, b]
  - id: c
    title: Record on a check
    kind: check
    verify: {run: "true"}
    record: perftest
`, nil)
	want := []string{
		`lab.yaml:11: step r1: record "perfest": want one of perftest`,
		`lab.yaml:16: step r2 record must be a single value, not a list`,
		`lab.yaml:16: step r2: record "": want one of perftest`,
		`lab.yaml:21: step c: unknown key "record" (allowed: confirm, doc, hardware, hint, id, kind, on, skip_if, sudo, timeout, title, verify)`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
