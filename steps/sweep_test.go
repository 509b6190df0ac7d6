//go:build unix

package steps

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/dpulab/dpulab/labs/tco"
)

// TestSweepVariantsAndTCO runs a compare swept over instances with a
// variant that changes server settings: the engine redeploys exactly when
// the wanted deployment changes, and the tco step reads its inputs.
func TestSweepVariantsAndTCO(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds dpulab and runs servers")
	}
	bin := dpulabBinary(t)
	port := freePorts(t, 2)
	lab := loadLab(t, fmt.Sprintf(`
id: sweep
title: Sweep
summary: sweeps instances
duration: 1m
roles:
  local: this machine
variables:
  instances:
    type: int
    default: 1
    min: 1
    max: 4
    description: servers
steps:
  - id: deploy
    title: Deploy
    kind: deploy
    group: g
    instances: "{{.vars.instances}}"
    port: %d
  - id: compare
    title: Sweep instances
    kind: compare
    target: g
    clients: 1
    pipeline: 4
    key_maximum: 100
    duration: 1s
    runs: 1
    sweep:
      var: instances
      values: ["1", "2"]
    variants:
      - label: plain
        transport: tcp
      - label: tuned
        transport: tcp
        settings:
          maxclients: 500
  - id: tco
    title: Fleet savings
    kind: tco
    from: compare
    inputs:
      servers: 10000
      servers_saved_pct: 16
  - id: cleanup
    title: Cleanup
    kind: cleanup
    run: "true"
`, port))
	rec := &recorder{}
	resDir := filepath.Join(t.TempDir(), "results")
	e := newEngine(t, lab, Options{Binary: bin, ResultsDir: resDir}, rec)
	if err := e.Run(testCtx(t, 3*time.Minute)); err != nil {
		t.Fatalf("run: %v\n%s", err, strings.Join(rec.output(), "\n"))
	}
	started := 0
	for _, l := range rec.output() {
		if strings.HasPrefix(l, "started server:g:") {
			started++
		}
	}
	// deploy: 1; tuned@1: 1 (settings differ); plain@2: 2; tuned@2: 2.
	if started != 6 {
		t.Errorf("%d server starts, want 6 (redeploy only when the deployment changes):\n%s", started, strings.Join(rec.output(), "\n"))
	}
	r, err := results.LoadResults(resDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Benches) != 1 || r.Benches[0].Sweep != "instances" {
		t.Fatalf("benches = %+v", r.Benches)
	}
	c := r.Benches[0]
	for _, v := range c.Variants {
		if len(v.Points) != 2 || v.Points[0].Value != "1" || v.Points[1].Value != "2" {
			t.Fatalf("%s points = %+v", v.Label, v.Points)
		}
		for _, p := range v.Points {
			if p.Stats.OpsPerSec.Mean <= 0 {
				t.Errorf("%s at %s: no TPS", v.Label, p.Value)
			}
		}
	}
	if c.Variants[1].Settings["maxclients"] != "500" || c.Variants[0].Settings["maxclients"] != "" {
		t.Errorf("settings = %v / %v", c.Variants[0].Settings, c.Variants[1].Settings)
	}
	if got := c.Variants[0].Points[1].Stats.OpsPerSec.N; got != 1 {
		t.Errorf("runs at point 2 = %d", got)
	}
	for _, p := range c.Variants[1].Points {
		if _, ok := p.DeltaPct[results.MetricOps]; !ok {
			t.Errorf("tuned at %s: no delta", p.Value)
		}
	}
	if r.TCO == nil || r.TCO.Outputs[tco.ServersSaved] != 1600 || r.TCO.Inputs[tco.SavedPct] != 16 {
		t.Errorf("tco = %+v", r.TCO)
	}
}

// TestDeployFailureNamesInstance starts a server with a config it refuses:
// the step fails fast, naming the instance and showing its log.
func TestDeployFailureNamesInstance(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds dpulab and runs servers")
	}
	bin := dpulabBinary(t)
	port := freePorts(t, 1)
	lab := loadLab(t, fmt.Sprintf(`
id: baddeploy
title: Bad deploy
summary: a server that cannot start
duration: 1m
roles:
  local: this machine
steps:
  - id: deploy
    title: Deploy
    kind: deploy
    group: g
    instances: 1
    port: %d
    settings:
      maxclients: not-a-number
    hint: look at the server log
`, port))
	rec := &recorder{}
	e := newEngine(t, lab, Options{Binary: bin}, rec)
	err := e.Run(testCtx(t, time.Minute))
	if err == nil {
		t.Fatal("deploy with a bad setting passed")
	}
	f := rec.finished()["deploy"]
	want := fmt.Sprintf("instance g:%d on local is not up", port)
	if f.Status != results.Failed || !strings.Contains(f.Err, want) || f.Host != "local" || f.Hint == "" {
		t.Errorf("failure = %+v, want %q", f, want)
	}
	if !strings.Contains(strings.Join(f.Tail, "\n"), "maxclients") {
		t.Errorf("the server's log is not in the failure: %q", f.Tail)
	}
	// Said for what it is, a process that exited, not a PING timeout (no
	// bound on the time: this machine is shared and noisy).
	if !strings.Contains(f.Err, "exited") {
		t.Errorf("failure %q: want the server process named as exited", f.Err)
	}
}
