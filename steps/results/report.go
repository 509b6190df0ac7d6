package results

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dpulab/dpulab/internal/atomicfile"
	"github.com/dpulab/dpulab/internal/termtext"
	"github.com/dpulab/dpulab/labs/tco"
	"github.com/guptarohit/asciigraph"
)

// Names of the files in a results folder.
const (
	ResultsFile = "results.json"
	SamplesFile = "samples.csv"
	ReportFile  = "report.md"
)

// LoadResults reads DIR/results.json, refusing versions newer than ours.
func LoadResults(dir string) (*Results, error) {
	p := filepath.Join(dir, ResultsFile)
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("read results: %w (is %s a results folder?)", err, dir)
	}
	var r Results
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("results file %s is not valid JSON: %w", p, err)
	}
	if r.Version == 0 {
		return nil, fmt.Errorf("results file %s has no version: not written by dpulab", p)
	}
	if r.Version > ResultsVersion {
		return nil, fmt.Errorf("results file %s has version %d, newer than this dpulab's %d: upgrade dpulab", p, r.Version, ResultsVersion)
	}
	return &r, nil
}

// WriteResults writes results.json, samples.csv and report.md into dir,
// each atomically, so a run killed halfway leaves the previous complete set.
func WriteResults(dir string, r *Results) error {
	r.Version = ResultsVersion
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, ResultsFile), append(b, '\n'), 0o644); err != nil {
		return err
	}
	return RenderFiles(dir, r)
}

// RenderFiles (re)writes samples.csv and report.md from r; `dpulab report`
// calls it on a loaded results.json.
func RenderFiles(dir string, r *Results) error {
	csvb, err := SamplesCSV(r)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, SamplesFile), csvb, 0o644); err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, ReportFile), []byte(RenderMarkdown(r)), 0o644)
}

func fmtOpt(p *float64, prec int) string {
	if p == nil {
		return ""
	}
	return strconv.FormatFloat(*p, 'f', prec, 64)
}

// SamplesCSV is every per-second point of every run, one row each.
func SamplesCSV(r *Results) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write([]string{"step", "variant", "sweep", "run", "t_seconds", "ops_per_sec",
		"latency_avg_ms", "latency_p50_ms", "latency_p99_ms", "latency_max_ms", "errors",
		"server_cpu_pct", "network_cpu_pct", "net_gbps", "power_watts"})
	for _, c := range r.Benches {
		for _, v := range c.Variants {
			for _, sp := range v.Points {
				for _, run := range sp.Runs {
					for _, p := range run.Series {
						_ = w.Write([]string{c.Step, v.Label, sp.Value, strconv.Itoa(run.Run),
							strconv.FormatFloat(p.T, 'f', 3, 64),
							strconv.FormatFloat(p.OpsPerSec, 'f', 1, 64),
							strconv.FormatFloat(p.LatencyMs.Avg, 'f', 4, 64),
							strconv.FormatFloat(p.LatencyMs.P50, 'f', 4, 64),
							strconv.FormatFloat(p.LatencyMs.P99, 'f', 4, 64),
							strconv.FormatFloat(p.LatencyMs.Max, 'f', 4, 64),
							strconv.FormatInt(p.Errors, 10),
							fmtOpt(p.ServerCPU, 2), fmtOpt(p.NetworkCPU, 2), fmtOpt(p.NetGbps, 4), fmtOpt(p.PowerWatts, 1)})
					}
				}
			}
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return nil, fmt.Errorf("write samples.csv: %w", err)
	}
	return buf.Bytes(), nil
}

// MetricLabel is a metric's human title ("TPS", "p99 latency ms").
func MetricLabel(metric string) string {
	if m, ok := LookupMetric(metric); ok {
		return m.Label
	}
	return metric
}

// FormatNumber renders a value with a precision that suits its size.
func FormatNumber(v float64) string { return formatPrec(v, precFor(v)) }

// FormatMeanStd renders "mean ± stddev" with both at the mean's precision
// (just the mean for a single run).
func FormatMeanStd(m MeanStd) string {
	p := precFor(m.Mean)
	if m.N < 2 {
		return formatPrec(m.Mean, p)
	}
	return formatPrec(m.Mean, p) + " ± " + formatPrec(m.Stddev, p)
}

