//go:build unix

package steps

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/steps/kinds/load"
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
	// Every figure the headless log shows is labelled: a line copied out
	// of it still says it is no DPU's.
	figures := 0
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "ops/s") {
			figures++
			if !strings.Contains(l, "[REHEARSAL]") {
				t.Errorf("a figure without REHEARSAL: %q", l)
			}
		}
	}
	if figures == 0 {
		t.Errorf("no figure in the headless output:\n%s", text)
	}
}

// TestRehearsalVars: in a rehearsal the lab's rehearsal values apply to
// the variables --set did not give: the interface and MTU of this
// machine's default route (the lowest metric), a literal value; not
// without --rehearse, and said in the output.
func TestRehearsalVars(t *testing.T) {
	dir := t.TempDir()
	route := "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n" +
		"wlan0\t00000000\t0101A8C0\t0003\t0\t0\t600\t00000000\t0\t0\t0\n" +
		"enp3s0\t00000000\t010200C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n" +
		"enp3s0\t000200C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0\n"
	if err := os.WriteFile(filepath.Join(dir, "route"), []byte(route), 0o644); err != nil {
		t.Fatal(err)
	}
	for ifc, mtu := range map[string]string{"enp3s0": "9000\n", "wlan0": "1500\n"} {
		if err := os.MkdirAll(filepath.Join(dir, "net", ifc), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "net", ifc, "mtu"), []byte(mtu), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	oldRoute, oldNet := procNetRoute, sysClassNet
	procNetRoute, sysClassNet = filepath.Join(dir, "route"), filepath.Join(dir, "net")
	t.Cleanup(func() { procNetRoute, sysClassNet = oldRoute, oldNet })

	lab := loadLab(t, `
id: rv
title: Rehearsal values
summary: variables a rehearsal sets
duration: 1m
roles:
  client: load
variables:
  iface:
    type: string
    default: ens192
    description: the lab interface
    rehearsal: default-route
  mtu:
    type: int
    default: 1500
    description: its MTU
    rehearsal: default-route
  runs:
    type: int
    default: 3
    description: runs
    rehearsal: "1"
steps:
  - id: show
    title: Show
    kind: run
    on: client
    run: echo {{.vars.iface}} {{.vars.mtu}} {{.vars.runs}}
`)
	for _, tc := range []struct {
		name     string
		rehearse bool
		set      map[string]string
		want     map[string]string
	}{
		{"not a rehearsal", false, nil, map[string]string{"iface": "ens192", "mtu": "1500", "runs": "3"}},
		{"rehearsal", true, nil, map[string]string{"iface": "enp3s0", "mtu": "9000", "runs": "1"}},
		{"rehearsal with --set", true, map[string]string{"iface": "eth9", "runs": "2"}, map[string]string{"iface": "eth9", "mtu": "9000", "runs": "2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			e := newEngine(t, lab, Options{Rehearse: tc.rehearse, Vars: tc.set, DryRun: true}, rec)
			for k, v := range tc.want {
				if got := e.Vars()[k]; got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			e.announce()
			out := strings.Join(rec.output(), "\n")
			if said := strings.Contains(out, "REHEARSAL: variables set for a rehearsal on this machine: "); said != tc.rehearse {
				t.Errorf("the rehearsal values said: %v, want %v:\n%s", said, tc.rehearse, out)
			}
			if tc.rehearse && tc.set == nil && !strings.Contains(out, "iface=enp3s0 (this machine's default route, dev enp3s0), mtu=9000 (the MTU of enp3s0") {
				t.Errorf("output does not say where iface and mtu come from:\n%s", out)
			}
		})
	}
	// No default route: the lab's default is kept, and said with what to do.
	if err := os.WriteFile(filepath.Join(dir, "route"), []byte("Iface\tDestination\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	e := newEngine(t, lab, Options{Rehearse: true, DryRun: true}, rec)
	e.announce()
	if out := strings.Join(rec.output(), "\n"); e.Vars()["iface"] != "ens192" || !strings.Contains(out, "no IPv4 default route: --set iface=VALUE") {
		t.Errorf("iface %q; output:\n%s", e.Vars()["iface"], out)
	}
}

// TestSweepFromVariable: a compare's sweep may list a variable's values,
// so that --set shortens it.
func TestSweepFromVariable(t *testing.T) {
	lab := loadLab(t, `
id: sv
title: Sweep from a variable
summary: a sweep --set can shorten
duration: 1m
roles:
  client: load
  server: servers
variables:
  instances:
    type: int
    default: 1
    min: 1
    max: 8
    description: instances
  sweep:
    type: string
    default: "1,2,4,8"
    description: instances swept
steps:
  - id: deploy
    title: Deploy
    kind: deploy
    on: server
    group: g
    instances: "{{.vars.instances}}"
    port: 7000
  - id: compare
    title: Compare
    kind: compare
    on: client
    target: g
    duration: 1s
    runs: 1
    variants:
      - label: a
      - label: b
    sweep:
      var: instances
      values: "{{.vars.sweep}}"
`)
	points := func(set map[string]string) []string {
		e := newEngine(t, lab, Options{Vars: set, DryRun: true}, nil)
		p, err := e.resolve(&e.lab.Steps[1], e.Vars())
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, j := range p.(kindPlan).Plan.(*load.Plan).Jobs {
			if j.VI == 0 {
				out = append(out, j.Sweep)
			}
		}
		return out
	}
	if got := strings.Join(points(nil), ","); got != "1,2,4,8" {
		t.Errorf("default sweep %s", got)
	}
	if got := strings.Join(points(map[string]string{"sweep": "2, 4"}), ","); got != "2,4" {
		t.Errorf("--set sweep=2,4: %s", got)
	}
	e := newEngine(t, lab, Options{Vars: map[string]string{"sweep": "2,9"}, DryRun: true}, nil)
	if _, err := e.resolve(&e.lab.Steps[1], e.Vars()); err == nil || !strings.Contains(err.Error(), "9") {
		t.Errorf("a sweep value above the variable's max: %v", err)
	}
}
