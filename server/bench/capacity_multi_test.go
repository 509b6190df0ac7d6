package bench

import (
	"errors"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/benchhdr"
	"github.com/dpulab/dpulab/internal/wire/benchwire"
)

// TestMergeProbes: one probe run by two client hosts at their shares is
// judged on the union of their latencies, not on their percentiles
// averaged: host a (fast) and host b (slow) each meet or miss the cap on
// their own, the merged probe's p50 is the union's.
func TestMergeProbes(t *testing.T) {
	spec, err := ParseCapacity("p50<=2ms")
	if err != nil {
		t.Fatal(err)
	}
	probe := func(rate float64, us int64, n int64) *CapacityProbe {
		h := newHist()
		for i := int64(0); i < n; i++ {
			record(h, us)
		}
		return &CapacityProbe{Probe: 1, RateOpsPerSec: rate, OpsPerSec: float64(n) / 4, DurationSeconds: 4, Ops: n,
			LatencyMs: latencyOf(h), LatencyHDR: benchhdr.Encode(h), Pass: us <= 2000}
	}
	union := func(ps ...*CapacityProbe) float64 {
		all := newHist()
		for _, p := range ps {
			h, err := benchhdr.DecodeHistogram(p.LatencyHDR)
			if err != nil {
				t.Fatal(err)
			}
			all.Merge(h)
		}
		return float64(all.ValueAtQuantile(50)) / 1000
	}
	for _, tc := range []struct {
		name       string
		a, b       *CapacityProbe
		pass       bool
		unsentFrom bool
	}{
		// 3000 fast replies and 1000 slow: the union's median is fast
		// (the hosts' medians averaged, 4.75 ms, would miss the cap).
		{"mostly fast", probe(750, 500, 3000), probe(250, 9000, 1000), true, false},
		// 1000 fast and 3000 slow: the union's median is slow.
		{"mostly slow", probe(250, 500, 1000), probe(750, 9000, 3000), false, false},
		{"one host behind", probe(500, 500, 2000), func() *CapacityProbe { p := probe(500, 500, 2000); p.Unsent = 7; return p }(), false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := benchhdr.MergeProbes(spec, 3, 1000, []*CapacityProbe{tc.a, tc.b})
			if err != nil {
				t.Fatal(err)
			}
			if m.Probe != 3 || m.RateOpsPerSec != 1000 || m.Ops != tc.a.Ops+tc.b.Ops || m.OpsPerSec != tc.a.OpsPerSec+tc.b.OpsPerSec {
				t.Errorf("merged probe %+v: want probe 3 at 1000 ops/s asked with the hosts' replies summed", m)
			}
			if want := union(tc.a, tc.b); m.PercentileMs != want {
				t.Errorf("merged p50 %.3f ms, the union's %.3f ms", m.PercentileMs, want)
			}
			if m.Pass != tc.pass || (tc.unsentFrom && (m.Unsent != 7 || m.Reason == "")) {
				t.Errorf("merged verdict pass=%v (%s), unsent %d; want pass=%v", m.Pass, m.Reason, m.Unsent, tc.pass)
			}
			if m.LatencyHDR == "" {
				t.Error("the merged probe carries no histogram")
			}
		})
	}
	old := probe(500, 500, 2000)
	old.LatencyHDR = ""
	if _, err := benchhdr.MergeProbes(spec, 1, 1000, []*CapacityProbe{probe(500, 500, 2000), old}); !errors.Is(err, ErrNoHistogram) {
		t.Errorf("a host's probe without a histogram: %v, want ErrNoHistogram", err)
	}
}

// TestProbeDuration: a probe lasts --duration unless its rate is too low
// for the replies its percentile needs; benchwire.MinProbeRate is the floor.
func TestProbeDuration(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Duration, cfg.Interval = 3*time.Second, time.Second
	spec := DefaultCapacity() // p99: 1000 replies
	for _, tc := range []struct {
		rate float64
		want time.Duration
	}{{1000, 3 * time.Second}, {334, 3 * time.Second}, {250, 4 * time.Second}, {100, 10 * time.Second}} {
		if got := benchwire.ProbeDuration(cfg, spec, tc.rate); got != tc.want {
			t.Errorf("benchwire.ProbeDuration at %g ops/s = %s, want %s", tc.rate, got, tc.want)
		}
	}
	if got := benchwire.MinProbeRate(cfg, spec); got < 33.3 || got > 33.4 {
		t.Errorf("benchwire.MinProbeRate = %g, want 1000 replies in 30 s", got)
	}
}
