//go:build perf

package netpath

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestPerfVariants measures the bundled server's throughput over each path
// at the lab's likely defaults (dpulab bench: 50 clients, 16-deep
// pipelines, 256-byte values, SET:GET 1:1) and prints each variant's TPS
// with its spread and its ratio to the direct path, the yardstick measured
// side by side: the variants' runs are interleaved round by round, so a
// slow minute of the shared machine falls on all of them alike.
//
//	go test -tags perf -run Perf -v ./runner/netpath/
//
// Knobs: DPULAB_PERF_RULES (comma-separated firewall sizes, default
// DefaultFirewallRules), DPULAB_PERF_RUNS (rounds, default 5),
// DPULAB_PERF_SECONDS (per run, default 10), DPULAB_PERF_PIN=1 (server on
// CPU 1, load generator on CPU 0, with taskset), DPULAB_TEST_BIN (a dpulab
// binary to use instead of building this tree, when others are mid-change
// in it). The figures behind DefaultFirewallRules are in its comment.
func TestPerfVariants(t *testing.T) {
	l := requireKernel(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	rules := []int{DefaultFirewallRules}
	if s := os.Getenv("DPULAB_PERF_RULES"); s != "" {
		rules = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				t.Fatalf("DPULAB_PERF_RULES: %v", err)
			}
			rules = append(rules, n)
		}
	}
	runs := envInt(t, "DPULAB_PERF_RUNS", 5)
	secs := envInt(t, "DPULAB_PERF_SECONDS", 10)
	pin := os.Getenv("DPULAB_PERF_PIN") == "1"
	if pin {
		if _, err := exec.LookPath("taskset"); err != nil {
			t.Fatal("DPULAB_PERF_PIN=1 needs taskset (util-linux)")
		}
	}

	type subject struct {
		label string
		path  *Path
		srv   server
		tps   []float64
		p99   []float64
	}
	var subjects []*subject
	add := func(cfg Config, label string) {
		p, err := Make(ctx, l, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Teardown(ctx, l) })
		s := &subject{label: label, path: p}
		if pin {
			s.srv = startServerPinned(t, ctx, l, p, "1")
		} else {
			s.srv = startServer(t, ctx, l, p)
		}
		subjects = append(subjects, s)
	}
	add(Config{Variant: Direct}, "direct")
	for _, n := range rules {
		add(Config{Variant: Firewall, FirewallRules: n}, fmt.Sprintf("firewall N=%d", n))
		add(Config{Variant: OverlayFirewall, FirewallRules: n}, fmt.Sprintf("overlay+firewall N=%d", n))
	}
	t.Logf("paths: overlay over %s %s", subjects[len(subjects)-1].path.Encap, subjects[len(subjects)-1].path.EncapNote)
	args := []string{"-c", "50", "--pipeline", "16", "-d", "256", "--ratio", "1:1", "--warmup", "1s", "--test-time", fmt.Sprint(secs)}
	start := time.Now()
	for r := 0; r < runs; r++ {
		for _, s := range subjects {
			var sum benchSummary
			if pin {
				sum = runBenchPinned(t, ctx, l, s.path, s.srv, "0", args...)
			} else {
				sum = runBench(t, ctx, l, s.path, s.srv, args...)
			}
			if sum.Errors != 0 {
				t.Fatalf("%s: %d errors", s.label, sum.Errors)
			}
			s.tps = append(s.tps, sum.OpsPerSec)
			s.p99 = append(s.p99, sum.Latency["p99"])
			t.Logf("round %d %-26s %9.0f ops/s p99 %.2f ms", r+1, s.label, sum.OpsPerSec, sum.Latency["p99"])
		}
	}
	base := subjects[0].tps
	fmt.Printf("\n%d rounds of %d s each, interleaved (%s), pinned: %v\n", runs, secs, time.Since(start).Round(time.Second), pin)
	fmt.Printf("%-26s %10s %8s %10s %10s %8s %s\n", "path", "median", "spread", "min", "max", "p99 ms", "ratio to direct (per round: median, min..max)")
	for _, s := range subjects {
		med, lo, hi := stats(s.tps)
		ratios := make([]float64, len(s.tps))
		for i := range s.tps {
			ratios[i] = s.tps[i] / base[i]
		}
		rm, rl, rh := stats(ratios)
		p99, _, _ := stats(s.p99)
		fmt.Printf("%-26s %10.0f %7.1f%% %10.0f %10.0f %8.2f %.3f (%.3f..%.3f)\n", s.label, med, 100*(hi-lo)/med, lo, hi, p99, rm, rl, rh)
	}
}

func envInt(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive whole number", name, s)
	}
	return n
}

// stats returns the median, min and max.
func stats(xs []float64) (med, lo, hi float64) {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	med = s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return med, s[0], s[len(s)-1]
}
