package chart

import (
	"fmt"
	"math"
	"strings"

	"github.com/guptarohit/asciigraph"
)

// Spec describes one chart.
type Spec struct {
	// Series are the lines to draw; Legends names them (same order).
	Series  [][]float64
	Legends []string
	// Width and Height are the whole box the chart may use, labels and
	// legend included.
	Width, Height int
	Caption       string
	// Colors colour the series; nil draws without colour (NO_COLOR).
	Colors []asciigraph.AnsiColor
	// Precision of the y labels; negative picks automatically.
	Precision int
	// LowerBound, when not NaN, pins the bottom of the y axis (0 for rates).
	LowerBound float64
	// XMin and XMax, when XMax > XMin, draw an x axis with that range.
	XMin, XMax float64
	// XTicks is the number of x labels (0 picks from the width).
	XTicks int
	// Stretch spreads short series over the whole width; without it a
	// live chart draws one column per value and grows to the right, so
	// the time axis keeps its scale.
	Stretch bool
}

// SeriesChars draw the second and later series of a chart.
var SeriesChars = []string{"─", "•", "x", "o", "+", "#"}

// labelWidth is the room asciigraph's y labels take with our formatter.
const labelWidth = 9

// Plot renders spec. It never panics: series with no finite value are
// dropped (asciigraph panics on empty input), and a chart with nothing to
// draw says so instead.
func Plot(spec Spec) string {
	var data [][]float64
	var legends []string
	var colors []asciigraph.AnsiColor
	for i, s := range spec.Series {
		if !hasFinite(s) {
			continue
		}
		data = append(data, s)
		if i < len(spec.Legends) {
			legends = append(legends, spec.Legends[i])
		}
		if i < len(spec.Colors) {
			colors = append(colors, spec.Colors[i])
		}
	}
	if len(data) == 0 || spec.Width < 12 || spec.Height < 3 {
		msg := "waiting for data…"
		if spec.Caption != "" {
			msg = spec.Caption + ": " + msg
		}
		return padBlock(msg, spec.Width, spec.Height)
	}
	plotH := spec.Height - 1 // asciigraph draws Height+1 rows
	if spec.Caption != "" {
		plotH--
	}
	if len(legends) > 0 {
		plotH -= 2
	}
	if spec.XMax > spec.XMin {
		plotH -= 2
	}
	if plotH < 1 {
		plotH = 1
	}
	plotW := spec.Width - labelWidth - 2
	if plotW < 2 {
		plotW = 2
	}
	longest := 0
	for _, s := range data {
		longest = max(longest, len(s))
	}
	if !spec.Stretch && longest < plotW {
		plotW = max(longest, 1)
	}
	opts := []asciigraph.Option{
		asciigraph.Height(plotH),
		asciigraph.Offset(2),
		asciigraph.YAxisValueFormatter(func(v float64) string { return Human(v) }),
	}
	if plotW > 1 {
		opts = append(opts, asciigraph.Width(plotW))
	}
	if !math.IsNaN(spec.LowerBound) {
		opts = append(opts, asciigraph.LowerBound(spec.LowerBound))
	}
	if spec.XMax > spec.XMin {
		opts = append(opts, asciigraph.XAxisRange(spec.XMin, spec.XMax), asciigraph.XAxisTickCount(xticks(spec.XTicks, plotW)))
	}
	if spec.Caption != "" {
		opts = append(opts, asciigraph.Caption(spec.Caption))
	}
	if len(data) > 1 {
		// Series after the first are drawn with their own character so the
		// chart reads without colour (NO_COLOR, text captures); the legend
		// names the character.
		sets := make([]asciigraph.CharSet, len(data))
		for i := range sets {
			if i == 0 {
				sets[i] = asciigraph.DefaultCharSet
			} else {
				sets[i] = asciigraph.CreateCharSet(SeriesChars[i%len(SeriesChars)])
			}
		}
		opts = append(opts, asciigraph.SeriesChars(sets...))
		for i := range legends {
			if i == 0 {
				legends[i] = "─ " + legends[i]
			} else {
				legends[i] = SeriesChars[i%len(SeriesChars)] + " " + legends[i]
			}
		}
	}
	if len(legends) > 0 {
		opts = append(opts, asciigraph.SeriesLegends(legends...))
	}
	if len(colors) > 0 {
		opts = append(opts, asciigraph.SeriesColors(colors...))
	}
	out := asciigraph.PlotMany(data, opts...)
	return padBlock(out, spec.Width, spec.Height)
}

func hasFinite(s []float64) bool {
	for _, v := range s {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			return true
		}
	}
	return false
}

// padBlock cuts or pads text to exactly h lines so that a grid of charts
// keeps its shape whatever asciigraph decides.
func padBlock(s string, w, h int) string {
	lines := strings.Split(s, "\n")
	if h > 0 && len(lines) > h {
		lines = lines[:h]
	}
	for h > 0 && len(lines) < h {
		lines = append(lines, "")
	}
	_ = w
	return strings.Join(lines, "\n")
}

// Human formats a number compactly for axis labels and big numbers:
// 12.7M, 950k, 3.20, 0.051.
func Human(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	a := math.Abs(v)
	if a < 0.0005 {
		// Axis arithmetic leaves -1e-13 where the axis meets zero; it must
		// not read "-0.000".
		return "0.00"
	}
	switch {
	case a >= 1e9:
		return fmt.Sprintf("%.2fG", v/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case a >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	case a >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1 || a == 0:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

func xticks(want, plotW int) int {
	if want > 1 && want <= plotW/6 {
		return want
	}
	return min(max(plotW/10, 2), 9)
}
