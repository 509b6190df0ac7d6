package compare

import (
	"math"

	"github.com/dpulab/dpulab/steps/results"
)

// metric is one row of the compare table: a steps.MetricDesc, the one
// table report.md renders from too. A part of another metric (the network
// share of server CPU) is indented under it.
type metric struct {
	key   string
	label string
	desc  results.MetricDesc
	get   func(results.Stats) *results.MeanStd
}

// tableMetrics reads the table at each call, so a metric registered after
// this package loaded shows too.
func tableMetrics() []metric {
	var out []metric
	for _, d := range results.MetricDescs() {
		if d.Read == nil {
			continue // a per-second figure only (p50): no summary to tabulate
		}
		label := d.Label
		if d.Parent != "" {
			label = "  " + label
		}
		out = append(out, metric{key: d.Name, label: label, desc: d, get: func(s results.Stats) *results.MeanStd { return d.Read(&s) }})
	}
	return out
}

// delta returns the change of metric at point p against the baseline point,
// preferring the engine's figure and computing it when absent.
func delta(mt metric, p, base results.SweepPoint) (float64, bool) {
	if d, ok := p.DeltaPct[mt.key]; ok {
		return d, true
	}
	v, b := mt.get(p.Stats), mt.get(base.Stats)
	if v == nil || b == nil || b.Mean == 0 {
		return 0, false
	}
	return (v.Mean - b.Mean) / b.Mean * 100, true
}

// deltaText says the change with its sign and in words, so it reads right
// without colour: "+31.2% better" (steps.FormatDelta, as in report.md).
// better reports the direction for colour; same is true for a change too
// small to matter and for metrics that are neither better nor worse when
// they move (network Gb/s follows the load and the path).
func deltaText(mt metric, pct float64) (text string, better, same bool) {
	text = results.FormatDelta(mt.key, pct)
	if results.Neutral(mt.key) || math.Abs(pct) < 0.05 {
		return text, false, true
	}
	return text, (pct < 0) == results.LowerIsBetter(mt.key), false
}
