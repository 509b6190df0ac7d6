package chart

import (
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
// styles[i%len(styles)], or nil (plain) without styles.
func Paint(styles []lipgloss.Style) func(series int, s string) string {
	if len(styles) == 0 {
		return nil
	}
	return func(i int, s string) string { return styles[i%len(styles)].Render(s) }
}
