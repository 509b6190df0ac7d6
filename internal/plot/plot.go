// Package plot draws line charts as text with asciigraph: the one wrapper
// behind the TUI's live and compare charts and report.md's charts. It lives
// below both (internal/, importing neither lipgloss nor the TUI) so that
// steps/results can render report.md with it; the TUI adds colour through
// Spec.Paint, which tui/chart builds from lipgloss styles, and report.md
// leaves Paint nil to get plain text.
package plot

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/guptarohit/asciigraph"
)

// Fill says how a series shorter than the chart is spread over its width.
type Fill int

const (
	// Columns draws one column per value and lets the chart grow to the
	// right: a live chart's time axis keeps its scale as seconds arrive.
	Columns Fill = iota
	// Hold holds each value over an equal share of the width (a step per
	// second or per sweep value), so nothing is drawn that was not
	// measured.
	Hold
	// Stretch lets asciigraph interpolate between values over the whole
	// width: a line against a numeric x axis.
	Stretch
)

// Spec describes one chart.
type Spec struct {
	// Series are the lines to draw; Legends names them (same order). A
	// series with no finite value is left out, its legend with it; NaN
	// draws a gap.
	Series  [][]float64
	Legends []string
	// Width and Height are the whole box the chart may use, labels,
	// caption and legend included; the result has exactly Height lines.
	Width, Height int
	Caption       string
	// Empty is what the chart says when there is nothing to draw ("no
	// data" when empty).
	Empty string
	// LowerBound, when not NaN, pins the bottom of the y axis (0 for
	// rates). The zero value pins it at 0.
	LowerBound float64
	// XMin and XMax, when XMax > XMin, draw an x axis with that range;
	// XTicks is its number of labels (0 picks from the width).
	XMin, XMax float64
	XTicks     int
	// Fill spreads series shorter than the width.
	Fill Fill
	// Paint colours the text of series i (its line and its legend entry);
	// nil leaves every character plain, as report.md needs.
	Paint func(series int, s string) string
	// Swatch is drawn, painted, before each legend entry (the TUI's "■");
	// empty for plain text, where a swatch carries no colour.
	Swatch string
}

// glyphs draw series 0, 1, 2, ...: the first with asciigraph's box-drawing
// line, the others with a character of their own, so that a chart reads
// without colour (NO_COLOR, report.md, text captures); the legend names
// each series' glyph.
var glyphs = []string{"─", "•", "x", "o", "+", "#"}

// LabelWidth is the room the y labels take with Human and an offset of 2:
// a chart of Width w has a plot area about w-LabelWidth-2 wide.
const LabelWidth = 9

// sentinel is the asciigraph colour that marks series i's cells in its
// output, so Plot can hand each series' text to Paint (8-bit colours from
// 16 on, clear of the 3- and 4-bit ones and of asciigraph's Black at 188).
func sentinel(i int) asciigraph.AnsiColor { return asciigraph.AnsiColor(16 + i%160) }

