package results

import (
	"math"
	"slices"
	"strings"

	"github.com/dpulab/dpulab/internal/plot"
)

// Sizes of report.md's plot areas, in characters.
const (
	chartWidth       = 60
	sweepChartHeight = 12
	chartHeight      = 10
)

// renderCharts draws the capacity searches' table and chart (capacity.go),
// then, from the metric table, the sweep charts (the mean of
// each PlotSweep metric against the swept variable) and the per-second
// charts (each PlotPerSecond metric, first run of the last sweep point per
// variant), the variants overlaid.
func renderCharts(b *strings.Builder, r *Results, c *Compare) {
	renderCapacity(b, r, c)
	// Each legend says what its variant's figures are, each caption what
	// the chart's are (a chart is copied out of its report alone).
	labels := make([]string, len(c.Variants))
	for i := range c.Variants {
		labels[i] = LegendLabel(r, &c.Variants[i])
	}
	kind := CompareFigures(r, c).Title()
	if kind != "" {
		kind += ": "
	}
	metrics := MetricDescs()
	if c.Sweep != "" && maxPoints(c) > 1 {
		for _, m := range metrics {
			// Captions only for what the run measured: no "host (ESXi)
			// CPU" chart in a run without ESXi figures.
			if m.Plots&PlotSweep == 0 || !measured(c, m.Name) {
				continue
			}
			series := make([][]float64, len(c.Variants))
			for i, v := range c.Variants {
				for _, p := range v.Points {
					series[i] = append(series[i], SweepValue(m, p.Stats))
				}
			}
			caption := kind + "mean " + m.Label + " against " + c.Sweep + " (" + sweepValues(c) + ")"
			b.WriteString("```\n" + chart(caption, labels, series, chartWidth, sweepChartHeight) + "```\n\n")
		}
	}
	// Every variant at the same point, the baseline's last (as report.html
	// does): a variant that stopped short of it is said to, not drawn at
	// another point under this caption.
	at, atOK := lastValue(c)
	psLabels := slices.Clone(labels)
	for _, m := range metrics {
		if m.Plots&PlotPerSecond == 0 {
			continue
		}
		series := make([][]float64, len(c.Variants))
		for i, v := range c.Variants {
			for _, p := range v.Points {
				if atOK && p.Value == at && len(p.Runs) > 0 {
					series[i] = PerSecond(m, p.Runs[0].Series)
				}
			}
			if series[i] == nil && atOK && c.Sweep != "" {
				psLabels[i] = labels[i] + " (no run at " + c.Sweep + "=" + at + ")"
			}
		}
		if !measured(c, m.Name) && !anyValue(series) {
			continue
		}
		caption := kind + m.Label + " per second (run 1)"
		if c.Sweep != "" && atOK {
			caption = kind + m.Label + " per second (run 1, " + c.Sweep + "=" + at + ")"
		}
		b.WriteString("```\n" + chart(caption, psLabels, series, chartWidth, chartHeight) + "```\n\n")
	}
}

// SweepValue is m's mean at a sweep point, NaN when not measured (a gap).
func SweepValue(m MetricDesc, s Stats) float64 {
	if m.Read != nil {
		if v := m.Read(&s); v != nil {
			return v.Mean
		}
	}
	return nan
}

// PerSecond is m's per-second series over points, NaN where a second did
// not measure it (a gap).
func PerSecond(m MetricDesc, points []Point) []float64 {
	out := make([]float64, len(points))
	for i := range points {
		out[i] = nan
		if m.Sample != nil {
			if v, ok := m.Sample(&points[i]); ok {
				out[i] = v
			}
		}
	}
	return out
}

// chart plots series (one per label) as plain text for report.md, in a
// plot area of width×height characters: each value is held over equal
// columns rather than interpolated, and no data at all says "(no data)".
func chart(caption string, labels []string, series [][]float64, width, height int) string {
	out := plot.Plot(plot.Spec{Series: series, Legends: labels, Caption: caption, Empty: "(no data)", Fill: plot.Hold,
		Width: width + plot.LabelWidth + 2, Height: height + 4})
	return strings.TrimRight(out, "\n") + "\n"
}

var nan = math.NaN()

// anyValue reports whether any series holds a measured value (not NaN).
func anyValue(series [][]float64) bool {
	for _, s := range series {
		for _, v := range s {
			if !math.IsNaN(v) {
				return true
			}
		}
	}
	return false
}
