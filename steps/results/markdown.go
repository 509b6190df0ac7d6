package results

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dpulab/dpulab/internal/termtext"
)

// RenderMarkdown is report.md: what ran where, a table per bench or compare
// with mean ± stddev and deltas against the first variant, ASCII charts, the
// TCO estimate and the reference figures with their sources.
func RenderMarkdown(r *Results) string {
	var b strings.Builder
	title := r.Title
	if title == "" {
		title = r.Lab
	}
	if k := ReportKindTitle(r); k != "" {
		title = k + ": " + title
	}
	fmt.Fprintf(&b, "# %s — results\n\n", title)
	if k := ReportKind(r); k != "" {
		// Said before any number, so no figure below is read as measured
		// on the hardware the lab is about.
		fmt.Fprintf(&b, "> **%s**\n\n", k)
	}
	// The run's warnings (not finished, simulated host figures), before
	// any table, so nobody reads the tables below without them.
	renderWarningsMD(&b, Warnings(r, nil))
	fmt.Fprintf(&b, "- lab: `%s`, run `%s`, status: %s\n", r.Lab, r.RunID, cmp.Or(string(r.State()), "unknown"))
	for i, a := range r.Attempts {
		fmt.Fprintf(&b, "- attempt %d of %d, started %s: %s\n", i+1, r.Attempt(), a.Started.UTC().Format("2006-01-02 15:04:05 UTC"), a.Describe())
	}
	if !r.Started.IsZero() {
		fmt.Fprintf(&b, "- started %s", r.Started.UTC().Format("2006-01-02 15:04:05 UTC"))
		if !r.Finished.IsZero() {
			fmt.Fprintf(&b, ", finished %s", r.Finished.UTC().Format("2006-01-02 15:04:05 UTC"))
		}
		b.WriteString("\n")
	}
	if len(r.Hosts) > 0 {
		b.WriteString("- hosts:")
		for _, h := range r.Hosts {
			fmt.Fprintf(&b, " %s (%s; roles %s", h.Name, h.Address, strings.Join(h.Roles, ","))
			for _, k := range sortedKeys(h.Labels) {
				fmt.Fprintf(&b, "; %s=%s", k, h.Labels[k])
			}
			if h.OS != "" {
				fmt.Fprintf(&b, "; %s/%s", h.OS, h.Arch)
			}
			b.WriteString(")")
		}
		b.WriteString("\n")
	}
	if len(r.Variables) > 0 {
		b.WriteString("- variables:")
		for _, k := range sortedKeys(r.Variables) {
			fmt.Fprintf(&b, " %s=%s", k, r.Variables[k])
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	for i := range r.Benches {
		renderCompareFigures(&b, r, &r.Benches[i], Warnings(r, &r.Benches[i]))
		renderHostSourcesMD(&b, r, r.Benches[i].Step)
		var refs []Reference
		for _, ref := range r.References {
			if ref.Step == r.Benches[i].Step {
				refs = append(refs, ref)
			}
		}
		if len(refs) > 0 {
			if f := CompareFigures(r, &r.Benches[i]); f.Measured() {
				b.WriteString("Published figures for comparison (not measured here):\n\n")
			} else {
				fmt.Fprintf(&b, "Published figures (not measured here; this run is %s, so its deltas above are not comparable with them):\n\n", f.article())
			}
			for _, ref := range refs {
				fmt.Fprintf(&b, "- %s: %s (source: %s)\n", ref.Label, ref.Value, ref.Source)
			}
			b.WriteString("\n")
		}
	}
	if r.TCO != nil {
		if !r.Measured() {
			fmt.Fprintf(&b, "> The TCO estimate below does not come from this run's hardware: this run is %s.\n\n", kindArticle(r))
		}
		renderTCO(&b, r.TCO)
	}
	if len(r.Steps) > 0 {
		renderSteps(&b, r.Steps)
	}
	if len(r.HostFigures) > 0 {
		fmt.Fprintf(&b, "## Measured on these hosts by the lab's tools\n\n")
		if f := VariantFigures(r, nil); !f.Measured() {
			fmt.Fprintf(&b, "> %s: these figures, like the benchmarks', are %s.\n\n", f.Short(), f.article())
		}
		b.WriteString("| step | host | tool | figure | value |\n|---|---|---|---|---|\n")
		for _, f := range r.HostFigures {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s %s |\n", mdCell(f.Step), mdCell(f.Host), mdCell(f.Tool), mdCell(f.Label),
				strconv.FormatFloat(f.Value, 'g', 6, 64), mdCell(f.Unit))
		}
		b.WriteString("\n")
	}
	if len(r.References) > 0 {
		b.WriteString("## Reference figures (published, not measured here)\n\n| figure | value | source |\n|---|---|---|\n")
		for _, ref := range r.References {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", mdCell(ref.Label), mdCell(ref.Value), mdCell(ref.Source))
		}
		b.WriteString("\n")
	}
	// Titles, labels, hosts, variables, errors and references came from lab
	// files, inventories and hosts: a report opened with cat or less must not
	// carry their escape sequences to the reader's terminal.
	return termtext.Plain(b.String())
}

func mdCell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

// renderWarningsMD says each warning as a bold quote, its items listed
// under it: the words every view uses (Warning.Line, WarningItem.String).
func renderWarningsMD(b *strings.Builder, ws []Warning) {
	for _, w := range ws {
		fmt.Fprintf(b, "> **%s**\n", w.Line())
		if len(w.Items) > 0 {
			b.WriteString(">\n")
		}
		for _, it := range w.Items {
			if it.Label != "" {
				fmt.Fprintf(b, "> - **%s**: %s\n", it.Label, it.Text)
			} else {
				fmt.Fprintf(b, "> - %s\n", it.Text)
			}
		}
		b.WriteString("\n")
	}
}

// renderSteps is the table of each step's outcome.
func renderSteps(b *strings.Builder, steps []StepOutcome) {
	b.WriteString("## Steps\n\n| step | kind | outcome | time |\n|---|---|---|---|\n")
	for _, s := range steps {
		out := s.Status.String()
		if s.Error != "" {
			out += ": " + s.Error
			if s.Host != "" {
				out += " (on " + s.Host + ")"
			}
		}
		took := ""
		switch {
		case s.DurationSeconds >= 0.1:
			took = (time.Duration(s.DurationSeconds*1000) * time.Millisecond).Round(100 * time.Millisecond).String()
		case s.DurationSeconds > 0:
			took = "<0.1s"
		}
		out, _, _ = strings.Cut(out, "\n")
		fmt.Fprintf(b, "| %s (`%s`) | %s | %s | %s |\n", mdCell(s.Title), s.ID, s.Kind, mdCell(out), took)
	}
	b.WriteString("\n")
}

func renderCompare(b *strings.Builder, c *Compare) {
	renderCompareFigures(b, nil, c, Warnings(&Results{}, c))
}

// renderCompareFigures is renderCompare under the compare's label
// (CompareFigures of r), which heads the section when set: a section
// quoted alone still says what its figures are; where its variants differ,
// each row and legend says its own. warns are the section's warnings
// (Warnings), said before its figures.
func renderCompareFigures(b *strings.Builder, r *Results, c *Compare, warns []Warning) {
	kind := CompareFigures(r, c).Title()
	title := c.Title
	if title == "" {
		title = c.Step
	}
	if kind != "" {
		title = kind + ": " + title
	}
	fmt.Fprintf(b, "## %s (`%s`)\n\n", title, c.Step)
	renderWarningsMD(b, warns)
	if len(c.Variants) == 0 {
		return
	}
	for _, v := range c.Variants {
		fmt.Fprintf(b, "- **%s**", v.Label)
		if v.Description != "" {
			fmt.Fprintf(b, ": %s", v.Description)
		}
		if v.Emulation != "" {
			fmt.Fprintf(b, " [EMULATION: %s]", v.Emulation)
		}
		if len(v.Hosts) > 0 {
			fmt.Fprintf(b, " (hosts %s)", strings.Join(v.Hosts, ", "))
		}
		for _, k := range sortedKeys(v.Settings) {
			fmt.Fprintf(b, "; %s=%s", k, v.Settings[k])
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	// Columns: only the metrics at least one variant measured.
	var cols []string
	for _, m := range MetricNames() {
		if measured(c, m) {
			cols = append(cols, m)
		}
	}
	b.WriteString("| variant |")
	if c.Sweep != "" {
		fmt.Fprintf(b, " %s |", c.Sweep)
	}
	b.WriteString(" runs |")
	for _, m := range cols {
		fmt.Fprintf(b, " %s |", MetricLabel(m))
	}
	b.WriteString("\n|---|")
	if c.Sweep != "" {
		b.WriteString("---|")
	}
	b.WriteString("---|")
	for range cols {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for vi, v := range c.Variants {
		for _, p := range v.Points {
			fmt.Fprintf(b, "| %s |", mdCell(rowLabel(r, c, &c.Variants[vi])))
			if c.Sweep != "" {
				fmt.Fprintf(b, " %s |", mdCell(p.Value))
			}
			fmt.Fprintf(b, " %d |", len(p.Runs))
			for _, m := range cols {
				ms, ok := p.Stats.Metric(m)
				if !ok {
					b.WriteString(" – |")
					continue
				}
				cell := FormatMeanStd(ms)
				if base := basePoint(c, p.Value); vi > 0 && base != nil {
					if d, ok := DeltaAt(c, m, &c.Variants[vi], &p, base); ok {
						cell += " (" + d.Format(m) + ")"
					}
				}
				fmt.Fprintf(b, " %s |", cell)
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("\nDeltas are against the first variant at the same point; mean ± sample standard deviation over the runs. A delta is called better or worse only when Welch's t-test over the runs finds it beyond their noise (p < 0.05); with one run a side the noise was not measured.\n\n")
	renderClients(b, c)
	renderCharts(b, r, c)
}

// measured reports whether any variant of c has a value for metric.
func measured(c *Compare, metric string) bool {
	for _, v := range c.Variants {
		for _, p := range v.Points {
			if _, ok := p.Stats.Metric(metric); ok {
				return true
			}
		}
	}
	return false
}

func maxPoints(c *Compare) int {
	n := 0
	for _, v := range c.Variants {
		n = max(n, len(v.Points))
	}
	return n
}

func sweepValues(c *Compare) string {
	seen := map[string]bool{}
	var vs []string
	for _, v := range c.Variants {
		for _, p := range v.Points {
			if !seen[p.Value] {
				seen[p.Value] = true
				vs = append(vs, p.Value)
			}
		}
	}
	return strings.Join(vs, ", ")
}

// basePoint is the first variant's point at sweep value v.
func basePoint(c *Compare, v string) *SweepPoint {
	if len(c.Variants) == 0 {
		return nil
	}
	for i := range c.Variants[0].Points {
		if c.Variants[0].Points[i].Value == v {
			return &c.Variants[0].Points[i]
		}
	}
	return nil
}
