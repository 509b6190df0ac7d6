package results

import (
	"math"
	"strings"
	"testing"
)

// ms summarises xs as the engine does.
func ms(xs ...float64) MeanStd { return MeanStdOf(xs) }

// TestWelchP checks the p-value against values computed independently:
// Welch's t and degrees of freedom, then the Student t density integrated
// numerically over the tail (t = 16.344, df = 3.806; t = 0.541, df = 3.816).
func TestWelchP(t *testing.T) {
	for _, tt := range []struct {
		a, b []float64
		want float64
	}{
		{[]float64{100, 102, 98}, []float64{130, 128, 133}, 0.000114929},
		{[]float64{100, 110, 90}, []float64{104, 96, 112}, 0.618532},
	} {
		p, ok := WelchP(ms(tt.a...), ms(tt.b...))
		if !ok || math.Abs(p-tt.want)/tt.want > 0.01 {
			t.Errorf("WelchP(%v, %v) = %.6f, %v; want %.6f", tt.a, tt.b, p, ok, tt.want)
		}
	}
	if _, ok := WelchP(ms(1), ms(2, 3)); ok {
		t.Error("a p-value from one run")
	}
}

// TestSignificanceRule: a clear difference is called better or worse; a
// difference inside the noise is "~ no significant difference", never
// better or worse; one run a side is not tested and says so.
func TestSignificanceRule(t *testing.T) {
	stats := func(ops ...float64) Stats { return Stats{OpsPerSec: ms(ops...)} }
	base := stats(100000, 102000, 98000)
	clear, _ := DeltaOf(MetricOps, stats(130000, 128000, 133000), base)
	if clear.Verdict(MetricOps) != Improved || !strings.HasPrefix(clear.Format(MetricOps), "+30.3% better, p") {
		t.Errorf("clear: %+v %q", clear, clear.Format(MetricOps))
	}
	noisy, _ := DeltaOf(MetricOps, stats(90000, 115000, 106000), stats(100000, 110000, 90000))
	if noisy.Verdict(MetricOps) != Same || !strings.HasPrefix(noisy.Format(MetricOps), "~ no significant difference: +3.7%") {
		t.Errorf("noisy: %+v %q", noisy, noisy.Format(MetricOps))
	}
	worse, _ := DeltaOf(MetricLatP99, Stats{LatencyP99Ms: ms(2.0, 2.1, 2.05)}, Stats{LatencyP99Ms: ms(1.0, 1.05, 0.98)})
	if worse.Verdict(MetricLatP99) != Worsened || !strings.Contains(worse.Format(MetricLatP99), "worse") {
		t.Errorf("p99 doubled: %+v %q", worse, worse.Format(MetricLatP99))
	}
	one, _ := DeltaOf(MetricOps, stats(130000), stats(100000))
	if f := one.Format(MetricOps); one.Verdict(MetricOps) != Untested || strings.Contains(f, "better") || !strings.Contains(f, "noise not measured") {
		t.Errorf("one run a side: %q", f)
	}
}
