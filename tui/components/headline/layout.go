package headline

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// layout draws the figures in w×h, or reports that they do not fit.
type layout struct {
	font font
	// rows stacks the figures, words left and digits right; else they
	// stand side by side in columns, words under the digits.
	rows bool
}

// layouts in order of preference: the biggest digits first; at one size,
// rows (wider digits) before columns.
var layouts = func() []layout {
	var ls []layout
	for _, f := range fonts {
		ls = append(ls, layout{font: f, rows: true}, layout{font: f})
	}
	return ls
}()

func (l layout) draw(m *Model, figs []Figure, w, h int) (string, bool) {
	if l.rows {
		return l.drawRows(m, figs, w, h)
	}
	return l.drawColumns(m, figs, w, h)
}

// big draws f's delta in the layout's font, or "not measured".
func (l layout) big(m *Model, f Figure) []string {
	if !f.Measured {
		return []string{m.Styles.Muted.Render("not measured")}
	}
	st := m.styleOf(f)
	var out []string
	for _, r := range l.font.render(f.Big) {
		out = append(out, st.Render(r))
	}
	return out
}

// words are the lines beside or under the digits: the metric, the delta
// in words, the two means.
func (m *Model) words(f Figure, w int) []string {
	st := m.Styles
	ls := wrap(st.Bold, f.Metric.Label, w)
	if !f.Measured {
		return append(ls, wrap(st.Muted, "this run did not measure it", w)...)
	}
	ls = append(ls, wrap(m.styleOf(f), f.Words, w)...)
	return append(ls, wrap(st.Muted, f.Values, w)...)
}

func (l layout) drawRows(m *Model, figs []Figure, w, h int) (string, bool) {
	bigW := 0
	for _, f := range figs {
		if f.Measured {
			bigW = max(bigW, l.font.width(f.Big))
		}
	}
	leftW := w - bigW - 3
	if leftW < 24 {
		return "", false
	}
	// The words stay near their digits on a wide screen.
	leftW = min(leftW, max(32, w/3))
	var blocks []string
	for _, f := range figs {
		left := strings.Join(m.words(f, leftW), "\n")
		right := strings.Join(l.big(m, f), "\n")
		blocks = append(blocks, lipgloss.JoinHorizontal(lipgloss.Top,
			lipgloss.NewStyle().Width(leftW).Render(left), "   ", right))
	}
	out := strings.Join(blocks, "\n\n")
	return out, fits(out, w, h)
}

func (l layout) drawColumns(m *Model, figs []Figure, w, h int) (string, bool) {
	if len(figs) == 0 {
		return "", true
	}
	gap := 2
	colW := (w - gap*(len(figs)-1)) / len(figs)
	if colW < 16 {
		return "", false
	}
	for _, f := range figs {
		if f.Measured && l.font.width(f.Big) > colW {
			return "", false
		}
	}
	var cols []string
	for _, f := range figs {
		ls := m.words(f, colW)[:1] // the metric above the digits
		ls = append(ls, "")
		ls = append(ls, l.big(m, f)...)
		ls = append(ls, "")
		ls = append(ls, m.words(f, colW)[1:]...)
		for i, s := range ls {
			ls[i] = lipgloss.PlaceHorizontal(colW, lipgloss.Center, s)
		}
		cols = append(cols, strings.Join(ls, "\n"))
	}
	parts := []string{cols[0]}
	for _, c := range cols[1:] {
		parts = append(parts, strings.Repeat(" ", gap), c)
	}
	out := lipgloss.JoinHorizontal(lipgloss.Top, parts...)
	return out, fits(out, w, h)
}

// plainLayout is the last resort: one figure per line group, no big
// digits (a terminal too small for any font).
func plainLayout(m *Model, figs []Figure, w int) (string, bool) {
	var groups []string
	for _, f := range figs {
		groups = append(groups, strings.Join(m.words(f, w), "\n"))
	}
	return strings.Join(groups, "\n"), true
}

// fits reports whether s has at most h lines of at most w columns.
func fits(s string, w, h int) bool {
	ls := strings.Split(s, "\n")
	if len(ls) > h {
		return false
	}
	for _, l := range ls {
		if ansi.StringWidth(l) > w {
			return false
		}
	}
	return true
}
