package compare

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dpulab/dpulab/internal/plot"
	"github.com/dpulab/dpulab/steps/results"
	"github.com/dpulab/dpulab/tui/chart"
)

// plotted returns the metrics the table says to draw in charts of kind.
func plotted(kind results.Plots) []results.MetricDesc {
	var out []results.MetricDesc
	for _, d := range results.MetricDescs() {
		if d.Plots&kind != 0 {
			out = append(out, d)
		}
	}
	return out
}

// heights shares h lines among n charts, the first weighing first/rest
// times as much as each other one, plus extra lines (for an x axis).
func heights(h, n, first, rest, extra int) []int {
	out := make([]int, n)
	if n == 0 {
		return out
	}
	out[0] = h*first/(first+rest*(n-1)) + extra
	if n == 1 {
		out[0] = h
	}
	left := h - out[0]
	for i := 1; i < n; i++ {
		out[i] = left * i / (n - 1)
		out[i] -= left * (i - 1) / (n - 1)
	}
	return out
}

// chartsView overlays the variants' per-second series of the first run at
// the selected sweep point, a chart per PlotPerSecond metric. Each second
// holds its value over its columns, as in report.md: a line interpolated
// between seconds would draw values nobody measured.
func (m *Model) chartsView(c *results.Compare, h int) string {
	metrics := plotted(results.PlotPerSecond)
	// Each series says what its figures are (an emulated one is tagged
	// [EMULATION]) when they differ; when they do not, the title says it
	// once and the legend keeps every series' name (ChartLegends).
	legends := results.ChartLegends(m.res, c)
	head := "per-second series, run 1"
	if l := pointLabel(c, m.point); l != "" {
		head += " at " + l + " (↑/↓ to change)"
	}
	out := []string{m.Styles.Muted.Render(head)}
	// A metric this compare never measured (host (ESXi) figures without
	// vSphere) gets no chart: it would only take the others' lines.
	var kept []results.MetricDesc
	var all [][][]float64
	for _, d := range metrics {
		var series [][]float64
		for _, v := range c.Variants {
			var s []float64
			if m.point < len(v.Points) && len(v.Points[m.point].Runs) > 0 {
				s = results.PerSecond(d, v.Points[m.point].Runs[0].Series)
			}
			series = append(series, s)
		}
		if k := len(kept); k == 0 && d.Name == metrics[0].Name || hasData(series) {
			kept, all = append(kept, d), append(all, series)
		}
	}
	hs := heights(h-1, len(kept), 1, 1, 0)
	for k, d := range kept {
		out = append(out, chart.Plot(plot.Spec{Series: all[k], Legends: legends, Width: m.Width, Height: hs[k],
			Caption: d.Label + " per second", Fill: plot.Hold}, m.Styles.SeriesColors))
	}
	return strings.Join(out, "\n")
}

// sweepView draws the mean of each PlotSweep metric (TPS, avg latency)
// against the swept variable, one line per variant: the whitepaper's
// figure 3 shape, whose published figures go under the first chart.
func (m *Model) sweepView(c *results.Compare, h int) string {
	st := m.Styles
	if c.Sweep == "" || len(c.Variants[0].Points) < 2 {
		// Wrapped, not cut: fit truncates each line to the view's width.
		return st.Muted.Width(max(m.Width, 20)).Render("This compare has no sweep: the sweep chart needs results at two or more values of one variable (e.g. instances 10..80).")
	}
	// Each series says what its figures are (an emulated one is tagged
	// [EMULATION]) when they differ; when they do not, the title says it
	// once and the legend keeps every series' name (ChartLegends).
	legends := results.ChartLegends(m.res, c)
	var vals []string
	for _, p := range c.Variants[0].Points {
		vals = append(vals, p.Value)
	}
	xmin, xmax, even := evenRange(vals)
	note := fmt.Sprintf("x: %s = %s", c.Sweep, strings.Join(vals, ", "))
	if !even {
		note += " (not evenly spaced: points are drawn at equal distances)"
		xmin, xmax = 0, 0
	}
	// The published figures go right under the chart they compare with.
	var refs []string
	if m.res != nil {
		for i, r := range m.res.References {
			if i == 3 {
				break
			}
			refs = append(refs, fmt.Sprintf("ref: %s: %s", r.Label, r.Value)+st.Muted.Render(" ("+r.Source+")"))
		}
	}
	metrics := plotted(results.PlotSweep)
	var kept []results.MetricDesc
	var all [][][]float64
	for _, d := range metrics {
		var series [][]float64
		for _, v := range c.Variants {
			var s []float64
			for _, p := range v.Points {
				s = append(s, results.SweepValue(d, p.Stats))
			}
			series = append(series, s)
		}
		// As in chartsView: the first metric always, the others when
		// measured.
		if len(kept) == 0 && d.Name == metrics[0].Name || hasData(series) {
			kept, all = append(kept, d), append(all, series)
		}
	}
	hs := heights(h-len(refs)-1, len(kept), 3, 2, 1)
	out := []string{st.Muted.Render(note)}
	for k, d := range kept {
		series := all[k]
		spec := plot.Spec{Series: series, Legends: legends, Width: m.Width, Height: hs[k],
			Caption: "mean " + d.Label + " vs " + c.Sweep, Fill: plot.Stretch}
		if k == 0 {
			// The first chart carries the x axis for all.
			spec.XMin, spec.XMax, spec.XTicks = xmin, xmax, len(vals)
		}
		out = append(out, chart.Plot(spec, st.SeriesColors))
		if k == 0 && len(refs) > 0 {
			out = append(out, refs...)
		}
	}
	return strings.Join(out, "\n")
}

// evenRange reports the numeric range of vals and whether they are evenly
// spaced numbers (only then is a linear x axis honest).
func evenRange(vals []string) (lo, hi float64, even bool) {
	if len(vals) < 2 {
		return 0, 0, false
	}
	xs := make([]float64, len(vals))
	for i, v := range vals {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return 0, 0, false
		}
		xs[i] = f
	}
	step := xs[1] - xs[0]
	for i := 2; i < len(xs); i++ {
		if math.Abs(xs[i]-xs[i-1]-step) > 1e-9*math.Abs(step) {
			return 0, 0, false
		}
	}
	return xs[0], xs[len(xs)-1], step > 0
}

// hasData reports whether any series holds a measured value (not NaN).
func hasData(series [][]float64) bool {
	for _, s := range series {
		for _, v := range s {
			if !math.IsNaN(v) {
				return true
			}
		}
	}
	return false
}
