package compare

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/dpulab/dpulab/tui/chart"
	"github.com/guptarohit/asciigraph"
)

func (m *Model) colors(n int) []asciigraph.AnsiColor {
	cs := m.Styles.SeriesColors
	if cs == nil {
		return nil
	}
	out := make([]asciigraph.AnsiColor, n)
	for i := range out {
		out[i] = cs[i%len(cs)]
	}
	return out
}

// chartsView overlays the variants' per-second series of the first run at
// the selected sweep point.
func (m *Model) chartsView(c *results.Compare, h int) string {
	var tps, p99 [][]float64
	var legends []string
	for _, v := range c.Variants {
		legends = append(legends, v.Label)
		var a, b []float64
		if m.point < len(v.Points) && len(v.Points[m.point].Runs) > 0 {
			for _, pt := range v.Points[m.point].Runs[0].Series {
				a = append(a, pt.OpsPerSec)
				b = append(b, pt.LatencyMs.P99)
			}
		}
		tps = append(tps, a)
		p99 = append(p99, b)
	}
	head := "per-second series, run 1"
	if l := pointLabel(c, m.point); l != "" {
		head += " at " + l + " (↑/↓ to change)"
	}
	top := (h - 1) / 2
	w := m.Width
	return m.Styles.Muted.Render(head) + "\n" +
		chart.Plot(chart.Spec{Series: tps, Legends: legends, Width: w, Height: top, Caption: "TPS (ops/s) per second", Colors: m.colors(len(legends)), LowerBound: 0, Stretch: true}) + "\n" +
		chart.Plot(chart.Spec{Series: p99, Legends: legends, Width: w, Height: h - 1 - top, Caption: "p99 latency (ms) per second", Colors: m.colors(len(legends)), LowerBound: 0, Stretch: true})
}

// sweepView draws mean TPS (and avg latency) against the swept variable, one
// line per variant: the whitepaper's figure 3 shape.
func (m *Model) sweepView(c *results.Compare, h int) string {
	st := m.Styles
	if c.Sweep == "" || len(c.Variants[0].Points) < 2 {
		return st.Muted.Render("This compare has no sweep: the sweep chart needs results at two or more values of one variable (e.g. instances 10..80).")
	}
	var tps, lat [][]float64
	var legends []string
	for _, v := range c.Variants {
		legends = append(legends, v.Label)
		var a, b []float64
		for _, p := range v.Points {
			a = append(a, nanIfZero(p.Stats.OpsPerSec))
			b = append(b, nanIfZero(p.Stats.LatencyAvgMs))
		}
		tps = append(tps, a)
		lat = append(lat, b)
	}
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
	h -= len(refs)
	top := (h-1)*3/5 + 1
	w := m.Width
	refBlock := ""
	if len(refs) > 0 {
		refBlock = "\n" + strings.Join(refs, "\n")
	}
	return st.Muted.Render(note) + "\n" +
		chart.Plot(chart.Spec{Series: tps, Legends: legends, Width: w, Height: top, Caption: "mean TPS vs " + c.Sweep + " (cf. whitepaper figure 3)", Colors: m.colors(len(legends)), LowerBound: 0, XMin: xmin, XMax: xmax, XTicks: len(vals), Stretch: true}) + refBlock + "\n" +
		chart.Plot(chart.Spec{Series: lat, Legends: legends, Width: w, Height: h - 1 - top, Caption: "avg latency (ms) vs " + c.Sweep, Colors: m.colors(len(legends)), LowerBound: 0, Stretch: true})
}

func nanIfZero(s results.MeanStd) float64 {
	if s.N == 0 {
		return math.NaN()
	}
	return s.Mean
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
