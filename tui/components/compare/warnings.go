package compare

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/dpulab/dpulab/steps/results"
)

// The compare view says a compare's warnings (results.Warnings: a
// saturated shared host, a client-bound run, noise not measured, an
// earlier attempt's figures...) in report.md's and report.html's words:
// an earlier attempt's in full above every tab, as it relabels every
// figure; the others' titles in one line above every tab, and each in
// full on the table tab, under the table.

// warningsOf are the run's warnings and c's, but the run's status, which
// the TUI's header and status line say.
func (m *Model) warningsOf(c *results.Compare) []results.Warning {
	var out []results.Warning
	for _, w := range results.Warnings(m.res, nil) {
		if w.Kind != results.WarnStatus {
			out = append(out, w)
		}
	}
	return append(out, results.Warnings(m.res, c)...)
}

// warningsHead is what goes above every tab: the earlier attempt's
// warning whole, then the titles of the others, wrapped to the view;
// "" when c has none.
func (m *Model) warningsHead(c *results.Compare) string {
	st := m.Styles
	w := max(m.Width, 20)
	var out, titles []string
	for _, wr := range m.warningsOf(c) {
		if wr.Kind == results.WarnEarlierAttempt {
			out = append(out, st.Error.Width(w).Render(wr.Line()))
			continue
		}
		titles = append(titles, wr.Title)
	}
	if len(titles) > 0 {
		line := "⚠ " + strings.Join(titles, " · ")
		// Where they are said in full, when it fits on the line: a
		// pointer wrapped onto a line of its own reads as a stray
		// fragment under the title (the booth at 80×24).
		if more := " (1 table: what they mean)"; m.tab != TabTable && ansi.StringWidth(line+more) <= w {
			line += more
		}
		out = append(out, st.Error.Width(w).Render(line))
	}
	return strings.Join(out, "\n")
}

// warningsBody is each warning but the earlier attempt's in full, with
// the runs it is about, for the table tab.
func (m *Model) warningsBody(c *results.Compare) string {
	st := m.Styles
	w := max(m.Width, 20)
	var out []string
	for _, wr := range m.warningsOf(c) {
		if wr.Kind == results.WarnEarlierAttempt {
			continue
		}
		out = append(out, st.Error.Width(w).Render("⚠ "+wr.Line()))
		if len(wr.Items) > 0 {
			items := make([]string, len(wr.Items))
			for i, it := range wr.Items {
				items[i] = it.String()
			}
			out = append(out, st.Muted.Width(w).Render("  "+strings.Join(items, "; ")))
		}
	}
	return strings.Join(out, "\n")
}
