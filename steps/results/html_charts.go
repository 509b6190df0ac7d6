package results

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dpulab/dpulab/internal/atomicfile"
	"github.com/dpulab/dpulab/steps/results/svgchart"
)

// ReportChart is one chart of a bench or compare step, as report.html
// inlines it and `dpulab report --format png` writes it for a slide.
type ReportChart struct {
	// Step is the bench or compare step it belongs to.
	Step string
	// Name is a file-name stem unique within the run: STEP-METRIC-sweep,
	// STEP-METRIC-per-second.
	Name  string
	Chart svgchart.Chart
	// Published counts the published figures of this chart's metric at a
	// point of its sweep: drawn (Chart.Refs) or, off its scale, named in
	// its legend.
	Published int
}

// ReportCharts are the charts of c, a bench or compare step of r, chosen
// from the metric table as report.md's are (renderCharts): the sweep charts
// (the mean of each PlotSweep metric against the swept variable, a line per
// variant, error bars from the runs' standard deviation, and r's published
// figures of that metric at a point of the sweep as markers of their own),
// the capacity searches' chart (capacity.go), then the per-second charts (each PlotPerSecond metric, first run of the
// last sweep point, the variants overlaid).
func ReportCharts(r *Results, c *Compare) []ReportChart {
	var out []ReportChart
	stem := fileStem(c.Step)
	if c.Sweep != "" && maxPoints(c) > 1 {
		xs, ticks := sweepAxis(c)
		var at []string
		for _, t := range ticks {
			at = append(at, t.Label)
		}
		var refs []refPoint
		for _, ref := range r.References {
			if ref.Step != c.Step {
				continue
			}
			if rp, ok := readRefPoint(ref, c.Sweep, at); ok {
				refs = append(refs, rp)
			}
		}
		for _, m := range MetricDescs() {
			if m.Plots&PlotSweep == 0 || !measured(c, m.Name) {
				continue
			}
			ch := svgchart.Chart{Title: "mean " + clean(m.Label) + " against " + clean(c.Sweep), XLabel: clean(c.Sweep), YLabel: axisLabel(m), XTicks: ticks}
			for vi, v := range c.Variants {
				s := svgchart.Series{Label: clean(LegendLabel(r, &c.Variants[vi]))}
				for _, p := range v.Points {
					s.X = append(s.X, xs[p.Value])
					s.Y = append(s.Y, SweepValue(m, p.Stats))
					e := nan
					if ms, ok := p.Stats.Metric(m.Name); ok && ms.N >= 2 {
						e = ms.Stddev
					}
					s.Err = append(s.Err, e)
				}
				ch.Series = append(ch.Series, s)
			}
			var shown int
			ch.Refs, ch.Notes, shown = refSeries(refs, m.Name, xs, ch.Series, clean(c.Sweep))
			if f := CompareFigures(r, c); shown > 0 && !f.Measured() {
				ch.Notes = append(ch.Notes, "published figures: not comparable, this run is "+f.article())
			}
			out = append(out, ReportChart{Step: c.Step, Name: stem + "-" + fileStem(m.Name) + "-sweep", Chart: ch, Published: shown})
		}
	}
	if rc, ok := capacityChart(r, c); ok {
		out = append(out, rc)
	}
	for _, m := range MetricDescs() {
		if m.Plots&PlotPerSecond == 0 {
			continue
		}
		// Every variant at the same point: the baseline's last, so a
		// variant that stopped short of it is said to, not drawn at
		// another point under this title.
		at, ok := lastValue(c)
		title := clean(m.Label) + " per second (run 1"
		if c.Sweep != "" && ok {
			title += ", " + clean(c.Sweep) + "=" + clean(at)
		}
		ch := svgchart.Chart{Title: title + ")", XLabel: "time since the measured part began (s)", YLabel: axisLabel(m)}
		for vi, v := range c.Variants {
			s := svgchart.Series{Label: clean(LegendLabel(r, &c.Variants[vi]))}
			var runs []RunResult
			for _, p := range v.Points {
				if ok && p.Value == at {
					runs = p.Runs
				}
			}
			if len(runs) > 0 {
				pts := runs[0].Series
				s.Y = PerSecond(m, pts)
				for _, p := range pts {
					s.X = append(s.X, p.T)
				}
			} else if ok && c.Sweep != "" {
				ch.Notes = append(ch.Notes, clean(v.Label)+": no run at "+clean(c.Sweep)+"="+clean(at))
			}
			ch.Series = append(ch.Series, s)
		}
		// Captions only for what the run measured: no "host (ESXi) CPU"
		// chart in a run without ESXi figures.
		ys := make([][]float64, len(ch.Series))
		for i, s := range ch.Series {
			ys[i] = s.Y
		}
		if !measured(c, m.Name) && !anyValue(ys) {
			continue
		}
		out = append(out, ReportChart{Step: c.Step, Name: stem + "-" + fileStem(m.Name) + "-per-second", Chart: ch})
	}
	if k := CompareFigures(r, c).Title(); k != "" {
		// A chart leaves its report (a PNG on a slide): it carries its
		// figures' label in its own title, and each series its own in
		// its legend.
		for i := range out {
			out[i].Chart.Title = clean(k) + " · " + out[i].Chart.Title
		}
	}
	return out
}

