package results

import (
	"bytes"
	"cmp"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/dpulab/dpulab/internal/atomicfile"
	"github.com/dpulab/dpulab/internal/termtext"
	"github.com/dpulab/dpulab/steps/results/svgchart"
)

// ReportHTMLFile is the self-contained page every run writes beside
// report.md.
const ReportHTMLFile = "report.html"

//go:embed html_report.tmpl
var htmlReportSrc string

var htmlReportTmpl = template.Must(template.New("report").Parse(htmlReportSrc))

// RenderHTML is report.html: one self-contained page (inline CSS, charts as
// inline SVG, nothing fetched) that a solutions engineer can send. The run's
// status and a one-line conclusion come first; then the hosts, each step's
// table with deltas, its charts and the published figures of the same
// quantity; the TCO with its inputs; every step's outcome. Every text from
// outside the binary (lab, inventory, hosts, errors) is escaped by
// html/template and stripped of control characters.
func RenderHTML(r *Results) ([]byte, error) {
	d := htmlData(r)
	var b bytes.Buffer
	if err := htmlReportTmpl.Execute(&b, d); err != nil {
		return nil, fmt.Errorf("render %s: %w", ReportHTMLFile, err)
	}
	return b.Bytes(), nil
}

type htmlPage struct {
	Title, Lab, RunID string
	Started, Finished string
	Status            string
	StatusText        string
	// Attempts say how a resumed run's earlier attempts ended.
	Attempts    []string
	StatusClass string
	Kind        string
	// Warnings are the run's warnings (Warnings(r, nil)) but its status,
	// which the status box says in the same words.
	Warnings        []htmlWarning
	Conclusion      string
	ConclusionClass string
	// ConclusionKind tags the conclusion line with what its numbers are
	// (MEASURED, REHEARSAL, EMULATION), so the line cannot be quoted
	// without it.
	ConclusionKind string
	Hosts          []htmlHost
	Variables      []htmlKV
	Benches        []htmlBench
	OtherRefs      []Reference
	HostFigures    []htmlHostFigure
	// HostFiguresNote says what the host figures are when the run is not
	// a measurement of its lab's hardware (software RDMA, an emulation).
	HostFiguresNote string
	TCO             *htmlTCO
	Steps           []htmlStep
	ConclusionNote  string
}

type htmlKV struct{ Key, Value string }

type htmlHostFigure struct{ Step, Host, Tool, Label, Value string }

type htmlHost struct {
	Name, Address, Roles, Labels, Platform string
}

type htmlBench struct {
	Title, Step, Sweep, Client string
	// Warnings are the bench's (Warnings(r, c)), said before its figures.
	Warnings []htmlWarning
	Variants []htmlVariant
	Cols     []string
	Rows     []htmlRow
	// HostSources says where the step's host (ESXi) figures came from.
	HostSources []string
	Charts      []htmlChart
	Refs        []Reference
}

// htmlWarning is a Warning as the page shows it: the same words as
// report.md's and the TUI's.
type htmlWarning struct {
	// ID is the element's id ("simulated"), "" for none.
	ID, Kind, Line string
	Items          []string
}

func htmlWarnings(ws []Warning) []htmlWarning {
	var out []htmlWarning
	for _, w := range ws {
		hw := htmlWarning{Kind: string(w.Kind), Line: clean(w.Line())}
		if w.Kind == WarnSimulated {
			hw.ID = "simulated"
		}
		for _, it := range w.Items {
			hw.Items = append(hw.Items, clean(it.String()))
		}
		out = append(out, hw)
	}
	return out
}

// htmlVariant is a variant as the bench's list names it; Figures says
// what its figures are (Figures.Long), "" for a measurement.
type htmlVariant struct{ Label, Description, Hosts, Settings, Figures string }

type htmlRow struct {
	Variant, Value string
	Runs           int
	Cells          []htmlCell
}

type htmlCell struct{ Value, Delta, Class string }

type htmlChart struct {
	Title string
	// RefNote says what the published figures' markers are, when drawn.
	RefNote string
	SVG     template.HTML
	Err     string
}

type htmlTCO struct {
	Notes   []string
	Inputs  []htmlTCORow
	Outputs []htmlKV
	Formula string
}

type htmlTCORow struct{ Key, Value, Unit, Source string }

type htmlStep struct {
	Title, ID, Kind, Outcome, Class, Took string
}