// Plot renders spec in exactly spec.Height lines. It never panics:
// asciigraph panics on an empty series, so those are dropped, and a chart
// with nothing to draw (or no room) says so instead.
func Plot(spec Spec) string {
	var data [][]float64
	var legends []string
	var ids []int // original index of each drawn series, for Paint
	for i, s := range spec.Series {
		if !hasFinite(s) {
			continue
		}
		data = append(data, s)
		ids = append(ids, i)
		if i < len(spec.Legends) {
			legends = append(legends, spec.Legends[i])
		} else {
			legends = append(legends, "")
		}
	}
	if len(data) == 0 || spec.Width < 12 || spec.Height < 3 {
		msg := spec.Empty
		if msg == "" {
			msg = "no data"
		}
		if spec.Caption != "" {
			msg = spec.Caption + ": " + msg
		}
		return padBlock(msg, spec.Height)
	}
	legend := anyNonEmpty(legends)
	plotH := spec.Height - 1 // asciigraph draws Height+1 rows
	if spec.Caption != "" {
		plotH--
	}
	if legend {
		plotH -= 2
	}
	hasX := spec.XMax > spec.XMin
	if hasX {
		plotH -= 2
	}
	plotH = max(plotH, 1)
	plotW := max(spec.Width-LabelWidth-2, 2)
	longest := 0
	for _, s := range data {
		longest = max(longest, len(s))
	}
	switch spec.Fill {
	case Columns:
		plotW = min(plotW, max(longest, 1))
	case Hold:
		data, plotW = hold(data, longest, plotW)
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
	if hasX {
		opts = append(opts, asciigraph.XAxisRange(spec.XMin, spec.XMax), asciigraph.XAxisTickCount(xticks(spec.XTicks, plotW)))
	}
	if spec.Caption != "" {
		opts = append(opts, asciigraph.Caption(spec.Caption))
	}
	sets := make([]asciigraph.CharSet, len(data))
	colors := make([]asciigraph.AnsiColor, len(data))
	for i := range data {
		sets[i] = charSet(i)
		colors[i] = sentinel(i)
	}
	opts = append(opts, asciigraph.SeriesChars(sets...), asciigraph.SeriesColors(colors...))
	out := asciigraph.PlotMany(data, opts...)
	paint := func(i int, s string) string {
		if spec.Paint == nil || i < 0 || i >= len(ids) {
			return s
		}
		return spec.Paint(ids[i], s)
	}
	out = repaint(out, paint)
	if legend {
		drawn := plotW
		if plotW <= 1 {
			drawn = longest
		}
		out += "\n\n" + legendLine(out, legends, spec.Swatch, drawn, paint)
	}
	return padBlock(out, spec.Height)
}

func charSet(i int) asciigraph.CharSet {
	if i == 0 {
		return asciigraph.DefaultCharSet
	}
	return asciigraph.CreateCharSet(glyphs[i%len(glyphs)])
}

func glyph(i int) string {
	if i == 0 {
		return glyphs[0]
	}
	return glyphs[i%len(glyphs)]
}

// hold repeats each value so that the longest series fills the width in
// equal steps; asciigraph then draws them as they are instead of
// interpolating ramps between values that were never measured.
func hold(data [][]float64, longest, width int) ([][]float64, int) {
	k := width / max(longest, 1)
	if k <= 1 {
		return data, width
	}
	out := make([][]float64, len(data))
	for i, s := range data {
		if len(s) == 1 {
			// One value is one point; repeat it so it reads as a level.
			s = []float64{s[0], s[0]}
		}
		wide := make([]float64, 0, len(s)*k)
		for _, v := range s {
			for range k {
				wide = append(wide, v)
			}
		}
		out[i] = wide
	}
	return out, longest * k
}

// repaint replaces the sentinel colours in asciigraph's output by paint's
// rendering of each series' text, and drops every other escape (axis,
// labels and caption stay plain).
func repaint(s string, paint func(int, string) string) string {
	var b strings.Builder
	series := -1
	var run strings.Builder
	flush := func() {
		if run.Len() == 0 {
			return
		}
		b.WriteString(paint(series, run.String()))
		run.Reset()
	}
	for len(s) > 0 {
		if s[0] == '\x1b' {
			end := strings.IndexByte(s, 'm')
			if end < 0 {
				break
			}
			flush()
			series = -1
			if code, ok := strings.CutPrefix(s[:end], "\x1b[38;5;"); ok {
				if n, err := strconv.Atoi(code); err == nil && n >= 16 {
					series = n - 16
				}
			}
			s = s[end+1:]
			continue
		}
		if s[0] == '\n' {
			flush()
			b.WriteByte('\n')
			s = s[1:]
			continue
		}
		next := strings.IndexAny(s, "\x1b\n")
		if next < 0 {
			next = len(s)
		}
		if series >= 0 {
			run.WriteString(s[:next])
		} else {
			b.WriteString(s[:next])
		}
		s = s[next:]
	}
	flush()
	return b.String()
}

// legendLine lays the legend out as asciigraph does (centred under the plot
// area, three spaces apart), each entry "swatch glyph label" with the
// swatch and glyph painted in the series' colour.
func legendLine(plotted string, legends []string, swatch string, width int, paint func(int, string) string) string {
	left := axisColumn(plotted) + 1
	var items []string
	n := 0
	for i, l := range legends {
		item := paint(i, glyph(i)) + " " + l
		n += utf8.RuneCountInString(glyph(i)) + 1 + utf8.RuneCountInString(l)
		if swatch != "" {
			item = paint(i, swatch) + " " + item
			n += utf8.RuneCountInString(swatch) + 1
		}
		items = append(items, item)
	}
	n += 3 * (len(items) - 1)
	pad := left
	if n < width {
		pad += (width - n) / 2
	}
	return strings.Repeat(" ", pad) + strings.Join(items, "   ")
}

// axisColumn is the column of the y axis in the first line of a plot.
func axisColumn(plotted string) int {
	first, _, _ := strings.Cut(plotted, "\n")
	col := 0
	for _, r := range first {
		if r == '┤' || r == '┼' {
			return col
		}
		col++
	}
	return LabelWidth
}

func anyNonEmpty(ss []string) bool {
	for _, s := range ss {
		if s != "" {
			return true
		}
	}
	return false
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
func padBlock(s string, h int) string {
	lines := strings.Split(s, "\n")
	if h > 0 && len(lines) > h {
		lines = lines[:h]
	}
	for h > 0 && len(lines) < h {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}

func xticks(want, plotW int) int {
	if want > 1 && want <= plotW/6 {
		return want
	}
	return min(max(plotW/10, 2), 9)
}