// lastValue is the sweep value of the first variant's last point (of the
// first variant with a point), where the per-second charts are drawn.
func lastValue(c *Compare) (string, bool) {
	for _, v := range c.Variants {
		if n := len(v.Points); n > 0 {
			return v.Points[n-1].Value, true
		}
	}
	return "", false
}

// offScale is how far above a chart's highest measured value a published
// figure may be and still be drawn: further up, it would flatten the
// measurements into a line along the bottom (a rehearsal's 200k TPS under a
// whitepaper's 20M), so it is named in the legend instead.
const offScale = 4

// refSeries groups the published points of metric into series (one per
// label stem and source, in the order first met), leaving as notes those
// off the scale of the measured series; shown counts the figures of
// metric either way.
func refSeries(refs []refPoint, metric string, xs map[string]float64, measured []svgchart.Series, sweep string) (series []svgchart.Series, notes []string, shown int) {
	top := 0.0
	for _, s := range measured {
		for i, y := range s.Y {
			if e := 0.0; !math.IsNaN(y) {
				if s.Err != nil && !math.IsNaN(s.Err[i]) {
					e = s.Err[i]
				}
				top = max(top, y+e)
			}
		}
	}
	index := map[[2]string]int{}
	for _, rp := range refs {
		if rp.metric != metric {
			continue
		}
		shown++
		if top > 0 && rp.y > offScale*top {
			notes = append(notes, clean("off the scale: "+rp.value+" at "+sweep+"="+rp.at+", "+refLegend(rp.stem, rp.source)))
			continue
		}
		k := [2]string{rp.stem, rp.source}
		i, ok := index[k]
		if !ok {
			i = len(series)
			index[k] = i
			series = append(series, svgchart.Series{Label: clean(refLegend(rp.stem, rp.source))})
		}
		series[i].X = append(series[i].X, xs[rp.at])
		series[i].Y = append(series[i].Y, rp.y)
	}
	return series, notes, shown
}

