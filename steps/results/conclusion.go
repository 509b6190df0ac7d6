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
	// Verdict is the significance rule's call on it (Delta.Verdict);
	// meaningless when Compared is false.
	Verdict Verdict
	// Compared is false when the run measured one variant, or nothing.
	Compared bool
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

func conclusionText(c *Compare, label, baseLabel, at string, m MetricDesc, d Delta, v, b MeanStd) string {
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
	s.WriteString(", ")
	runs := fmt.Sprintf("%d runs each", v.N)
	if v.N != b.N {
		runs = fmt.Sprintf("%d and %d runs", v.N, b.N)
	}
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
