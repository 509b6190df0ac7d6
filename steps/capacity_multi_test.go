//go:build unix

package steps

import (
	"context"
	"fmt"
	"math"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/results"
)

// probeRecorder is a host's SSH target whose measuring benches reach the
// server through the throttle (as redirectTarget) and are recorded: which
// rate each capacity probe asked of this host.
type probeRecorder struct {
	runner.Target
	host, from, to string
	mu             *sync.Mutex
	rates          map[string][]float64
}

var startRateArg = regexp.MustCompile(` --capacity-start-rate ([0-9.e+]+) `)

func (r probeRecorder) Run(ctx context.Context, c runner.Command) (runner.Result, error) {
	if strings.Contains(c.Cmd, " bench --json ") && !strings.Contains(c.Cmd, " --requests 1 ") {
		c.Cmd = strings.ReplaceAll(c.Cmd, " --target "+r.from+" ", " --target "+r.to+" ")
		if m := startRateArg.FindStringSubmatch(c.Cmd); m != nil {
			v, err := strconv.ParseFloat(m[1], 64)
			if err == nil {
				r.mu.Lock()
				r.rates[r.host] = append(r.rates[r.host], v)
				r.mu.Unlock()
			}
		}
	}
	return r.Target.Run(ctx, c)
}

// TestCapacityFromThreeClientHosts: a capacity search whose load comes
// from three client hosts (each a real sshd on this machine) against one
// server host, through a throttle that forwards 800 commands/s (as
// TestCapacityThroughEngine). The engine drives the search: every probe
// runs on the three hosts at once with their shares of its rate (4
// connections split 2, 1, 1: half, a quarter, a quarter), is judged on
// their merged latencies, and the search must find the throttle's capacity
// within its precision (the same bounds as the single-host test). Each
// host's bench must have been asked its share of every probe's rate, the
// probe log must carry the shares adding up to the probe, and the answer
// must carry the server CPU at the probe that found it.
func TestCapacityFromThreeClientHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts four sshd and runs a capacity search over them")
	}
	const capacity = 800
	bin := dpulabBinary(t)
	port := freePorts(t, 1)
	backend := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	proxy := testpeer.Throttle(t, backend, capacity)
	clients := []string{"load1", "load2", "load3"}
	in := sshdHosts(t, append(clients, "srv"), map[string]string{"load1": "client", "load2": "client", "load3": "client", "srv": "server"})
	pool := runner.NewPool(in, runner.SSHOptions{})
	t.Cleanup(func() { _ = pool.Close() })
	var mu sync.Mutex
	asked := map[string][]float64{}
	targets := func(name string) (runner.Target, error) {
		h, ok := in.Host(name)
		if !ok {
			return nil, fmt.Errorf("no host %s", name)
		}
		tg, err := pool.Target(h)
		if err != nil {
			return nil, err
		}
		return probeRecorder{Target: tg, host: name, from: backend, to: proxy, mu: &mu, rates: asked}, nil
	}
	lab := loadLab(t, fmt.Sprintf(`
id: capacity-multi
title: Capacity from three client hosts
summary: a capacity search from three client hosts
duration: 5m
roles:
  client: load generators
  server: the server host
steps:
  - id: deploy
    title: Deploy
    kind: deploy
    on: [server]
    group: g
    instances: 1
    port: %d
  - id: bench
    title: Capacity
    kind: bench
    on: [client]
    target: g
    clients: 4
    pipeline: 4
    key_maximum: 100
    duration: 3s
    capacity:
      objective: 'p50<=25ms'
      start_rate: 350
`, port))
	rec := &recorder{}
	resDir := filepath.Join(t.TempDir(), "results")
	e := newEngine(t, lab, Options{Binary: bin, Inventory: in, Targets: targets, ResultsDir: resDir, Yes: true}, rec)
	if err := e.Run(testCtx(t, 6*time.Minute)); err != nil {
		t.Fatalf("run: %v\n%s", err, strings.Join(rec.output(), "\n"))
	}
	t.Logf("\n%s", strings.Join(rec.output(), "\n"))
	r, err := results.LoadResults(resDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Benches) != 1 || len(r.Benches[0].Variants) != 1 || len(r.Benches[0].Variants[0].Points) != 1 {
		t.Fatalf("results: %+v", r.Benches)
	}
	pt := r.Benches[0].Variants[0].Points[0]
	k := pt.Capacity
	if k == nil {
		t.Fatal("no capacity in results.json")
	}
	if len(pt.Runs) != 1 || len(pt.Runs[0].Clients) != 3 {
		t.Fatalf("flat-out runs %d (want 1, from 3 client hosts)", len(pt.Runs))
	}
	delivered := pt.Runs[0].OpsPerSec
	// The lower bound leaves 20%: on a loaded machine (a load of 5 on 2
	// cores) the machine's own latency failed the objective at 678 ops/s,
	// below the throttle, and the search rightly answered what it measured.
	// The test is of the search's convergence, not of this machine's speed.
	lo := min(capacity, delivered) / (1 + k.Precision) * 0.8
	hi := capacity * (1 + (0.025+testpeer.ThrottleBank.Seconds())/1.5) * 1.02
	if k.RateOpsPerSec < lo || k.RateOpsPerSec > hi {
		t.Errorf("found %.0f ops/s at %s, want %.0f..%.0f (the throttle serves %d/s; %.0f flat out)", k.RateOpsPerSec, k.Objective, lo, hi, capacity, delivered)
	}
	if k.FailedRateOpsPerSec <= k.RateOpsPerSec || k.FailedRateOpsPerSec > k.RateOpsPerSec*(1+k.Precision) {
		t.Errorf("bracket %.0f..%.0f is not within the precision %g", k.RateOpsPerSec, k.FailedRateOpsPerSec, k.Precision)
	}
	if k.Probes != len(k.ProbeLog) || k.Probes < 4 || k.Err != "" || k.Limit != "" {
		t.Errorf("search: %d probes, %d logged, limit %q, error %q", k.Probes, len(k.ProbeLog), k.Limit, k.Err)
	}
	if strings.Join(k.Clients, ",") != "load1,load2,load3" {
		t.Errorf("the search's client hosts: %v", k.Clients)
	}
	// Every probe's rate, split 2:1:1 as the connections are.
	weights := []float64{0.5, 0.25, 0.25}
	mu.Lock()
	defer mu.Unlock()
	for i, host := range clients {
		// The host's first bench is the flat-out run (no start rate).
		got := asked[host]
		if len(got) != len(k.ProbeLog) {
			t.Errorf("%s ran %d capacity probes (%v), want %d", host, len(got), got, len(k.ProbeLog))
			continue
		}
		for j, p := range k.ProbeLog {
			if want := p.RateOpsPerSec * weights[i]; math.Abs(got[j]-want) > 1e-6*want {
				t.Errorf("probe %d at %.1f ops/s: %s was asked %.3f, want its share %.3f", p.Probe, p.RateOpsPerSec, host, got[j], want)
			}
		}
	}
	for _, p := range k.ProbeLog {
		if len(p.Clients) != 3 {
			t.Errorf("probe %d: %d client shares, want 3", p.Probe, len(p.Clients))
			continue
		}
		var rate, ops float64
		for i, c := range p.Clients {
			if c.Host != clients[i] {
				t.Errorf("probe %d share %d is %s's, want %s's", p.Probe, i, c.Host, clients[i])
			}
			rate += c.RateOpsPerSec
			ops += c.OpsPerSec
		}
		if math.Abs(rate-p.RateOpsPerSec) > 1e-6*p.RateOpsPerSec || math.Abs(ops-p.OpsPerSec) > 1e-6*math.Max(1, p.OpsPerSec) {
			t.Errorf("probe %d: %.3f ops/s asked and %.3f answered, its shares add up to %.3f and %.3f", p.Probe, p.RateOpsPerSec, p.OpsPerSec, rate, ops)
		}
		if p.ServerCPU == nil {
			t.Errorf("probe %d: no server CPU", p.Probe)
		}
	}
	if k.ServerCPU == nil || k.ServerCPUProbe == 0 {
		t.Errorf("no server CPU at the found rate (probe %d)", k.ServerCPUProbe)
	} else if fp := k.ProbeLog[k.ServerCPUProbe-1]; !fp.Pass || fp.RateOpsPerSec != k.RateOpsPerSec {
		t.Errorf("the server CPU is probe %d's (%.0f ops/s, pass %v), not the found one's (%.0f)", k.ServerCPUProbe, fp.RateOpsPerSec, fp.Pass, k.RateOpsPerSec)
	}
	if !containsLine(rec.output(), "capacity search from 3 client hosts") || !containsLine(rec.output(), "load3's share: ") {
		t.Errorf("the run did not say its hosts and their shares")
	}
	t.Logf("flat out %.0f ops/s from 3 hosts; TPS at %s: %.0f (lowest failure %.0f) in %d probes, server CPU %.1f%% there (probe %d); throttle %d/s",
		delivered, k.Objective, k.RateOpsPerSec, k.FailedRateOpsPerSec, k.Probes, deref(k.ServerCPU), k.ServerCPUProbe, capacity)
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// TestCapacityMultiPlanned: the dry run of a capacity search over three
// client hosts shows, on each host, its bench for the first probe at its
// share of the start rate (4 connections split 2, 1, 1).
func TestCapacityMultiPlanned(t *testing.T) {
	in, err := runner.ParseInventory("hosts.yaml", []byte(`hosts:
  - {name: load1, address: 10.0.0.1, roles: [client]}
  - {name: load2, address: 10.0.0.2, roles: [client]}
  - {name: load3, address: 10.0.0.3, roles: [client]}
  - {name: srv, address: 10.0.0.9, roles: [server]}
`))
	if err != nil {
		t.Fatal(err)
	}
	lab := loadLab(t, `
id: capacity-multi-plan
title: Capacity plan
summary: a capacity search from three client hosts, planned
duration: 5m
roles:
  client: load generators
  server: the server host
steps:
  - id: deploy
    title: Deploy
    kind: deploy
    on: [server]
    group: g
    instances: 1
    port: 7000
  - id: bench
    title: Capacity
    kind: bench
    on: [client]
    target: g
    clients: 4
    duration: 3s
    capacity:
      objective: 'p99<=1ms'
      start_rate: 400
      mode: instead
`)
	rec := &recorder{}
	e := newEngine(t, lab, Options{DryRun: true, Inventory: in}, rec)
	if err := e.Run(testCtx(t, 30*time.Second)); err != nil {
		t.Fatalf("dry run: %v", err)
	}
	want := map[string]string{"load1": "200", "load2": "100", "load3": "100"}
	got := map[string]string{}
	said := false
	for _, ev := range rec.events() {
		s, ok := ev.(StepStarted)
		if !ok || s.Step != "bench" {
			continue
		}
		for _, c := range s.Commands {
			if strings.Contains(c.Cmd, "driven by the engine from 3 client hosts") {
				said = true
			}
			if m := startRateArg.FindStringSubmatch(c.Cmd + " "); m != nil && strings.Contains(c.Cmd, " bench --json ") {
				if !strings.Contains(c.Cmd, "--capacity-max-rate "+m[1]) {
					t.Errorf("%s's probe bench is not held at its share: %s", c.Host, c.Cmd)
				}
				got[c.Host] = m[1]
			}
		}
	}
	if !said || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("planned first-probe rates %v (engine-driven said: %v), want %v", got, said, want)
	}
}
