package chart

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/dpulab/dpulab/internal/plot"
)

// Swatch precedes each legend entry in the TUI, in the series' colour.
const Swatch = "■"

// Plot draws spec (internal/plot's wrapper, shared with report.md) with
// the TUI's legend swatch, series i rendered in styles[i%len(styles)]; nil
// styles (NO_COLOR) leave the chart plain, its glyphs telling the series
// apart.
func Plot(spec plot.Spec, styles []lipgloss.Style) string {
	spec.Swatch = Swatch
	spec.Paint = Paint(styles)
	return plot.Plot(spec)
}

// Paint returns a plot.Spec.Paint that renders series i with
// styles[i%len(styles)], or nil (plain) without styles. Each style is
// rendered once around a marker and its opening and closing sequences
// reused, since a chart paints hundreds of short runs: styles of colours
// and attributes only (no width, padding or border), as chart styles are.
func Paint(styles []lipgloss.Style) func(series int, s string) string {
	if len(styles) == 0 {
		return nil
	}
	const marker = "\u2063" // invisible separator: no style changes it
	open, closing := make([]string, len(styles)), make([]string, len(styles))
	for i, st := range styles {
		open[i], closing[i], _ = strings.Cut(st.Render(marker), marker)
	}
	return func(i int, s string) string {
		i %= len(styles)
		return open[i] + s + closing[i]
	}
}
