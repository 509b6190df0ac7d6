//go:build unix

package steps

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/steps/kinds/load"
	"github.com/dpulab/dpulab/steps/kinds/load/loadtest"
	"github.com/dpulab/dpulab/steps/results"
)

// TestClientMergeTargets: a target driven from two client hosts has its
// ops and errors summed and its percentiles read from the union of the
// two hosts' latencies for it; a target only one host drives is its own;
// each is named with its server host.
func TestClientMergeTargets(t *testing.T) {
	m := load.NewClientMerge([]string{"c1", "c2"})
	m.TargetHosts = map[string]string{"10.0.0.1:7000": "srv1", "10.0.0.2:7000": "srv2"}
	m.OnMergeErr = func(err error) { t.Errorf("merge error: %v", err) }
	var got [][]TargetSecond
	m.OnPoint = func(run int, p results.Point, since time.Time, hosts []HostSecond, targets []TargetSecond) results.Point {
		got = append(got, targets)
		return p
	}
	m.OnRun = func(results.RunResult, time.Time) {}
	h1a, e1a := loadtest.Hist(t, 100, 200, 300)
	h2a, e2a := loadtest.Hist(t, 1000, 5000)
	_, e1b := loadtest.Hist(t, 50)
	_, tot := loadtest.Hist(t, 100)
	m.Sample(0, &benchwire.Sample{Run: 1, T: 1, OpsPerSec: 400, LatencyHDR: tot}, time.Now(),
		&benchwire.Sample{Run: 1, T: 1, Target: "10.0.0.1:7000", OpsPerSec: 300, Errors: 1, LatencyHDR: e1a},
		&benchwire.Sample{Run: 1, T: 1, Target: "10.0.0.2:7000", OpsPerSec: 100, LatencyHDR: e1b, LatencyMs: benchwire.Latency{P50: 0.05, P99: 0.05}})
	m.Sample(1, &benchwire.Sample{Run: 1, T: 1, OpsPerSec: 200, LatencyHDR: tot}, time.Now(),
		&benchwire.Sample{Run: 1, T: 1, Target: "10.0.0.1:7000", OpsPerSec: 200, Errors: 2, LatencyHDR: e2a})
	if len(got) != 1 || len(got[0]) != 2 {
		t.Fatalf("targets: %+v", got)
	}
	union := hdrhistogram.New(1, 60_000_000, 3)
	union.Merge(h1a)
	union.Merge(h2a)
	want := loadtest.LatencyMs(union)
	a, b := got[0][0], got[0][1]
	if a.Target != "10.0.0.1:7000" || a.Host != "srv1" || a.OpsPerSec != 500 || a.Errors != 3 || a.P50Ms != want.P50 || a.P99Ms != want.P99 {
		t.Errorf("target driven from both hosts: %+v, want 500 ops/s, 3 errors, p50 %g p99 %g (the union's)", a, want.P50, want.P99)
	}
	if b.Target != "10.0.0.2:7000" || b.Host != "srv2" || b.OpsPerSec != 100 || b.P50Ms != 0.05 {
		t.Errorf("target driven from one host: %+v", b)
	}
}

// TestBenchSamplesCarryTargets runs a real bench through the engine
// (bundled servers, 3 instances on this machine): every second the
// dashboard gets carries each instance's share, named with its host, and
// the instances' ops add up to the second's TPS.
func TestBenchSamplesCarryTargets(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds dpulab and runs servers")
	}
	bin := dpulabBinary(t)
	port := freePorts(t, 3)
	lab := loadLab(t, fmt.Sprintf(`
id: targets
title: Per-instance seconds
summary: a bench against three instances
duration: 1m
roles:
  local: this machine
steps:
  - id: deploy
    title: Deploy
    kind: deploy
    group: g
    instances: "3"
    port: %d
  - id: bench
    title: Bench
    kind: bench
    target: g
    clients: 2
    pipeline: 4
    key_maximum: 100
    duration: 3s
    runs: 1
  - id: cleanup
    title: Cleanup
    kind: cleanup
    run: "true"
`, port))
	rec := &recorder{}
	e := newEngine(t, lab, Options{Binary: bin, ResultsDir: filepath.Join(t.TempDir(), "results")}, rec)
	if err := e.Run(testCtx(t, 3*time.Minute)); err != nil {
		t.Fatalf("bench: %v\n%s", err, strings.Join(rec.output(), "\n"))
	}
	n := 0
	for _, ev := range rec.events() {
		s, ok := ev.(Sample)
		if !ok || s.Step != "bench" {
			continue
		}
		n++
		if len(s.Targets) != 3 {
			t.Errorf("second %g: %d targets, want 3: %+v", s.Point.T, len(s.Targets), s.Targets)
			continue
		}
		var sum float64
		for i, tg := range s.Targets {
			if want := fmt.Sprintf("127.0.0.1:%d", port+i); tg.Target != want || tg.Host == "" {
				t.Errorf("second %g target %d: %+v, want %s with its host", s.Point.T, i, tg, want)
			}
			if tg.OpsPerSec > 0 && (tg.P50Ms <= 0 || tg.P99Ms < tg.P50Ms) {
				t.Errorf("second %g %s: p50 %g p99 %g", s.Point.T, tg.Target, tg.P50Ms, tg.P99Ms)
			}
			sum += tg.OpsPerSec
		}
		if !near(sum, s.Point.OpsPerSec) || sum <= 0 {
			t.Errorf("second %g: instances sum to %g ops/s, the second is %g", s.Point.T, sum, s.Point.OpsPerSec)
		}
	}
	if n < 3 {
		t.Errorf("%d seconds reached the dashboard, want at least 3", n)
	}
}
