package load

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/kind/kindtest"
	"github.com/dpulab/dpulab/steps/kinds/load/loadtest"
)

const capacityLab = `
id: cap
title: Capacity
summary: a capacity search
duration: 1m
roles:
  client: the load generators
  server: the servers
steps:
  - id: deploy
    title: Deploy
    kind: deploy
    on: [server]
    group: g
    instances: 1
    port: "7000"
    bind: 0.0.0.0
  - id: bench
    title: Capacity
    kind: bench
    on: [client]
    target: g
    clients: 4
    duration: 2s
    capacity:
      objective: 'p50<=25ms'
      start_rate: 350
      mode: instead
`

// newCapacity is the capacity lab's step from clients (c1, c2, ...) with
// the fake runner that measures it.
func newCapacity(t *testing.T, clients int) (*fakeRunner, fakeEnv, *Plan) {
	t.Helper()
	ke := kindtest.New(kindtest.Lab(t, capacityLab, nil), "h1")
	ke.Roles["client"] = nil
	for i := range clients {
		ke.Roles["client"] = append(ke.Roles["client"], kind.Host{Name: "c" + strconv.Itoa(i+1), Role: "client", Address: "192.0.2.1" + strconv.Itoa(i)})
	}
	ke.Roles["server"] = []kind.Host{{Name: "s1", Role: "server", Address: "192.0.2.20"}}
	env := fakeEnv{Env: ke}
	p, err := Resolve(env, ke.Step(t, "bench"), nil)
	if err != nil {
		t.Fatal(err)
	}
	f := newFakeRunner(t, env)
	p.Env = f
	return f, env, p
}

// encodeLines is what the bench prints for events.
func encodeLines(t *testing.T, evs ...benchwire.Event) []string {
	t.Helper()
	var b bytes.Buffer
	for _, ev := range evs {
		if err := benchwire.Encode(&b, ev); err != nil {
			t.Fatal(err)
		}
	}
	return strings.Split(strings.TrimSpace(b.String()), "\n")
}

// TestCapacitySearchOneHost: from one client host the bench searches on
// its own (one `bench --capacity` command): each probe it reports is
// said and recorded, its answer is said, labelled, and written at the
// job's point with the probe log; no flat-out bench runs (mode: instead).
func TestCapacitySearchOneHost(t *testing.T) {
	f, env, p := newCapacity(t, 1)
	var cmds []string
	f.capacity = func(host, cmd string) []string {
		cmds = append(cmds, cmd)
		probe := func(n int, rate float64, pass bool) *benchwire.CapacityProbe {
			return &benchwire.CapacityProbe{Probe: n, RateOpsPerSec: rate, OpsPerSec: rate, DurationSeconds: 2, Ops: int64(2 * rate), PercentileMs: map[bool]float64{true: 1, false: 90}[pass], Pass: pass}
		}
		return encodeLines(t, benchwire.StreamHeader(),
			&benchwire.Sample{Run: 1, T: 1, OpsPerSec: 350}, probe(1, 350, true),
			&benchwire.Sample{Run: 2, T: 1, OpsPerSec: 700}, probe(2, 700, true),
			&benchwire.Sample{Run: 3, T: 1, OpsPerSec: 1400}, probe(3, 1400, false),
			&benchwire.Sample{Run: 4, T: 1, OpsPerSec: 735}, probe(4, 735, false),
			&benchwire.CapacityResult{Objective: "p50<=25ms", Percentile: 50, CapMs: 25, Precision: 0.05, RateOpsPerSec: 700, OpsPerSec: 700, Probe: 2, FailedRateOpsPerSec: 735, Probes: 4})
	}
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(cmds) != 1 || !strings.Contains(cmds[0], "--capacity 'p50<=25ms'") || !strings.Contains(cmds[0], "--capacity-start-rate 350") {
		t.Fatalf("capacity commands %q, want the bench's own search once", cmds)
	}
	for _, c := range commands(env, "c1") {
		if strings.Contains(c, " bench --json ") && !strings.Contains(c, "--capacity") {
			t.Errorf("a flat-out bench ran with mode instead: %s", c)
		}
	}
	last := f.written[len(f.written)-1]
	k := last.Variants[0].Points[0].Capacity
	if k == nil || k.RateOpsPerSec != 700 || k.FailedRateOpsPerSec != 735 || len(k.ProbeLog) != 4 || !k.ProbeLog[1].Pass || k.ProbeLog[2].Pass || len(k.Clients) != 0 {
		t.Fatalf("capacity %+v, want 700 ops/s found in 4 probes", k)
	}
	probes, found := 0, 0
	for _, l := range env.Lines() {
		if strings.Contains(l.Text, "capacity probe ") {
			probes++
		}
		if strings.Contains(l.Text, "TPS at p50 ≤ 25 ms: ") {
			found++
		}
	}
	if probes != 4 || found != 1 {
		t.Errorf("said %d probes and %d answers, want 4 and 1: %+v", probes, found, env.Lines())
	}
}

