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

// big draws f's delta in the layout's font, or "not measured", or, with
// no verdict to state, the two measured figures, each with its variant.
func (l layout) big(m *Model, f Figure) []string {
	if !f.Measured {
		return []string{m.Styles.Muted.Render("not measured")}
	}
	if f.Big == "" {
		var out []string
		for _, s := range f.Sides {
			out = append(out, m.Styles.Bold.Render(s))
		}
		return out
	}
	st := m.styleOf(f)
	var out []string
	for _, r := range l.font.render(f.Big) {
		out = append(out, st.Render(r))
	}
	return out
}

// bigWidth is the columns f's big part takes.
func (l layout) bigWidth(f Figure) int {
	if f.Big != "" {
		return l.font.width(f.Big)
	}
	w := 0
	for _, s := range f.Sides {
		w = max(w, ansi.StringWidth(s))
	}
	return w
}

// words are the lines beside or under the digits: the metric, the delta
// in words, the two means.
func (m *Model) words(f Figure, w int) []string {
	st := m.Styles
	ls := wrap(st.Bold, f.Metric.Label, w)
	if !f.Measured {
		return append(ls, wrap(st.Muted, "this run did not measure it", w)...)
	}
	if f.NoVerdict != "" {
		// The figures themselves stand where the digits would.
		return append(ls, wrap(st.Muted, f.NoVerdict, w)...)
	}
	ls = append(ls, wrap(m.styleOf(f), f.Words, w)...)
	return append(ls, wrap(st.Muted, f.Values, w)...)
}

func (l layout) drawRows(m *Model, figs []Figure, w, h int) (string, bool) {
	bigW := 0
	for _, f := range figs {
		if f.Measured {
			bigW = max(bigW, l.bigWidth(f))
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
		if f.Measured && l.bigWidth(f) > colW {
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
		ls := m.words(f, w)
		if f.Measured && f.Big == "" {
			// No verdict: the measured figures themselves.
			for _, s := range f.Sides {
				ls = append(ls, wrap(m.Styles.Bold, s, w)...)
			}
		}
		groups = append(groups, strings.Join(ls, "\n"))
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
