//go:build unix

package steps

import (
	"fmt"
	"math"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dpulab/dpulab/internal/benchhdr"
	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/kinds/load/loadtest"
	"github.com/dpulab/dpulab/steps/results"
)

// sshdHosts is an inventory of one host per entry of roles, each behind an
// sshd of its own on 127.0.0.1 (named by the keys of roles, in order).
func sshdHosts(t *testing.T, names []string, roles map[string]string) *runner.Inventory {
	t.Helper()
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var kh, hosts strings.Builder
	for _, n := range names {
		sshd := testpeer.StartSSHD(t)
		b, err := os.ReadFile(sshd.KnownHosts)
		if err != nil {
			t.Fatal(err)
		}
		kh.Write(b)
		fmt.Fprintf(&hosts, "  - name: %s\n    address: 127.0.0.1\n    port: %d\n    user: %s\n    identity: %s\n    roles: [%s]\n", n, sshd.Port, u.Username, sshd.UserKey, roles[n])
	}
	khPath := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(khPath, []byte(kh.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	invPath := filepath.Join(dir, "hosts.yaml")
	if err := os.WriteFile(invPath, []byte("known_hosts: "+khPath+"\nhosts:\n"+hosts.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := runner.LoadInventory(invPath)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// unionLatency reads the latency summary of the union of encoded
// histograms, built here with HdrHistogram itself (the bench's shape:
// 1 µs..60 s, 3 significant digits).
func unionLatency(t *testing.T, encs []string) (results.Latency, int64) {
	t.Helper()
	h := hdrhistogram.New(1, 60_000_000, 3)
	for _, enc := range encs {
		d, err := benchhdr.DecodeHistogram(enc)
		if err != nil {
			t.Fatal(err)
		}
		h.Merge(d)
	}
	return loadtest.LatencyMs(h), h.TotalCount()
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestCompareFromThreeClientHosts is issue 17's test: a compare over 3
// client hosts and 2 server hosts, each a real sshd on this machine, with
// short runs. Every merged second's TPS is the sum of the hosts' TPS in
// that second; its percentiles (and the run's) are those of the union of
// the hosts' recorded latencies; each host's own series is in
// results.json, and report.md has a section per client host.
func TestCompareFromThreeClientHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts five sshd and runs a compare over them")
	}
	bin := dpulabBinary(t)
	clients := []string{"load1", "load2", "load3"}
	port := freePorts(t, 4)
	lab := loadLab(t, fmt.Sprintf(`
id: multiclient
title: Three client hosts
summary: one load from three client hosts against two server hosts
duration: 5m
roles:
  client: load generators
  baseline: the standard server host
  accelerated: the accelerated server host
steps:
  - id: deploy-std
    title: Servers on std
    kind: deploy
    on: [baseline]
    group: std
    instances: "2"
    port: "%d"
  - id: deploy-dpu
    title: Servers on dpu
    kind: deploy
    on: [accelerated]
    group: dpu
    instances: "2"
    port: "%d"
  - id: compare
    title: std against dpu
    kind: compare
    on: [client]
    target: std
    clients: 3
    pipeline: 2
    key_maximum: 1000
    warmup: 0s
    duration: 3s
    runs: 1
    variants:
      - label: std
        on: baseline
        group: std
      - label: dpu
        on: accelerated
        group: dpu
  - id: cleanup
    title: Cleanup
    kind: cleanup
    on: [client]
    run: "true"
`, port, port+2))
	in := sshdHosts(t, append(clients, "std", "dpu"), map[string]string{"load1": "client", "load2": "client", "load3": "client", "std": "baseline", "dpu": "accelerated"})
	rec := &recorder{}
	resDir := filepath.Join(t.TempDir(), "results")
	e := newEngine(t, lab, Options{Binary: bin, Inventory: in, ResultsDir: resDir, Yes: true}, rec)
	if err := e.Run(testCtx(t, 5*time.Minute)); err != nil {
		t.Fatalf("compare from three client hosts: %v\n%s", err, strings.Join(rec.output(), "\n"))
	}
	out := strings.Join(rec.output(), "\n")
	if !strings.Contains(out, "3 client hosts share the load; their clocks agree within") {
		t.Errorf("no clock check said:\n%s", out)
	}
	r, err := results.LoadResults(resDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Benches) != 1 || len(r.Benches[0].Variants) != 2 {
		t.Fatalf("benches: %+v", r.Benches)
	}
	c := r.Benches[0]
	if strings.Join(c.Clients, ",") != "load1,load2,load3" || c.Client != "load1" {
		t.Errorf("compare's client hosts: %q, %v", c.Client, c.Clients)
	}
	for _, v := range c.Variants {
		if len(v.Points) != 1 || len(v.Points[0].Runs) != 1 {
			t.Fatalf("%s: points %+v", v.Label, v.Points)
		}
		run := v.Points[0].Runs[0]
		if len(run.Clients) != 3 {
			t.Fatalf("%s: %d client series, want 3", v.Label, len(run.Clients))
		}
		if run.ClockSpreadMs == nil || run.StartSkewMs == nil {
			t.Errorf("%s: clock spread %v, start skew %v: not recorded", v.Label, run.ClockSpreadMs, run.StartSkewMs)
		}
		var hostOps float64
		var runHists []string
		for i, cs := range run.Clients {
			if cs.Host != clients[i] || len(cs.Series) < 3 || cs.OpsPerSec <= 0 || cs.ClockOffsetMs == nil {
				t.Errorf("%s: client series %d: host %s, %d seconds, %g ops/s, clock %v", v.Label, i, cs.Host, len(cs.Series), cs.OpsPerSec, cs.ClockOffsetMs)
			}
			hostOps += cs.OpsPerSec
			runHists = append(runHists, cs.LatencyHDR)
		}
		if !near(run.OpsPerSec, hostOps) {
			t.Errorf("%s: run %g ops/s, hosts sum to %g", v.Label, run.OpsPerSec, hostOps)
		}
		if want, n := unionLatency(t, runHists); run.LatencyMs != want || n == 0 {
			t.Errorf("%s: run latency %+v, union of the hosts' histograms %+v (%d latencies)", v.Label, run.LatencyMs, want, n)
		}
		if len(run.Series) < 3 {
			t.Fatalf("%s: %d merged seconds", v.Label, len(run.Series))
		}
		for k, p := range run.Series {
			var sum float64
			var encs []string
			for _, cs := range run.Clients {
				if k < len(cs.Series) {
					sum += cs.Series[k].OpsPerSec
					encs = append(encs, cs.Series[k].LatencyHDR)
				}
			}
			if !near(p.OpsPerSec, sum) || sum <= 0 {
				t.Errorf("%s second %d: merged %g ops/s, hosts sum to %g", v.Label, k, p.OpsPerSec, sum)
			}
			if want, _ := unionLatency(t, encs); p.LatencyMs != want {
				t.Errorf("%s second %d: merged latency %+v, union's %+v", v.Label, k, p.LatencyMs, want)
			}
		}
		if v.Points[0].Stats.ServerCPU == nil {
			t.Errorf("%s: no server CPU from the sampler", v.Label)
		}
	}
	checkTargetsAndStart(t, rec, c, clients)
	md, err := os.ReadFile(filepath.Join(resDir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if _, sec, ok := strings.Cut(string(md), "### Client hosts"); ok {
		sec, _, _ = strings.Cut(sec, "\n## ")
		t.Logf("report.md's client-host section:\n### Client hosts%s", sec)
	}
	for _, want := range []string{"Client hosts", "load1", "load2", "load3"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

// checkTargetsAndStart: every merged second the dashboard got carries each
// server instance's share (the three hosts' per-target lines merged), and
// the shares add up to the second's TPS; every variant's hosts were given
// one common start, each on its own clock: a host's --start-at minus its
// measured clock offset is the same instant for all, to the millisecond
// the flag is given in (values the engine computed, not wall time); each
// bench said when it began.
func checkTargetsAndStart(t *testing.T, rec *recorder, c results.Compare, clients []string) {
	t.Helper()
	n := 0
	for _, ev := range rec.events() {
		s, ok := ev.(Sample)
		if !ok || s.Step != "compare" {
			continue
		}
		n++
		if len(s.Targets) != 2 || len(s.Clients) != 3 {
			t.Errorf("%s second %g: %d targets, %d client hosts; want 2, 3", s.Variant, s.Point.T, len(s.Targets), len(s.Clients))
			continue
		}
		var sum float64
		for _, tg := range s.Targets {
			if tg.Host != s.Variant {
				t.Errorf("%s second %g: target %s on host %q", s.Variant, s.Point.T, tg.Target, tg.Host)
			}
			sum += tg.OpsPerSec
		}
		if sum <= 0 || math.Abs(sum-s.Point.OpsPerSec) > 1e-6*s.Point.OpsPerSec {
			t.Errorf("%s second %g: instances sum to %g ops/s, the second is %g", s.Variant, s.Point.T, sum, s.Point.OpsPerSec)
		}
	}
	if n < 6 {
		t.Errorf("%d merged seconds reached the dashboard, want 3 per variant", n)
	}
	var starts, began []string
	for _, l := range rec.output() {
		if strings.HasPrefix(l, "the client hosts connect, then begin together at ") {
			starts = append(starts, l)
		}
		if strings.HasPrefix(l, "every client host began within ") {
			began = append(began, l)
		}
	}
	if len(starts) != len(c.Variants) || len(began) != len(c.Variants) {
		t.Fatalf("common start said %d times, began %d times; want once per variant:\n%s", len(starts), len(began), strings.Join(rec.output(), "\n"))
	}
	for vi, v := range c.Variants {
		run := v.Points[0].Runs[0]
		var common []float64
		for i, h := range clients {
			var at int64
			_, rest, ok := strings.Cut(starts[vi], h+" --start-at ")
			if ok {
				_, err := fmt.Sscanf(rest, "%d", &at)
				ok = err == nil
			}
			cs := run.Clients[i]
			if !ok || cs.ClockOffsetMs == nil || cs.ClockUncertaintyMs == nil {
				t.Fatalf("%s: no --start-at for %s in %q (offset %v)", v.Label, h, starts[vi], cs.ClockOffsetMs)
			}
			// The offset is applied when it exceeds its uncertainty.
			off := *cs.ClockOffsetMs
			if math.Abs(off) <= *cs.ClockUncertaintyMs {
				off = 0
			}
			common = append(common, float64(at)-off)
		}
		for i := range common {
			if math.Abs(common[i]-common[0]) > 1 {
				t.Errorf("%s: %s's --start-at minus its clock offset is %.3f ms, %s's %.3f: not one instant", v.Label, clients[i], common[i], clients[0], common[0])
			}
		}
		t.Logf("%s: %s; %s; start skew seen from here %.1f ms", v.Label, starts[vi], began[vi], *run.StartSkewMs)
	}
}