// sweepAxis places the swept values on the x axis: at their numbers when
// every one is a number (instances 1, 2, 4, 8 keep their spacing), else
// evenly in the order first met (value sizes "64B", "4KB").
func sweepAxis(c *Compare) (map[string]float64, []svgchart.Tick) {
	var order []string
	seen := map[string]bool{}
	numeric := true
	for _, v := range c.Variants {
		for _, p := range v.Points {
			if seen[p.Value] {
				continue
			}
			seen[p.Value] = true
			order = append(order, p.Value)
			if _, err := strconv.ParseFloat(strings.TrimSpace(p.Value), 64); err != nil {
				numeric = false
			}
		}
	}
	xs := map[string]float64{}
	var ticks []svgchart.Tick
	for i, v := range order {
		x := float64(i)
		if numeric {
			x, _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
		xs[v] = x
		ticks = append(ticks, svgchart.Tick{Value: x, Label: clean(v)})
	}
	return xs, ticks
}

// axisLabel is a metric's label with its unit in brackets: "TPS (ops/s)",
// "p99 latency (ms)", "server CPU (%)".
func axisLabel(m MetricDesc) string {
	l := clean(m.Label)
	if strings.HasSuffix(l, " "+m.Unit) {
		l = strings.TrimSuffix(l, " "+m.Unit)
	}
	return l + " (" + clean(m.Unit) + ")"
}

// fileStem keeps letters, digits, '-' and '_' of s (a step id from a lab
// file), so a chart's file name cannot leave its folder.
func fileStem(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
	if s == "" {
		return "step"
	}
	return s
}

// ChartsDir is the folder of a results folder that `dpulab report --format
// png` writes the charts' images into.
const ChartsDir = "charts"

// WriteChartPNGs writes every chart of r as DIR/charts/NAME.png at slide
// resolution (svgchart.PNGWidth × PNGHeight), each atomically, and returns
// the paths written. A chart with no data at all is left out. Each carries
// its ExportBand.
func WriteChartPNGs(dir string, r *Results) ([]string, error) {
	return writeCharts(dir, r, ".png", svgchart.PNG)
}

// WriteChartSVGs is WriteChartPNGs as DIR/charts/NAME.svg, standalone SVG
// files that scale (for a slide tool that takes vectors).
func WriteChartSVGs(dir string, r *Results) ([]string, error) {
	return writeCharts(dir, r, ".svg", func(c svgchart.Chart) ([]byte, error) {
		b, err := svgchart.SVG(c)
		if err != nil {
			return nil, err
		}
		// A file of its own: the namespace an inline <svg> gets from its
		// page, and the XML prolog.
		if !bytes.Contains(b, []byte("xmlns=")) {
			b = bytes.Replace(b, []byte("<svg"), []byte(`<svg xmlns="http://www.w3.org/2000/svg"`), 1)
		}
		return append([]byte("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"), b...), nil
	})
}

// ExportCharts are ReportCharts(r, c) as they leave the report (an image
// on a slide): each with ExportBand drawn across its top.
func ExportCharts(r *Results, c *Compare) []ReportChart {
	out := ReportCharts(r, c)
	band := ExportBand(r, c)
	for i := range out {
		out[i].Chart.Band = band
	}
	return out
}

// ExportBand is the line an exported chart of c carries across its top:
// what its figures are (CompareFigures; MEASURED for a measurement), the
// lab, the date and how many hosts the run had, so an image pasted on a
// slide cannot pass for another lab's or a DPU's result:
// "EMULATION (3 of 5 variants emulated) · lab quickstart · 2026-12-06 · 1 host".
func ExportBand(r *Results, c *Compare) string {
	f := CompareFigures(r, c)
	label := cmp.Or(f.Title(), "MEASURED")
	if f.Emulation != "" && mixedFigures(r, c) {
		label += " (" + f.Emulation + ")"
	}
	parts := []string{label, "lab " + r.Lab}
	if !r.Started.IsZero() {
		parts = append(parts, r.Started.UTC().Format("2006-01-02"))
	}
	if n := len(r.Hosts); n == 1 {
		parts = append(parts, "1 host")
	} else if n > 1 {
		parts = append(parts, fmt.Sprintf("%d hosts", n))
	}
	return clean(strings.Join(parts, " · "))
}

func writeCharts(dir string, r *Results, ext string, render func(svgchart.Chart) ([]byte, error)) ([]string, error) {
	out := filepath.Join(dir, ChartsDir)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("create the charts folder: %w", err)
	}
	var paths []string
	seen := map[string]int{}
	for i := range r.Benches {
		for _, rc := range ExportCharts(r, &r.Benches[i]) {
			b, err := render(rc.Chart)
			if errors.Is(err, svgchart.ErrNoData) {
				continue
			}
			if err != nil {
				return paths, err
			}
			name := rc.Name
			// Two steps whose ids differ only in dropped characters.
			if n := seen[name]; n > 0 {
				name = fmt.Sprintf("%s-%d", name, n+1)
			}
			seen[rc.Name]++
			p := filepath.Join(out, name+ext)
			if err := atomicfile.WriteFile(p, b, 0o644); err != nil {
				return paths, err
			}
			paths = append(paths, p)
		}
	}
	return paths, nil
}