func htmlData(r *Results) htmlPage {
	title := cmp.Or(r.Title, r.Lab)
	if k := ReportKindTitle(r); k != "" {
		title = k + ": " + title
	}
	d := htmlPage{Title: clean(title), Lab: clean(r.Lab), RunID: clean(r.RunID),
		Status: clean(cmp.Or(string(r.State()), "unknown")), StatusText: clean(r.Describe()), Kind: clean(ReportKind(r)),
	}
	for _, w := range Warnings(r, nil) {
		if w.Kind != WarnStatus {
			d.Warnings = append(d.Warnings, htmlWarnings([]Warning{w})...)
		}
	}
	for i, a := range r.Attempts {
		d.Attempts = append(d.Attempts, clean(fmt.Sprintf("Attempt %d of %d, started %s: %s.", i+1, r.Attempt(), a.Started.UTC().Format("2006-01-02 15:04:05 UTC"), a.Describe())))
	}
	switch r.State() {
	case RunComplete:
		d.StatusClass = "ok"
		// A rehearsal or an emulation that went well is still not a
		// measurement of the lab's subject: no green box for it.
		if !r.Measured() {
			d.StatusClass = "warn"
		}
	case RunFailed, RunInterrupted, RunRunning, RunKilled:
		d.StatusClass = "bad"
	default:
		d.StatusClass = "warn"
	}
	if !r.Started.IsZero() {
		d.Started = r.Started.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	if !r.Finished.IsZero() {
		d.Finished = r.Finished.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	con := Conclude(r)
	d.Conclusion = clean(con.Text)
	d.ConclusionClass = "neutral"
	if anyRun(r) {
		d.ConclusionKind = cmp.Or(conclusionFigures(r).Short(), "MEASURED")
	}
	if con.Compared {
		d.ConclusionClass = verdictClass(con.Verdict)
		if con.Saturated != "" {
			d.ConclusionClass = "saturated"
		}
		d.ConclusionNote = "The main comparison of the run: its last variant against its first, at its last sweep point. ± is the standard error of the difference of the means (in percent of the baseline's); p is Welch's t-test over the runs, and a difference is called better or worse only when p < 0.05."
	}
	for _, h := range r.Hosts {
		hh := htmlHost{Name: clean(h.Name), Address: clean(h.Address), Roles: clean(strings.Join(h.Roles, ", "))}
		var ls []string
		for _, k := range sortedKeys(h.Labels) {
			ls = append(ls, k+"="+h.Labels[k])
		}
		hh.Labels = clean(strings.Join(ls, ", "))
		if h.OS != "" {
			hh.Platform = clean(h.OS + "/" + h.Arch)
		}
		d.Hosts = append(d.Hosts, hh)
	}
	for _, k := range sortedKeys(r.Variables) {
		d.Variables = append(d.Variables, htmlKV{clean(k), clean(r.Variables[k])})
	}
	steps := map[string]bool{}
	for i := range r.Benches {
		steps[r.Benches[i].Step] = true
		d.Benches = append(d.Benches, htmlBenchOf(r, &r.Benches[i]))
	}
	// Each published figure once: beside its step's measurements when it
	// names a step of this run, else here.
	for _, ref := range r.References {
		if ref.Step == "" || !steps[ref.Step] {
			d.OtherRefs = append(d.OtherRefs, cleanRef(ref))
		}
	}
	if f := VariantFigures(r, nil); !f.Measured() && len(r.HostFigures) > 0 {
		d.HostFiguresNote = fmt.Sprintf("%s: these figures, like the benchmarks', are %s.", f.Short(), f.article())
	}
	for _, f := range r.HostFigures {
		d.HostFigures = append(d.HostFigures, htmlHostFigure{clean(f.Step), clean(f.Host), clean(f.Tool), clean(f.Label),
			strconv.FormatFloat(f.Value, 'g', 6, 64) + " " + clean(f.Unit)})
	}
	if r.TCO != nil {
		v := ViewTCO(r.TCO)
		t := &htmlTCO{Formula: clean(v.Formula)}
		for _, n := range v.Notes {
			t.Notes = append(t.Notes, clean(n))
		}
		for _, in := range v.Inputs {
			t.Inputs = append(t.Inputs, htmlTCORow{clean(in.Name), in.Value, clean(in.Unit), clean(in.Source)})
		}
		for _, o := range v.Outputs {
			t.Outputs = append(t.Outputs, htmlKV{clean(o.Name), o.Value})
		}
		d.TCO = t
	}
	for _, s := range r.Steps {
		hs := htmlStep{Title: clean(s.Title), ID: clean(s.ID), Kind: clean(s.Kind), Outcome: s.Status.String(), Class: s.Status.String()}
		if s.Error != "" {
			hs.Outcome += ": " + clean(s.Error)
			if s.Host != "" {
				hs.Outcome += " (on " + clean(s.Host) + ")"
			}
		}
		switch {
		case s.DurationSeconds >= 0.1:
			hs.Took = (time.Duration(s.DurationSeconds*1000) * time.Millisecond).Round(100 * time.Millisecond).String()
		case s.DurationSeconds > 0:
			hs.Took = "<0.1s"
		}
		d.Steps = append(d.Steps, hs)
	}
	return d
}

func htmlBenchOf(r *Results, c *Compare) htmlBench {
	title := cmp.Or(c.Title, c.Step)
	figs := CompareFigures(r, c)
	if k := figs.Title(); k != "" {
		title = k + ": " + title
	}
	b := htmlBench{Title: clean(title), Step: clean(c.Step), Sweep: clean(c.Sweep), Client: clean(c.Client), Warnings: htmlWarnings(Warnings(r, c))}
	for _, l := range r.hostSourcesFor(c.Step) {
		b.HostSources = append(b.HostSources, clean(l))
	}
	for _, ref := range r.References {
		if ref.Step != "" && ref.Step == c.Step {
			b.Refs = append(b.Refs, cleanRef(ref))
		}
	}
	for vi, v := range c.Variants {
		hv := htmlVariant{Label: clean(v.Label), Description: clean(v.Description), Hosts: clean(strings.Join(v.Hosts, ", ")),
			Figures: clean(VariantFigures(r, &c.Variants[vi]).Long())}
		var ss []string
		for _, k := range sortedKeys(v.Settings) {
			ss = append(ss, k+"="+v.Settings[k])
		}
		hv.Settings = clean(strings.Join(ss, ", "))
		b.Variants = append(b.Variants, hv)
	}
	var cols []MetricDesc
	for _, m := range MetricDescs() {
		if m.Read != nil && measured(c, m.Name) {
			cols = append(cols, m)
			b.Cols = append(b.Cols, axisLabel(m))
		}
	}
	for vi, v := range c.Variants {
		for _, p := range v.Points {
			row := htmlRow{Variant: clean(rowLabel(r, c, &c.Variants[vi])), Value: clean(p.Value), Runs: len(p.Runs)}
			for _, m := range cols {
				ms, ok := p.Stats.Metric(m.Name)
				if !ok {
					row.Cells = append(row.Cells, htmlCell{Value: "–"})
					continue
				}
				cell := htmlCell{Value: FormatMeanStd(ms)}
				if base := basePoint(c, p.Value); vi > 0 && base != nil {
					if dl, ok := DeltaAt(c, m.Name, &c.Variants[vi], &p, base); ok {
						cell.Delta = dl.Format(m.Name)
						cell.Class = verdictClass(dl.Verdict(m.Name))
					}
				}
				row.Cells = append(row.Cells, cell)
			}
			b.Rows = append(b.Rows, row)
		}
	}
	for _, rc := range ReportCharts(r, c) {
		hc := htmlChart{Title: rc.Chart.Title}
		if rc.Published > 0 {
			hc.RefNote = "◇ published figures, listed above: not measured here."
			if len(rc.Chart.Refs) == 0 {
				hc.RefNote = "The published figures of this quantity, listed above, are off this chart's scale: its legend names them."
			}
			if !figs.Measured() {
				hc.RefNote += " They are not comparable with this run, which is " + figs.article() + "."
			}
		}
		svg, err := svgchart.SVG(rc.Chart)
		switch {
		case errors.Is(err, svgchart.ErrNoData):
			hc.Err = "not measured in this run"
		case err != nil:
			hc.Err = "could not be drawn: " + clean(err.Error())
		default:
			// svgchart's output: every text in it was escaped by vgsvg
			// (html.EscapeString) and cleaned of control characters here.
			hc.SVG = template.HTML(svg)
		}
		b.Charts = append(b.Charts, hc)
	}
	return b
}

// anyRun reports whether a bench of r has a finished run, so that its
// conclusion is about numbers.
func anyRun(r *Results) bool {
	for _, c := range r.Benches {
		for _, v := range c.Variants {
			for _, p := range v.Points {
				if len(p.Runs) > 0 {
					return true
				}
			}
		}
	}
	return false
}

// verdictClass is the CSS class of a delta: the colour repeats what its
// words say (better, worse, within the noise, not tested), never replaces it.
func verdictClass(v Verdict) string {
	switch v {
	case Improved:
		return "better"
	case Worsened:
		return "worse"
	case Untested:
		return "untested"
	}
	return "neutral"
}

func cleanRef(r Reference) Reference {
	return Reference{Label: clean(r.Label), Value: clean(r.Value), Source: clean(r.Source), Step: clean(r.Step)}
}

// clean is text from outside the binary as the page shows it: escape
// sequences removed (termtext.Plain) and any other control character but
// a newline or tab dropped, since HTML and SVG (XML) have no place for
// them; html/template then escapes what is left.
func clean(s string) string {
	s = termtext.Plain(s)
	return strings.Map(func(r rune) rune {
		if r != '\n' && r != '\t' && (unicode.IsControl(r) || r == '\uFFFE' || r == '\uFFFF') {
			return -1
		}
		return r
	}, s)
}

// WriteHTML (re)writes DIR/report.html from r, atomically.
func WriteHTML(dir string, r *Results) error {
	b, err := RenderHTML(r)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, ReportHTMLFile), b, 0o644)
}
