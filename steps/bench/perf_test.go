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
// keys, pipeline 1 and 16 — alternating the two tools round by round so that
// the machine's background load hits both alike, and prints the throughput
// ratio dpulab/redis-benchmark (goal ≥ 0.9) and both p50s (goal within ±15%).
//
//	go test -tags perf -run Perf -v ./steps/bench/
//
// PERF_ROUNDS (default 3) sets the rounds per depth; the median is compared.
//
// redis-benchmark runs on one thread; so does dpulab here (GOMAXPROCS=1,
// PERF_GOMAXPROCS to change it). On a loaded machine a process with more
// threads gets a bigger share of the CPUs, which would flatter dpulab.
func TestPerfAgainstRedisBenchmark(t *testing.T) {
	rb := testpeer.Require(t, "redis-benchmark")
	procs := 1
	if v, err := strconv.Atoi(os.Getenv("PERF_GOMAXPROCS")); err == nil && v > 0 {
		procs = v
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	t.Logf("dpulab with GOMAXPROCS=%d, redis-benchmark single-threaded; machine load: %s", procs, loadavg())
	p := startRedis(t)
	host, port, _ := strings.Cut(p.addr, ":")
	rounds := 3
	if v, err := strconv.Atoi(os.Getenv("PERF_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	for _, depth := range []int{1, 16} {
		n := 100_000
		if depth > 1 {
			n = 600_000
		}
		var ours, theirs [2][]result // [set, get]
		for round := 0; round < rounds; round++ {
			runOurs := func() {
				for i, ratio := range []Ratio{{1, 0}, {0, 1}} {
					cfg := DefaultConfig()
					cfg.Targets = []string{p.addr}
					cfg.Clients, cfg.Pipeline, cfg.DataSize = 50, depth, 256
					cfg.KeyMaximum, cfg.KeyPattern, cfg.Ratio = 100_000, KeyRandom, ratio
					cfg.Requests = int64(n)
					got, err := runCollect(t, context.Background(), cfg)
					if err != nil {
						t.Fatal(err)
					}
					r := got.runs[0]
					ours[i] = append(ours[i], result{r.OpsPerSec, r.LatencyMs.P50})
					// Little's law: with every connection's pipeline always
					// outstanding, mean latency = requests in flight / rate.
					t.Logf("    dpulab P%d %s: %.0f ops/s avg %.3f ms p50 %.3f ms (Little's law: %.3f ms)", depth, []string{"SET", "GET"}[i],
						r.OpsPerSec, r.LatencyMs.Avg, r.LatencyMs.P50, float64(50*depth)/r.OpsPerSec*1000)
				}
			}
			runTheirs := func() {
				out, err := exec.Command(rb, "-h", host, "-p", port, "-c", "50", "-d", "256", "-t", "set,get",
					"-P", strconv.Itoa(depth), "-n", strconv.Itoa(n), "-r", "100000", "--csv").Output()
				if err != nil {
					t.Fatalf("redis-benchmark: %v", err)
				}
				rows, err := csv.NewReader(strings.NewReader(string(out))).ReadAll()
				if err != nil {
					t.Fatalf("redis-benchmark csv: %v\n%s", err, out)
				}
				for _, row := range rows {
					if len(row) < 5 {
						continue
					}
					rps, _ := strconv.ParseFloat(row[1], 64)
					p50, _ := strconv.ParseFloat(row[4], 64)
					switch row[0] {
					case "SET":
						theirs[0] = append(theirs[0], result{rps, p50})
					case "GET":
						theirs[1] = append(theirs[1], result{rps, p50})
					}
				}
			}
			if round%2 == 0 {
				runTheirs()
				runOurs()
			} else {
				runOurs()
				runTheirs()
			}
		}
		// For the record: the go-redis path, one round, the same load.
		var gr [2]float64
		for i, ratio := range []Ratio{{1, 0}, {0, 1}} {
			cfg := DefaultConfig()
			cfg.Targets = []string{p.addr}
			cfg.Client, cfg.Clients, cfg.Pipeline, cfg.DataSize = ClientGoRedis, 50, depth, 256
			cfg.KeyMaximum, cfg.KeyPattern, cfg.Ratio, cfg.Requests = 100_000, KeyRandom, ratio, int64(n)
			got, err := runCollect(t, context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			gr[i] = got.runs[0].OpsPerSec
		}
		for i, name := range []string{"SET", "GET"} {
			t.Logf("pipeline %2d %s: go-redis path %10.0f ops/s, %.3f of redis-benchmark's median (informational)", depth, name, gr[i], gr[i]/median(theirs[i]).ops)
		}
		for i, name := range []string{"SET", "GET"} {
			o, th := median(ours[i]), median(theirs[i])
			t.Logf("pipeline %2d %s: dpulab %10.0f ops/s p50 %.3f ms | redis-benchmark %10.0f ops/s p50 %.3f ms | throughput ratio %.3f (goal ≥ 0.9), p50 ratio %.3f (goal 0.85..1.15)",
				depth, name, o.ops, o.p50, th.ops, th.p50, o.ops/th.ops, o.p50/th.p50)
			t.Logf("    rounds dpulab %s | redis-benchmark %s", fmtResults(ours[i]), fmtResults(theirs[i]))
		}
	}
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

type result struct{ ops, p50 float64 }

// median takes the median throughput and the median p50 separately.
func median(rs []result) result {
	ops := make([]float64, len(rs))
	p50 := make([]float64, len(rs))
	for i, r := range rs {
		ops[i], p50[i] = r.ops, r.p50
	}
	sort.Float64s(ops)
	sort.Float64s(p50)
	return result{ops[len(ops)/2], p50[len(p50)/2]}
}

func fmtResults(rs []result) string {
	var parts []string
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("%.0f/%.3f", r.ops, r.p50))
	}
	return strings.Join(parts, " ")
}
