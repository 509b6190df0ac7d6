package compare

import (
	"fmt"
	"strings"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/charmbracelet/x/ansi"
)

// pad right-pads s (which may hold colour escapes) to w columns, cutting it
// when longer.
func pad(s string, w int) string {
	s = ansi.Truncate(s, w, "…")
	return s + strings.Repeat(" ", max(w-ansi.StringWidth(s), 0))
}

func (m *Model) tableView(c *results.Compare, h int) string {
	st := m.Styles
	var b strings.Builder
	if l := pointLabel(c, m.point); l != "" {
		b.WriteString(st.Bold.Render("at "+l) + st.Muted.Render(fmt.Sprintf("  (↑/↓ sweep point %d/%d)", m.point+1, m.points())) + "\n")
	}
	firstW := 20
	colW := max((m.Width-firstW)/len(c.Variants), 12)
	colW = min(colW, 34)
	// Header: variant labels, then where each ran.
	b.WriteString(pad(st.TableHeader.Render("metric"), firstW))
	for i, v := range c.Variants {
		lbl := v.Label
		if i == 0 {
			lbl += " (baseline)"
		}
		b.WriteString(pad(st.TableHeader.Render(lbl), colW))
	}
	b.WriteString("\n")
	b.WriteString(strings.Repeat("─", min(firstW+colW*len(c.Variants), m.Width)) + "\n")
	if m.point >= len(c.Variants[0].Points) {
		return b.String()
	}
	base := c.Variants[0].Points[m.point]
	for _, mt := range tableMetrics() {
		// Skip rows no variant measured (no sampler, no RAPL).
		any := false
		for _, v := range c.Variants {
			if m.point < len(v.Points) && mt.get(v.Points[m.point].Stats) != nil {
				any = true
			}
		}
		if !any {
			continue
		}
		b.WriteString(pad(mt.label, firstW))
		for i, v := range c.Variants {
			if m.point >= len(v.Points) {
				b.WriteString(pad("–", colW))
				continue
			}
			p := v.Points[m.point]
			val := mt.get(p.Stats)
			if val == nil {
				b.WriteString(pad("n/a", colW))
				continue
			}
			cell := mt.desc.Human(val.Mean)
			if val.N > 1 && colW >= 26 {
				cell += "±" + mt.desc.Human(val.Stddev)
			}
			if i > 0 {
				if d, ok := delta(mt, c, &c.Variants[i], p, base); ok {
					txt, better, same := deltaText(mt, d)
					switch {
					case same:
						txt = st.Muted.Render(txt)
					case better:
						txt = st.Better.Render(txt)
					default:
						txt = st.Worse.Render(txt)
					}
					cell += " " + txt
				}
			}
			b.WriteString(pad(cell, colW))
		}
		b.WriteString("\n")
	}
	runs := 0
	if p := c.Variants[0].Points; m.point < len(p) {
		runs = len(p[m.point].Runs)
	}
	// The marks' legend is results.Legend, the one the reports and the
	// booth use (with "! saturated host: no verdict"), wrapped, not cut,
	// so that it is read whole at 80 columns.
	for _, l := range []string{fmt.Sprintf("mean±stddev over %d run(s); deltas against %s; n/a = not measured", runs, c.Variants[0].Label), results.Legend} {
		for _, w := range strings.Split(ansi.Wrap(l, max(m.Width, 20), " "), "\n") {
			b.WriteString(st.Muted.Render(w) + "\n")
		}
	}
	if w := m.warningsBody(c); w != "" {
		b.WriteString("\n" + w + "\n")
	}
	if refs := m.res.References; len(refs) > 0 {
		b.WriteString("\n" + st.Bold.Render("Published reference figures (not measured here)") + "\n")
		for _, r := range refs {
			b.WriteString(fmt.Sprintf("• %s: %s", r.Label, st.Bold.Render(r.Value)) + "\n")
			b.WriteString(st.Muted.Render("  source: "+r.Source) + "\n")
		}
	}
	return b.String()
}