var probeRate = regexp.MustCompile(` --capacity-start-rate ([0-9.e+]+) `)

// TestCapacitySearchTwoHosts: from two client hosts the kind drives the
// search (benchwire.Search): every probe runs on both hosts at once, each
// at its half of the probe's rate, and is judged on their merged
// latencies; the answer brackets the rate (800 ops/s in all) above
// which the fake servers' replies are slow, within the precision, and
// carries each probe's shares.
func TestCapacitySearchTwoHosts(t *testing.T) {
	f, _, p := newCapacity(t, 2)
	var mu sync.Mutex
	asked := map[string][]float64{}
	_, fast := loadtest.Hist(t, 1000, 1000, 1000)
	_, slow := loadtest.Hist(t, 90000, 90000, 90000)
	f.capacity = func(host, cmd string) []string {
		m := probeRate.FindStringSubmatch(cmd)
		if m == nil {
			t.Errorf("probe command without its rate: %s", cmd)
			return nil
		}
		rate, _ := strconv.ParseFloat(m[1], 64)
		mu.Lock()
		asked[host] = append(asked[host], rate)
		mu.Unlock()
		hdr, lat := fast, benchwire.Latency{Avg: 1, P50: 1, P99: 1}
		if rate > 400 {
			hdr, lat = slow, benchwire.Latency{Avg: 90, P50: 90, P99: 90}
		}
		return encodeLines(t, benchwire.StreamHeader(),
			&benchwire.Sample{Run: 1, T: 1, OpsPerSec: rate, LatencyHDR: hdr, LatencyMs: lat},
			&benchwire.CapacityProbe{Probe: 1, RateOpsPerSec: rate, OpsPerSec: rate, DurationSeconds: 2, Ops: int64(2 * rate), LatencyMs: lat, LatencyHDR: hdr})
	}
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	last := f.written[len(f.written)-1]
	k := last.Variants[0].Points[0].Capacity
	if k == nil {
		t.Fatal("no capacity written")
	}
	if k.RateOpsPerSec > 800 || k.FailedRateOpsPerSec <= 800 || k.FailedRateOpsPerSec > k.RateOpsPerSec*(1+k.Precision) {
		t.Errorf("found %v..%v ops/s, want a bracket of 800 within %g", k.RateOpsPerSec, k.FailedRateOpsPerSec, k.Precision)
	}
	if len(k.Clients) != 2 || len(asked["c1"]) != k.Probes || len(asked["c2"]) != k.Probes {
		t.Fatalf("clients %v; c1 asked %v, c2 %v, for %d probes", k.Clients, asked["c1"], asked["c2"], k.Probes)
	}
	t.Logf("found %v..%v ops/s in %d probes, c1 asked %v", k.RateOpsPerSec, k.FailedRateOpsPerSec, k.Probes, asked["c1"])
	for i, pr := range k.ProbeLog {
		if len(pr.Clients) != 2 || pr.Clients[0].RateOpsPerSec+pr.Clients[1].RateOpsPerSec != pr.RateOpsPerSec || asked["c1"][i] != pr.RateOpsPerSec/2 {
			t.Errorf("probe %d at %v: shares %+v, c1 asked %v; want half each", pr.Probe, pr.RateOpsPerSec, pr.Clients, asked["c1"][i])
		}
		if pr.Pass != (pr.RateOpsPerSec <= 800) {
			t.Errorf("probe %d at %v ops/s: pass %v", pr.Probe, pr.RateOpsPerSec, pr.Pass)
		}
	}
}
