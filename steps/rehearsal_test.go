package steps

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/steps/results"
)

// rehearsalLab has two roles that the default inventory both maps to this
// machine, a hardware check that fails here, a compare across the roles
// and a TCO step: a DPU lab in miniature.
func rehearsalLab(port int) string {
	return fmt.Sprintf(`
id: rehearsal-test
title: A DPU lab in miniature
summary: Two roles, a hardware check, a compare and a TCO.
duration: 1m
roles:
  baseline: The standard NIC host.
  accelerated: The DPU host.
steps:
  - id: dpu-mode
    title: Check that the DPU is in DPU mode
    kind: check
    on: accelerated
    hardware: true
    verify:
      run: "false"
    hint: The card is not in DPU mode.
  - id: deploy-baseline
    title: Start the baseline servers
    kind: deploy
    on: baseline
    group: base
    instances: 1
    port: %d
  - id: deploy-accelerated
    title: Start the accelerated servers
    kind: deploy
    on: accelerated
    group: accel
    instances: 1
    port: %d
  - id: compare
    title: Standard NIC against the DPU
    kind: compare
    on: baseline
    key_maximum: 100
    warmup: 0s
    duration: 1s
    runs: 2
    variants:
      - label: standard NIC
        on: baseline
        group: base
      - label: DPU
        on: accelerated
        group: accel
  - id: tco
    title: Fleet savings
    kind: tco
    from: compare
    inputs:
      servers: 10000
  - id: cleanup
    title: Clean up
    kind: cleanup
    on: [baseline, accelerated]
    run: "true"
`, port, port+1)
}

// TestRehearsal: the same lab without --rehearse stops at the hardware
// check, saying what --rehearse does; with it, the check is skipped with a
// note, no TCO is estimated, and results.json, report.md and the headless
// output all say REHEARSAL with the reason (both roles are this machine).
func TestRehearsal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds dpulab and runs a small compare")
	}
	bin := dpulabBinary(t)
	lab := loadLab(t, rehearsalLab(freePorts(t, 2)))

	rec := &recorder{}
	e := newEngine(t, lab, Options{Binary: bin, Yes: true}, rec)
	if err := e.Run(testCtx(t, time.Minute)); err == nil {
		t.Fatal("without --rehearse the run passed its failing hardware check")
	}
	f := rec.finished()["dpu-mode"]
	if f.Status != results.Failed || !strings.Contains(f.Hint, "--rehearse") || !strings.Contains(f.Hint, "not in DPU mode") {
		t.Errorf("the hardware check: status %s, hint %q; want failed, the lab's hint and what --rehearse does", f.Status, f.Hint)
	}
	if _, ok := rec.finished()["compare"]; ok {
		t.Errorf("the run went on past the failed hardware check")
	}

	rec = &recorder{}
	resDir := filepath.Join(t.TempDir(), "results")
	var out strings.Builder
	p := NewPrinter(&out)
	e = newEngine(t, lab, Options{Binary: bin, Yes: true, Rehearse: true, ResultsDir: resDir}, rec)
	e.opts.Emit = func(ev Event) { rec.emit(ev); p.Print(ev) }
	if err := e.Run(testCtx(t, 2*time.Minute)); err != nil {
		t.Fatalf("rehearsal: %v\n%s", err, out.String())
	}
	if f := rec.finished()["dpu-mode"]; f.Status != results.Skipped {
		t.Errorf("the hardware check in a rehearsal: %s, want skipped", f.Status)
	}
	if f := rec.finished()["tco"]; f.Status != results.Skipped {
		t.Errorf("the TCO in a rehearsal: %s, want skipped", f.Status)
	}
	r, err := results.LoadResults(resDir)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Rehearsal || !strings.Contains(r.RehearsalReason, "--rehearse") || !strings.Contains(r.RehearsalReason, `"standard NIC" (role baseline) and "DPU" (role accelerated) of step compare run on the same host (local)`) {
		t.Errorf("results.json: rehearsal %v, reason %q", r.Rehearsal, r.RehearsalReason)
	}
	if r.TCO != nil {
		t.Errorf("a rehearsal carries a TCO estimate: %+v", r.TCO)
	}
	md, err := os.ReadFile(filepath.Join(resDir, results.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(md), "# REHEARSAL: ") {
		t.Errorf("report.md does not open with REHEARSAL:\n%.300s", md)
	}
	text := out.String()
	if strings.Count(text, "REHEARSAL: no DPU in this run") < 2 || !strings.Contains(text, "REHEARSAL: hardware check not run") || !strings.Contains(text, "REHEARSAL: no TCO estimate") {
		t.Errorf("headless output does not say REHEARSAL at the start, the skipped check, the TCO and the end:\n%s", text)
	}
}
