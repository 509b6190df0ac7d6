//go:build unix

package steps

// The one line that adds the sleep kind (steps/kinds/sleep) to this test
// binary: the same line in kinds_list.go would add it to dpulab.
import _ "github.com/dpulab/dpulab/steps/kinds/sleep"

import (
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/steps/results"
)

// TestANewKindThroughEverything: a kind added as one package and one
// import is read by labs (lint, Encode), planned, dry-run and run by the
// engine, and described to the TUI, with no other file touched.
func TestANewKindThroughEverything(t *testing.T) {
	const lab = `
id: sleepy
title: Sleepy
summary: a lab that waits
duration: 1m
roles:
  web: web servers
steps:
  - id: settle
    title: Settle
    kind: sleep
    for: 10ms
  - id: after
    title: After
    kind: run
    run: "true"
`
	l := loadLab(t, lab)
	if out, err := labs.Encode(l); err != nil || !strings.Contains(string(out), "for: 10ms") {
		t.Errorf("Encode lost the sleep step's for: (%v)\n%s", err, out)
	}
	if DescribeKind("sleep").Note != "waits" {
		t.Errorf("DescribeKind(sleep) = %+v", DescribeKind("sleep"))
	}

	dry := &recorder{}
	e := newEngine(t, l, Options{DryRun: true}, dry)
	if err := e.Run(testCtx(t, time.Minute)); err != nil {
		t.Fatalf("dry run: %v", err)
	}
	if out := strings.Join(dry.output(), "\n"); strings.Contains(out, "waited") {
		t.Errorf("the dry run waited:\n%s", out)
	}
	var planned []PlannedCommand
	for _, ev := range dry.events() {
		if s, ok := ev.(StepStarted); ok && s.Step == "settle" {
			planned = s.Commands
		}
	}
	if len(planned) != 1 || planned[0].Cmd != "# wait 10ms" {
		t.Errorf("dry run planned %+v", planned)
	}

	rec := &recorder{}
	e = newEngine(t, l, Options{}, rec)
	if st := e.RunStep(testCtx(t, time.Minute), 0); st != results.Done {
		t.Fatalf("sleep step: %s (%s)", st, rec.finished()["settle"].Err)
	}
	if out := strings.Join(rec.output(), "\n"); !strings.Contains(out, "waited 10ms") {
		t.Errorf("the sleep step did not say it waited:\n%s", out)
	}
}
