package results

import (
	"fmt"
	"math"
	"strings"
)

// Conclusion is the one line at the top of report.html: the headline
// metric of the run's main comparison, with its uncertainty and what the
// repeated runs say about it.
type Conclusion struct {
	// Text is the line as a person reads it.
	Text string
	// Verdict is the significance rule's call on it (Delta.Verdict), or
	// Moved (neither better nor worse) when Saturated is set; meaningless
	// when Compared is false.
	Verdict Verdict
	// Compared is false when the run measured one variant, or nothing.
	Compared bool
	// Saturated is set (WarnSaturated, WarnClientBound) when a compared
	// run's load generator host was saturated, which the report warns of:
	// Text then says what was measured and that it is not a verdict, and
	// calls no difference better or worse.
	Saturated WarningKind
}

// Conclude draws the one-line conclusion from r's measurements. The main
// comparison is the last bench with two variants or more (a lab's closing
// compare is its point); within it, the last variant against the first
// (the baseline), at the sweep point with the most load (the last one), on
// the first metric of the table both measured (TPS). The ± is the standard
// error of the difference of the means, in percent of the baseline's.
func Conclude(r *Results) Conclusion {
	for i := len(r.Benches) - 1; i >= 0; i-- {
		c := &r.Benches[i]
		if len(c.Variants) < 2 {
			continue
		}
		base, last := c.Variants[0], c.Variants[len(c.Variants)-1]
		for pi := len(last.Points) - 1; pi >= 0; pi-- {
			p := last.Points[pi]
			bp := basePoint(c, p.Value)
			if bp == nil {
				continue
			}
			for _, m := range MetricDescs() {
				d, ok := DeltaOf(m.Name, p.Stats, bp.Stats)
				if !ok {
					continue
				}
				v, _ := p.Stats.Metric(m.Name)
				b, _ := bp.Stats.Metric(m.Name)
				if sat := saturatedAt(c, p.Value); sat != "" {
					return Conclusion{Text: saturatedConclusion(c, last.Label, base.Label, p.Value, m, d, v, b, sat), Verdict: Moved, Compared: true, Saturated: sat}
				}
				return Conclusion{Text: conclusionText(c, last.Label, base.Label, p.Value, m, d, v, b), Verdict: d.Verdict(m.Name), Compared: true}
			}
		}
	}
	for i := len(r.Benches) - 1; i >= 0; i-- {
		c := &r.Benches[i]
		for _, v := range c.Variants {
			if n := len(v.Points); n > 0 {
				p := v.Points[n-1]
				for _, m := range MetricDescs() {
					if ms, ok := p.Stats.Metric(m.Name); ok {
						return Conclusion{Text: fmt.Sprintf("%s: %s %s over %s (one variant: nothing compared)",
							v.Label, m.Label, withUnit(m, ms), runsWord(ms.N))}
					}
				}
			}
		}
	}
	return Conclusion{Text: "No measurement finished: nothing to conclude."}
}

// measuredText is what the conclusion measured: "rdma: TPS +30.0% ±
// 0.8% against tcp at instances=4".
func measuredText(c *Compare, label, baseLabel, at string, m MetricDesc, d Delta, v, b MeanStd) string {
	var s strings.Builder
	fmt.Fprintf(&s, "%s: %s %+.1f%%", label, m.Label, d.Pct)
	if v.N >= 2 && b.N >= 2 && b.Mean != 0 {
		se := math.Sqrt(v.Stddev*v.Stddev/float64(v.N)+b.Stddev*b.Stddev/float64(b.N)) / math.Abs(b.Mean) * 100
		fmt.Fprintf(&s, " ± %.1f%%", se)
	}
	fmt.Fprintf(&s, " against %s", baseLabel)
	if c.Sweep != "" && at != "" {
		fmt.Fprintf(&s, " at %s=%s", c.Sweep, at)
	}
	return s.String()
}

func runsText(v, b MeanStd) string {
	if v.N != b.N {
		return fmt.Sprintf("%d and %d runs", v.N, b.N)
	}
	return fmt.Sprintf("%d runs each", v.N)
}

