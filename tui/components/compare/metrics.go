package compare

import (
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

// delta returns the change of metric at point p of variant v against the
// baseline point, with its significance over the runs, marked when a host
// was saturated (results.DeltaAt, as the reports' tables).
func delta(mt metric, c *results.Compare, v *results.VariantResult, p, base results.SweepPoint) (results.Delta, bool) {
	return results.DeltaAt(c, mt.key, v, &p, &base)
}

// deltaText says the change so it reads right without colour (Delta.Short:
// "+31.2% better", "~ +3.1%" inside the noise; the table's legend says what
// the marks mean). better reports the direction for colour; same is true
// for a change within the noise or too small to matter, one whose noise was
// not measured, and one of a metric that is neither better nor worse.
func deltaText(mt metric, d results.Delta) (text string, better, same bool) {
	text = d.Short(mt.key)
	switch d.Verdict(mt.key) {
	case results.Improved:
		return text, true, false
	case results.Worsened:
		return text, false, false
	}
	return text, false, true
}
