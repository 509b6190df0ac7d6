package results

import (
	"cmp"
	"fmt"
	"math"
)

// Alpha is the significance level of a delta: a difference whose p-value is
// this or more is within the run-to-run noise (benchstat's default).
const Alpha = 0.05

// Delta is a variant's change of one metric against the baseline variant
// at the same point, with what the repeated runs say about it.
type Delta struct {
	// Pct is the change of the mean, in percent of the baseline's.
	Pct float64
	// P is the two-sided p-value of Welch's t-test on the two sides' run
	// means; HasP is false when either side ran fewer than twice, so
	// that the spread between runs was not measured.
	P    float64
	HasP bool
	// Runs is the fewer of the two sides' run counts.
	Runs int
	// Saturated, when set, is the warning of a saturated client host on
	// either side (Saturation): the delta is that host's limit, so it is
	// neither better nor worse whatever its p-value (DeltaAt sets it).
	Saturated WarningKind
}

// DeltaAt is DeltaOf for point p of variant v of c against the baseline's
// point base, marked Saturated when a run on either side was client-bound:
// the delta every table shows (report.md, report.html, the TUI's compare).
func DeltaAt(c *Compare, metric string, v *VariantResult, p, base *SweepPoint) (Delta, bool) {
	d, ok := DeltaOf(metric, p.Stats, base.Stats)
	if !ok {
		return d, false
	}
	d.Saturated = Saturation(c, v, p)
	if len(c.Variants) > 0 && d.Saturated != WarnSaturated {
		d.Saturated = cmp.Or(Saturation(c, &c.Variants[0], base), d.Saturated)
	}
	return d, true
}

// Verdict is what a delta may be called.
type Verdict int

const (
	// Improved and Worsened are changes beyond the noise (p < Alpha).
	Improved Verdict = iota
	Worsened
	// Same is no difference beyond the noise, or a change under 0.05%.
	Same
	// Untested is a change whose noise was not measured (one run a side).
	Untested
	// Moved is a change of a metric that is neither better nor worse.
	Moved
)

// DeltaOf compares a variant's summary with the baseline's for metric.
func DeltaOf(metric string, s, base Stats) (Delta, bool) {
	v, ok1 := s.Metric(metric)
	b, ok2 := base.Metric(metric)
	if !ok1 || !ok2 || b.Mean == 0 {
		return Delta{}, false
	}
	d := Delta{Pct: (v.Mean - b.Mean) / math.Abs(b.Mean) * 100, Runs: min(v.N, b.N)}
	d.P, d.HasP = WelchP(b, v)
	return d, true
}

// WelchP is the two-sided p-value of Welch's t-test for the difference of
// two means, each given with its sample standard deviation and count; ok is
// false when either has fewer than two values. Welch's test does not assume
// equal spreads, and with the two to five runs a lab repeats it can still
// find a clear difference, where a rank test (benchstat's Mann-Whitney U)
// cannot go below p = 0.1 with three runs a side.
func WelchP(a, b MeanStd) (p float64, ok bool) {
	if a.N < 2 || b.N < 2 {
		return 0, false
	}
	va, vb := a.Stddev*a.Stddev/float64(a.N), b.Stddev*b.Stddev/float64(b.N)
	if va+vb == 0 {
		// Every run of both sides gave the same figure.
		if a.Mean == b.Mean {
			return 1, true
		}
		return 0, true
	}
	t := (b.Mean - a.Mean) / math.Sqrt(va+vb)
	df := (va + vb) * (va + vb) / (va*va/float64(a.N-1) + vb*vb/float64(b.N-1))
	return 2 * studentTCDF(-math.Abs(t), df), true
}

// Verdict says what the delta of metric may be called: better or worse only
// when the runs show it beyond their noise.
func (d Delta) Verdict(metric string) Verdict {
	switch {
	case Neutral(metric), d.Saturated != "":
		return Moved
	case math.Abs(d.Pct) < 0.05:
		return Same
	case !d.HasP:
		return Untested
	case d.P >= Alpha:
		return Same
	case (d.Pct < 0) == LowerIsBetter(metric):
		return Improved
	}
	return Worsened
}

// Format says the delta of metric so it reads right without colour:
// "+31.2% better, p=0.003", "~ no significant difference: +3.1%, p=0.410",
// "+12.0%, 1 run a side: noise not measured", "+4.2%" for a metric that is
// neither better nor worse.
func (d Delta) Format(metric string) string {
	if d.Saturated != "" && !Neutral(metric) {
		what := "saturated shared host"
		if d.Saturated == WarnClientBound {
			what = "client-bound"
		}
		if d.HasP {
			return fmt.Sprintf("%+.1f%%, %s, %s: no verdict", d.Pct, formatP(d.P), what)
		}
		return fmt.Sprintf("%+.1f%%, %s: no verdict", d.Pct, what)
	}
	switch d.Verdict(metric) {
	case Moved:
		return fmt.Sprintf("%+.1f%%", d.Pct)
	case Untested:
		return fmt.Sprintf("%+.1f%%, %d run a side: noise not measured", d.Pct, max(d.Runs, 1))
	case Same:
		if !d.HasP || math.Abs(d.Pct) < 0.05 {
			return fmt.Sprintf("%+.1f%% same", d.Pct)
		}
		return fmt.Sprintf("~ no significant difference: %+.1f%%, %s", d.Pct, formatP(d.P))
	case Improved:
		return fmt.Sprintf("%+.1f%% better, %s", d.Pct, formatP(d.P))
	}
	return fmt.Sprintf("%+.1f%% worse, %s", d.Pct, formatP(d.P))
}

func formatP(p float64) string {
	if p < 0.001 {
		return "p<0.001"
	}
	return fmt.Sprintf("p=%.3f", p)
}

// Short says the delta in a few columns, for a table with a legend
// (Legend): "+31.2% better", "~ +3.1%" (no significant difference),
// "+12.0% ?" (noise not measured), "+12.0% !" (a saturated host: no
// verdict), "+4.2%" (neither better nor worse).
func (d Delta) Short(metric string) string {
	if d.Saturated != "" && !Neutral(metric) {
		return fmt.Sprintf("%+.1f%% !", d.Pct)
	}
	switch d.Verdict(metric) {
	case Moved:
		return fmt.Sprintf("%+.1f%%", d.Pct)
	case Untested:
		return fmt.Sprintf("%+.1f%% ?", d.Pct)
	case Same:
		if !d.HasP || math.Abs(d.Pct) < 0.05 {
			return fmt.Sprintf("%+.1f%% same", d.Pct)
		}
		return fmt.Sprintf("~ %+.1f%%", d.Pct)
	case Improved:
		return fmt.Sprintf("%+.1f%% better", d.Pct)
	}
	return fmt.Sprintf("%+.1f%% worse", d.Pct)
}

// Legend explains Short's marks.
const Legend = "~ no significant difference (Welch's t-test over the runs, p ≥ 0.05) · ? one run a side: noise not measured · ! saturated host: no verdict"
