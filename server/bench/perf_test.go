//go:build perf

package bench

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/internal/testpeer"
)

// TestPerfAgainstRedisBenchmark drives Debian's redis-server with
// redis-benchmark and with `dpulab bench` (in-process) using the same
// parameters — 50 clients, 256-byte values, SET then GET over 100,000 random
// keys, pipeline 1 and 16 — and prints the throughput ratio
// dpulab/redis-benchmark (goal ≥ 0.9) and both p50s (goal within ±15%).
//
//	go test -tags perf -run Perf -v ./server/bench/
//
// The two tools alternate test by test (SET: one then the other, GET: the
// other then the one, next round the other way round), so that background
// load on the machine hits both alike; PERF_ROUNDS (default 5) rounds per
// depth, medians compared. Both key spaces are filled first, so GETs hit.
//
// redis-benchmark runs on one thread; so does dpulab here (GOMAXPROCS=1,
// PERF_GOMAXPROCS to change it): on a loaded machine a process with more
// threads gets a bigger share of the CPUs, which would flatter dpulab.
//
// Latency is not measured quite alike: redis-benchmark gives every request
// of a pipeline the latency of the pipeline's first reply; dpulab times each
// reply. And p50s only compare at equal throughput: a closed-loop client
// that idles between a reply and its next request keeps fewer requests
// queued at the server and sees lower latency at lower throughput (the
// Little's-law line shows how much each tool idles).
func TestPerfAgainstRedisBenchmark(t *testing.T) {
	rb := testpeer.Require(t, "redis-benchmark")
	procs := 1
	if v, err := strconv.Atoi(os.Getenv("PERF_GOMAXPROCS")); err == nil && v > 0 {
		procs = v
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	rounds := 5
	if v, err := strconv.Atoi(os.Getenv("PERF_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	t.Logf("dpulab GOMAXPROCS=%d, redis-benchmark single-threaded, %d rounds; load average at start: %s", procs, rounds, loadavg())
	p := startRedis(t)
	host, port, _ := strings.Cut(p.addr, ":")
	const keys = 100_000

	// ours runs dpulab bench; firstReply times each pipeline as
	// redis-benchmark does (runOpts.firstReplyLatency).
	ours := func(depth int, cmd string, n int, client ClientKind, firstReply bool) result {
		cfg := DefaultConfig()
		cfg.Endpoints = tcpEndpoints(p.addr)
		cfg.Client, cfg.Clients, cfg.Pipeline, cfg.DataSize = client, 50, depth, 256
		cfg.KeyMaximum, cfg.KeyPattern, cfg.Requests = keys-1, KeyRandom, int64(n)
		cfg.Ratio = Ratio{Set: 1, Get: 0}
		if cmd == "GET" {
			cfg.Ratio = Ratio{Set: 0, Get: 1}
		}
		got, err := runCollectWith(t, context.Background(), cfg, runOpts{firstReplyLatency: firstReply})
		if err != nil {
			t.Fatal(err)
		}
		r := got.runs[0]
		return result{r.OpsPerSec, r.LatencyMs.P50, r.LatencyMs.Avg}
	}
	theirs := func(depth int, cmd string, n int) result {
		out, err := exec.Command(rb, "-h", host, "-p", port, "-c", "50", "-d", "256", "-t", strings.ToLower(cmd),
			"-P", strconv.Itoa(depth), "-n", strconv.Itoa(n), "-r", strconv.Itoa(keys), "--csv").Output()
		if err != nil {
			t.Fatalf("redis-benchmark: %v", err)
		}
		rows, err := csv.NewReader(strings.NewReader(string(out))).ReadAll()
		if err != nil {
			t.Fatalf("redis-benchmark csv: %v\n%s", err, out)
		}
		for _, row := range rows {
			if len(row) >= 5 && row[0] == cmd {
				rps, _ := strconv.ParseFloat(row[1], 64)
				avg, _ := strconv.ParseFloat(row[2], 64)
				p50, _ := strconv.ParseFloat(row[4], 64)
				return result{rps, p50, avg}
			}
		}
		t.Fatalf("redis-benchmark printed no %s result:\n%s", cmd, out)
		return result{}
	}

	// Fill both key spaces (redis-benchmark's keys are "key:%012d").
	cfg := DefaultConfig()
	cfg.Endpoints, cfg.KeyMaximum, cfg.Prefill, cfg.Requests = tcpEndpoints(p.addr), keys-1, true, 1
	if _, err := Run(context.Background(), cfg, nil); err != nil {
		t.Fatal(err)
	}
	theirs(16, "SET", 5*keys)

	for _, depth := range []int{1, 16} {
		n := 50_000
		if depth > 1 {
			n = 300_000
		}
		for _, cmd := range []string{"SET", "GET"} {
			var o, th []result
			for round := 0; round < rounds; round++ {
				if (round+len(cmd))%2 == 0 {
					th = append(th, theirs(depth, cmd, n))
					o = append(o, ours(depth, cmd, n, ClientLean, false))
				} else {
					o = append(o, ours(depth, cmd, n, ClientLean, false))
					th = append(th, theirs(depth, cmd, n))
				}
			}
			mo, mt := median(o), median(th)
			// Runs next to each other saw about the same machine: the
			// median of the paired ratios is the steadiest figure here.
			var pairs, p50pairs []float64
			for i := range o {
				pairs = append(pairs, o[i].ops/th[i].ops)
				p50pairs = append(p50pairs, o[i].p50/th[i].p50)
			}
			t.Logf("pipeline %2d %s: dpulab %9.0f ops/s p50 %.3f ms | redis-benchmark %9.0f ops/s p50 %.3f ms | throughput ratio %.3f (goal ≥ 0.90) | p50 ratio %.3f (goal 0.85..1.15)",
				depth, cmd, mo.ops, mo.p50, mt.ops, mt.p50, mo.ops/mt.ops, mo.p50/mt.p50)
			t.Logf("    paired ratios per round: throughput %s (median %.3f), p50 %s (median %.3f)",
				fmtFloats(pairs), medianOf(pairs), fmtFloats(p50pairs), medianOf(p50pairs))
			// Little's law: with clients×depth requests always in flight,
			// mean latency = in flight / rate. The share below is how much of
			// each connection's cycle a tool's latency covers; under 1 means
			// the connection sat idle between a reply and the next send,
			// which lowers the server's queue and with it the latency.
			lit := func(r result) float64 { return r.avg / 1000 * r.ops / float64(50*depth) }
			t.Logf("    Little's law share of the cycle in flight: dpulab %.2f, redis-benchmark %.2f", lit(mo), lit(mt))
			t.Logf("    per round (ops/s, p50 ms, avg ms): dpulab %s", fmtResults(o))
			t.Logf("    per round (ops/s, p50 ms, avg ms): redis-benchmark %s", fmtResults(th))
			// Timed as redis-benchmark times a pipeline (every request gets
			// its first reply's latency), one run after the rounds.
			if depth > 1 {
				f := ours(depth, cmd, n, ClientLean, true)
				t.Logf("    timed like redis-benchmark (first reply of each pipeline): dpulab p50 %.3f ms = p50 ratio %.3f against redis-benchmark's median (informational)", f.p50, f.p50/mt.p50)
			}
			// For the record: the go-redis path, one run after the rounds.
			g := ours(depth, cmd, n, ClientGoRedis, false)
			t.Logf("    go-redis path: %.0f ops/s p50 %.3f ms = %.3f of redis-benchmark's median (informational)", g.ops, g.p50, g.ops/mt.ops)
		}
	}
	t.Logf("load average at end: %s", loadavg())
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

type result struct{ ops, p50, avg float64 }

// median takes the median of each figure separately.
func median(rs []result) result {
	pick := func(f func(result) float64) float64 {
		xs := make([]float64, len(rs))
		for i, r := range rs {
			xs[i] = f(r)
		}
		sort.Float64s(xs)
		return xs[len(xs)/2]
	}
	return result{
		pick(func(r result) float64 { return r.ops }),
		pick(func(r result) float64 { return r.p50 }),
		pick(func(r result) float64 { return r.avg }),
	}
}

func fmtResults(rs []result) string {
	var parts []string
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("%.0f/%.3f/%.3f", r.ops, r.p50, r.avg))
	}
	return strings.Join(parts, " ")
}

func medianOf(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func fmtFloats(xs []float64) string {
	var parts []string
	for _, x := range xs {
		parts = append(parts, fmt.Sprintf("%.2f", x))
	}
	return strings.Join(parts, " ")
}