// saturatedAt is the warning kind of the saturated client hosts among
// the runs at sweep value at of c's baseline and last variant, the two
// the conclusion compares: WarnSaturated when the host also served,
// WarnClientBound when it ran only the load generator, "" when none was.
func saturatedAt(c *Compare, at string) WarningKind {
	kind := WarningKind("")
	for _, vi := range []int{0, len(c.Variants) - 1} {
		v := &c.Variants[vi]
		for pi := range v.Points {
			if v.Points[pi].Value != at {
				continue
			}
			switch Saturation(c, v, &v.Points[pi]) {
			case WarnSaturated:
				return WarnSaturated
			case WarnClientBound:
				kind = WarnClientBound
			}
		}
	}
	return kind
}

// Saturation is the warning kind of point p of variant v of c (the rule
// the reports' warnings and conclusion use, and the booth's headline):
// WarnSaturated when a run of it had a saturated client host that also
// served, WarnClientBound when the saturated host ran only the load
// generator, "" when no run was client-bound.
func Saturation(c *Compare, v *VariantResult, p *SweepPoint) WarningKind {
	kind := WarningKind("")
	for _, r := range p.Runs {
		switch {
		case !r.ClientBound:
		case len(c.SharedClientHosts(v)) > 0:
			return WarnSaturated
		default:
			kind = WarnClientBound
		}
	}
	return kind
}

// saturatedConclusion says what was measured, its noise, and that the
// saturated host the report warns of makes it no verdict: never "better"
// or "worse".
func saturatedConclusion(c *Compare, label, baseLabel, at string, m MetricDesc, d Delta, v, b MeanStd, sat WarningKind) string {
	var s strings.Builder
	s.WriteString(measuredText(c, label, baseLabel, at, m, d, v, b))
	if d.HasP {
		fmt.Fprintf(&s, " (%s, %s)", formatP(d.P), runsText(v, b))
	} else {
		fmt.Fprintf(&s, " (%s: noise not measured)", runsWord(min(v.N, b.N))+" a side")
	}
	if sat == WarnSaturated {
		s.WriteString(", measured on a saturated shared host: the load generator and the servers shared one host's CPUs, which were the limit, so this is that host's limit with both on it and not a verdict on the variants")
	} else {
		s.WriteString(", measured with a saturated client host (client-bound): the load generator limited these figures, so this is not a verdict on the variants")
	}
	return s.String()
}

func conclusionText(c *Compare, label, baseLabel, at string, m MetricDesc, d Delta, v, b MeanStd) string {
	var s strings.Builder
	s.WriteString(measuredText(c, label, baseLabel, at, m, d, v, b))
	s.WriteString(", ")
	runs := runsText(v, b)
	switch d.Verdict(m.Name) {
	case Improved:
		fmt.Fprintf(&s, "better beyond the run-to-run noise (%s, %s)", formatP(d.P), runs)
	case Worsened:
		fmt.Fprintf(&s, "worse beyond the run-to-run noise (%s, %s)", formatP(d.P), runs)
	case Same:
		if d.HasP {
			fmt.Fprintf(&s, "within the run-to-run noise (%s, %s)", formatP(d.P), runs)
		} else {
			s.WriteString("no change")
		}
	case Untested:
		fmt.Fprintf(&s, "not tested against the noise: %s, so the run-to-run spread was not measured", runsWord(min(v.N, b.N))+" a side")
	case Moved:
		fmt.Fprintf(&s, "a change that is neither better nor worse in itself (%s)", runs)
	}
	return s.String()
}

func withUnit(m MetricDesc, ms MeanStd) string {
	if ms.N >= 2 {
		return FormatMeanStd(ms) + UnitSuffix(m.Unit)
	}
	return FormatNumber(ms.Mean) + UnitSuffix(m.Unit)
}

func runsWord(n int) string {
	if n == 1 {
		return "1 run"
	}
	return fmt.Sprintf("%d runs", n)
}