func precFor(v float64) int {
	a := math.Abs(v)
	switch {
	case a >= 1000:
		return 0
	case a >= 100:
		return 1
	case a >= 1:
		return 2
	default:
		return 3
	}
}

func formatPrec(v float64, prec int) string {
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if prec == 0 {
		return groupThousands(s)
	}
	return s
}

// FormatDollars writes a dollar amount rounded to the dollar, with thousands
// separators: $8,340,000.
func FormatDollars(v float64) string { return "$" + groupThousands(strconv.FormatFloat(v, 'f', 0, 64)) }

func groupThousands(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// FormatDelta renders a delta with its sign and whether it is better, so it
// reads right without colour: "+31.2% better".
func FormatDelta(metric string, pct float64) string {
	if Neutral(metric) {
		return fmt.Sprintf("%+.1f%%", pct)
	}
	word := "better"
	if (pct < 0) != LowerIsBetter(metric) {
		word = "worse"
	}
	if math.Abs(pct) < 0.05 {
		word = "same"
	}
	return fmt.Sprintf("%+.1f%% %s", pct, word)
}

var ansiRE = regexp.MustCompile("\x1b\\[[0-9;]*m")

// seriesChars tell series apart without colour (markdown has none).
var seriesChars = []string{"", "•", "x", "o", "+", "#"}

// Chart plots series (one per label) with asciigraph, without ANSI colour.
// Empty series are left out (asciigraph panics on them); no data at all
// gives "(no data)".
func Chart(caption string, labels []string, series [][]float64, width, height int) string {
	var data [][]float64
	var legend []string
	var charsets []asciigraph.CharSet
	for i, s := range series {
		if len(s) == 0 {
			continue
		}
		if len(s) == 1 {
			// A single point draws nothing visible; repeat it as a flat line.
			s = []float64{s[0], s[0]}
		}
		c := seriesChars[len(data)%len(seriesChars)]
		cs := asciigraph.DefaultCharSet
		name := "─"
		if c != "" {
			cs = asciigraph.CreateCharSet(c)
			name = c
		}
		data = append(data, s)
		charsets = append(charsets, cs)
		if i < len(labels) {
			legend = append(legend, name+" "+labels[i])
		}
	}
	if len(data) == 0 {
		return caption + ": (no data)\n"
	}
	// Fewer points than columns: hold each point for the same number of
	// columns (a step per second, or per sweep value) instead of letting
	// asciigraph interpolate, which draws ramps that were never measured.
	n := 0
	for _, s := range data {
		n = max(n, len(s))
	}
	if k := width / n; k > 1 {
		for i, s := range data {
			wide := make([]float64, 0, len(s)*k)
			for _, v := range s {
				for range k {
					wide = append(wide, v)
				}
			}
			data[i] = wide
		}
		width = n * k
	}
	out := asciigraph.PlotMany(data, asciigraph.Height(height), asciigraph.Width(width),
		asciigraph.SeriesChars(charsets...), asciigraph.Caption(caption))
	out = ansiRE.ReplaceAllString(out, "")
	if len(legend) > 0 {
		out += "\n   " + strings.Join(legend, "   ")
	}
	return out + "\n"
}

// RenderMarkdown is report.md: what ran where, a table per bench or compare
// with mean ± stddev and deltas against the first variant, ASCII charts, the
// TCO estimate and the reference figures with their sources.
func RenderMarkdown(r *Results) string {
	var b strings.Builder
	title := r.Title
	if title == "" {
		title = r.Lab
	}
	fmt.Fprintf(&b, "# %s — results\n\n", title)
	if r.Status != RunComplete {
		// Said first, so nobody reads the tables below as a finished run.
		fmt.Fprintf(&b, "> **Run status: %s**\n\n", r.Describe())
	}
	fmt.Fprintf(&b, "- lab: `%s`, run `%s`, status: %s\n", r.Lab, r.RunID, cmp.Or(string(r.Status), "unknown"))
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
		renderCompare(&b, &r.Benches[i])
		var refs []Reference
		for _, ref := range r.References {
			if ref.Step == r.Benches[i].Step {
				refs = append(refs, ref)
			}
		}
		if len(refs) > 0 {
			b.WriteString("Published figures for comparison (not measured here):\n\n")
			for _, ref := range refs {
				fmt.Fprintf(&b, "- %s: %s (source: %s)\n", ref.Label, ref.Value, ref.Source)
			}
			b.WriteString("\n")
		}
	}
	if r.TCO != nil {
		renderTCO(&b, r.TCO)
	}
	if len(r.Steps) > 0 {
		renderSteps(&b, r.Steps)
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
	title := c.Title
	if title == "" {
		title = c.Step
	}
	fmt.Fprintf(b, "## %s (`%s`)\n\n", title, c.Step)
	if len(c.Variants) == 0 {
		b.WriteString("No run finished.\n\n")
		return
	}
	for _, v := range c.Variants {
		fmt.Fprintf(b, "- **%s**", v.Label)
		if v.Description != "" {
			fmt.Fprintf(b, ": %s", v.Description)
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
	for _, m := range Metrics {
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
	for _, v := range c.Variants {
		for _, p := range v.Points {
			fmt.Fprintf(b, "| %s |", mdCell(v.Label))
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
				if d, ok := p.DeltaPct[m]; ok {
					cell += " (" + FormatDelta(m, d) + ")"
				}
				fmt.Fprintf(b, " %s |", cell)
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("\nDeltas are against the first variant at the same point; mean ± sample standard deviation over the runs.\n")
	if c.Client != "" && measured(c, MetricServerCPU) {
		for _, v := range c.Variants {
			if slices.Contains(v.Hosts, c.Client) {
				fmt.Fprintf(b, "Server CPU is measured on the server hosts; %s also runs the load generator, so its CPU figures include the load generator's work.\n", c.Client)
				break
			}
		}
	}
	b.WriteString("\n")
	var failed []string
	for _, v := range c.Variants {
		for _, p := range v.Points {
			for _, r := range p.Runs {
				if r.Err != "" {
					failed = append(failed, fmt.Sprintf("%s %s run %d: %s", v.Label, p.Value, r.Run, r.Err))
				}
			}
		}
	}
	if len(failed) > 0 {
		b.WriteString("Runs that ended early (their partial numbers are kept):\n\n")
		for _, f := range failed {
			fmt.Fprintf(b, "- %s\n", f)
		}
		b.WriteString("\n")
	}
	labels := make([]string, len(c.Variants))
	for i, v := range c.Variants {
		labels[i] = v.Label
	}
	if c.Sweep != "" && maxPoints(c) > 1 {
		var series [][]float64
		for _, v := range c.Variants {
			var s []float64
			for _, p := range v.Points {
				s = append(s, p.Stats.OpsPerSec.Mean)
			}
			series = append(series, s)
		}
		b.WriteString("```\n" + Chart("TPS against "+c.Sweep+" ("+sweepValues(c)+")", labels, series, 60, 12) + "```\n\n")
	}
	// TPS and p99 over time, first run of the last sweep point per variant.
	for _, m := range []struct {
		name string
		get  func(Point) float64
	}{{"TPS per second", func(p Point) float64 { return p.OpsPerSec }}, {"p99 latency ms per second", func(p Point) float64 { return p.LatencyMs.P99 }}} {
		var series [][]float64
		for _, v := range c.Variants {
			var s []float64
			if n := len(v.Points); n > 0 && len(v.Points[n-1].Runs) > 0 {
				for _, p := range v.Points[n-1].Runs[0].Series {
					s = append(s, m.get(p))
				}
			}
			series = append(series, s)
		}
		b.WriteString("```\n" + Chart(m.name+" (run 1)", labels, series, 60, 10) + "```\n\n")
	}
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

func renderTCO(b *strings.Builder, t *tco.Estimate) {
	b.WriteString("## TCO estimate\n\n| input | value |\n|---|---|\n")
	for _, k := range sortedKeys(t.Inputs) {
		fmt.Fprintf(b, "| %s | %s |\n", k, FormatNumber(t.Inputs[k]))
	}
	b.WriteString("\n| output | value |\n|---|---|\n")
	outs := sortedKeys(t.Outputs)
	sort.SliceStable(outs, func(i, j int) bool { return outs[i] == tco.ServersSaved })
	for _, k := range outs {
		v := t.Outputs[k]
		s := FormatNumber(v)
		if strings.HasSuffix(k, "usd") || strings.HasSuffix(k, "per_year") {
			s = FormatDollars(v)
		}
		fmt.Fprintf(b, "| %s | %s |\n", k, s)
	}
	fmt.Fprintf(b, "\n```\n%s\n```\n\n", t.Formula)
}
