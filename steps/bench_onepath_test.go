//go:build unix

package steps

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/steps/kinds/load"
	"github.com/dpulab/dpulab/steps/kinds/load/loadtest"
	"github.com/dpulab/dpulab/steps/results"
)

// clientBenchFake is a client host whose `dpulab bench` prints one run of two
// seconds at ops ops/s (latencies as given, and a histogram), and whose
// clock reads this machine's.
func clientBenchFake(t *testing.T, name string, ops float64) *fakeTarget {
	_, enc := loadtest.Hist(t, 100, 200, 300)
	f := &fakeTarget{name: name}
	f.handle = func(cmd string) ([]string, int) {
		switch {
		case cmd == "date +%s.%N":
			now := time.Now()
			return []string{fmt.Sprintf("%d.%09d", now.Unix(), now.Nanosecond())}, 0
		case strings.Contains(cmd, " bench --json "):
			var out []string
			for _, ev := range []any{
				benchwire.Sample{Run: 1, T: 1, OpsPerSec: ops, LatencyMs: benchwire.Latency{Avg: 1.5, P99: 7.25}, LatencyHDR: enc},
				benchwire.Sample{Run: 1, T: 2, OpsPerSec: ops, LatencyMs: benchwire.Latency{Avg: 1.5, P99: 7.25}, LatencyHDR: enc},
				benchwire.RunResult{Run: 1, Totals: benchwire.Totals{Seconds: 2, Ops: int64(2 * ops), OpsPerSec: ops, LatencyMs: benchwire.Latency{Avg: 1.5, P99: 7.25}, LatencyHDR: enc}},
			} {
				b, err := json.Marshal(ev)
				if err != nil {
					t.Error(err)
				}
				out = append(out, string(b))
			}
			return out, 0
		}
		return nil, 0
	}
	return f
}

// TestBenchOnePath: a job from one client host and one from two go the
// same way (runBench), one host being the case n = 1: it checks no clock
// and sets no common start, and its figures are the bench's own (no
// per-host view, no per-host series); two hosts have their clocks read,
// start at one instant, and their figures merged with each one's share.
func TestBenchOnePath(t *testing.T) {
	const lab = `
id: onepath
title: One path
summary: the bench from one client host or two
duration: 1m
roles:
  web: web servers
steps:
  - id: say
    title: Say
    kind: run
    on: [web]
    run:
      - "true"
`
	for _, n := range []int{1, 2} {
		t.Run(fmt.Sprint(n, " client hosts"), func(t *testing.T) {
			fakes := map[string]*fakeTarget{}
			var clients []hostRef
			for i := range n {
				name := fmt.Sprintf("c%d", i+1)
				fakes[name] = clientBenchFake(t, name, 1000)
				clients = append(clients, hostRef{Name: name, Role: "web"})
			}
			rec := &recorder{}
			e := fakeLab(t, lab, fakes, rec)
			job := load.BenchJob{Step: "b", Variant: "tcp", Label: "tcp", Client: clients[0], Clients: clients,
				Config: benchwire.Config{Clients: 2, Runs: 1, Duration: 2 * time.Second}, ProgressSpan: 1, StepStart: time.Now()}
			runs, err := load.RunBench(testCtx(t, 30*time.Second), kindEnv{e}, job)
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != 1 {
				t.Fatalf("%d runs, want 1", len(runs))
			}
			r := runs[0]
			for _, f := range fakes {
				var clock, benches, startAt int
				for _, c := range f.commands() {
					if c == "date +%s.%N" {
						clock++
					}
					if strings.Contains(c, " bench --json ") {
						benches++
						if strings.Contains(c, "--start-at") {
							startAt++
						}
					}
				}
				if benches != 1 {
					t.Errorf("%s ran %d benches, want 1", f.name, benches)
				}
				if n == 1 && (clock != 0 || startAt != 0) {
					t.Errorf("one client host: its clock read %d times, %d benches with --start-at; want neither", clock, startAt)
				}
				if n > 1 && (clock == 0 || startAt != 1) {
					t.Errorf("%s of %d client hosts: clock read %d times, %d benches with --start-at; want it read and the bench started at the common instant", f.name, n, clock, startAt)
				}
			}
			var samples []Sample
			for _, ev := range rec.events() {
				if s, ok := ev.(Sample); ok {
					samples = append(samples, s)
				}
			}
			if len(samples) != 2 {
				t.Fatalf("%d seconds shown, want 2", len(samples))
			}
			want := 1000 * float64(n)
			for _, s := range samples {
				if s.Point.OpsPerSec != want || len(s.Clients) != map[int]int{1: 0, 2: 2}[n] {
					t.Errorf("second %+v: want %g ops/s and a per-host view only from several hosts", s, want)
				}
			}
			if r.OpsPerSec != want || len(r.Series) != 2 {
				t.Errorf("run: %g ops/s over %d seconds, want %g over 2", r.OpsPerSec, len(r.Series), want)
			}
			switch n {
			case 1:
				if r.Clients != nil || r.StartSkewMs != nil || r.LatencyMs != (results.Latency{Avg: 1.5, P99: 7.25}) || samples[0].Point.LatencyMs != r.LatencyMs {
					t.Errorf("one client host: run %+v, first second %+v; want the bench's own figures, no per-host series, no start skew", r, samples[0].Point)
				}
			default:
				if len(r.Clients) != n || r.Clients[1].Host != "c2" || r.Clients[1].OpsPerSec != 1000 {
					t.Errorf("run's per-host series %+v, want each host's share", r.Clients)
				}
			}
		})
	}
}
