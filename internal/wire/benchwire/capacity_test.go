package benchwire

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestParseCapacity(t *testing.T) {
	for _, tc := range []struct {
		in   string
		pct  float64
		cap  time.Duration
		fail bool
	}{
		{"p99<=1ms", 99, time.Millisecond, false},
		{"p99.9 <= 500us", 99.9, 500 * time.Microsecond, false},
		{"P50<2ms", 50, 2 * time.Millisecond, false},
		{"p99<=250µs", 99, 250 * time.Microsecond, false},
		{"p100<=1ms", 0, 0, true},
		{"p99<=0s", 0, 0, true},
		{"99<=1ms", 0, 0, true},
		{"p99>=1ms", 0, 0, true},
		{"p99<=fast", 0, 0, true},
		{"", 0, 0, true},
	} {
		got, err := ParseCapacity(tc.in)
		if tc.fail {
			if err == nil {
				t.Errorf("ParseCapacity(%q) accepted: %+v", tc.in, got)
			}
			continue
		}
		if err != nil || got.Percentile != tc.pct || got.Cap != tc.cap || got.Precision != 0.05 || got.StartRate != 1000 {
			t.Errorf("ParseCapacity(%q) = %+v, %v; want p%g <= %s with the defaults", tc.in, got, err, tc.pct, tc.cap)
			continue
		}
		back, err := ParseCapacity(got.Objective())
		if err != nil || back != got {
			t.Errorf("%q → %q → %+v, %v", tc.in, got.Objective(), back, err)
		}
	}
}

// TestSearchPrecision: against servers whose capacity is a known step (a
// probe passes exactly when its rate is at most T), the search ends with
// the highest pass ≤ T < the lowest failure ≤ pass × (1 + precision), for
// capacities above, below and at the start rate.
func TestSearchPrecision(t *testing.T) {
	spec := DefaultCapacity()
	for _, T := range []float64{37, 999, 1000, 1001, 7_777, 250_000, 19_800_000} {
		t.Run(fmt.Sprint(T), func(t *testing.T) {
			var probes []float64
			probe := func(n int, rate float64) (*CapacityProbe, error) {
				probes = append(probes, rate)
				return &CapacityProbe{Probe: n, RateOpsPerSec: rate, OpsPerSec: min(rate, T), Pass: rate <= T}, nil
			}
			res, err := Search(context.Background(), spec, 10, probe, func(Event) {})
			if err != nil {
				t.Fatal(err)
			}
			if !(res.RateOpsPerSec <= T && T < res.FailedRateOpsPerSec && res.FailedRateOpsPerSec <= res.RateOpsPerSec*(1+spec.Precision)) {
				t.Errorf("found %g (failed at %g) for a capacity of %g; want found ≤ %g < failed ≤ found × 1.05; probes %v", res.RateOpsPerSec, res.FailedRateOpsPerSec, T, T, probes)
			}
			if res.Probes != len(probes) || res.Probes > 30 {
				t.Errorf("%d probes (%v)", res.Probes, probes)
			}
			t.Logf("capacity %g: found %g in %d probes", T, res.RateOpsPerSec, res.Probes)
		})
	}
	t.Run("limits", func(t *testing.T) {
		pass := func(ok bool) func(int, float64) (*CapacityProbe, error) {
			return func(n int, rate float64) (*CapacityProbe, error) {
				return &CapacityProbe{Probe: n, RateOpsPerSec: rate, Pass: ok}, nil
			}
		}
		s := spec
		s.MaxRate = 5000
		res, err := Search(context.Background(), s, 10, pass(true), func(Event) {})
		if err != nil || res.Limit != "max_rate" || res.RateOpsPerSec != 5000 || res.FailedRateOpsPerSec != 0 {
			t.Errorf("always passing up to max 5000: %+v, %v", res, err)
		}
		res, err = Search(context.Background(), spec, 10, pass(false), func(Event) {})
		if err != nil || res.Limit != "min_rate" || res.RateOpsPerSec != 0 || res.FailedRateOpsPerSec < 10 || res.FailedRateOpsPerSec >= 20 {
			t.Errorf("always failing down to 10: %+v, %v", res, err)
		}
		broken := func(n int, rate float64) (*CapacityProbe, error) {
			return &CapacityProbe{Probe: n, RateOpsPerSec: rate, Pass: true}, errors.New("connection lost")
		}
		var last Event
		res, err = Search(context.Background(), spec, 10, broken, func(ev Event) { last = ev })
		if err == nil || res.RateOpsPerSec != 0 || res.Err == "" || last != res {
			t.Errorf("a broken probe: %+v, %v; want an error, no verdict, the result emitted last", res, err)
		}
	})
}

// TestProbeDuration: a probe lasts --duration unless its rate is too low
// for the replies its percentile needs; MinProbeRate is the floor.
func TestProbeDuration(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Duration, cfg.Interval = 3*time.Second, time.Second
	spec := DefaultCapacity() // p99: 1000 replies
	for _, tc := range []struct {
		rate float64
		want time.Duration
	}{{1000, 3 * time.Second}, {334, 3 * time.Second}, {250, 4 * time.Second}, {100, 10 * time.Second}} {
		if got := ProbeDuration(cfg, spec, tc.rate); got != tc.want {
			t.Errorf("ProbeDuration at %g ops/s = %s, want %s", tc.rate, got, tc.want)
		}
	}
	if got := MinProbeRate(cfg, spec); got < 33.3 || got > 33.4 {
		t.Errorf("MinProbeRate = %g, want 1000 replies in 30 s", got)
	}
}
