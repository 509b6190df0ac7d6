// Package headline is booth mode's screen for a passer-by three metres
// away: the main comparison's deltas of TPS, the host CPU spent on
// networking (the sampler's network share: softirq and irq) and p99
// latency, in big digits, each with what the repeated runs say of it
// (results.Delta: "~ no significant difference" within the noise), under
// the comparison's label when its numbers are not a measurement of what the
// lab is about (results.CompareFigures: an emulation, a rehearsal). A
// verdict in big digits only beyond the noise and off a saturated host;
// otherwise the two measured figures, each with its variant.
//
// The numbers, their marks and their words all come from steps/results
// (Delta.Short, Delta.Format, the metric table); this package only lays
// them out, choosing the largest block font that fits (font.go).
package headline

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/dpulab/dpulab/steps/results"
	"github.com/dpulab/dpulab/tui/common"
)

// Metrics are the headline's metrics, in the order shown: throughput, the
// host's CPU spent on networking, tail latency.
var Metrics = []string{results.MetricOps, results.MetricNetworkCPU, results.MetricLatP99}

// Model is the headline screen of one run's results.
type Model struct {
	common.Common
	res *results.Results
}

var _ common.Component = (*Model)(nil)

// New returns the headline of res (nil: no results yet).
func New(c common.Common, res *results.Results) *Model { return &Model{Common: c, res: res} }

// SetResults replaces the results shown.
func (m *Model) SetResults(res *results.Results) { m.res = res }

// Results returns what is shown.
func (m *Model) Results() *results.Results { return m.res }

// Init implements tea.Model.
func (m *Model) Init() tea.Cmd { return nil }

// Update implements tea.Model: the headline answers no keys (a booth
// screen).
func (m *Model) Update(tea.Msg) (tea.Model, tea.Cmd) { return m, nil }

// ShortHelp implements help.KeyMap: none.
func (m *Model) ShortHelp() []key.Binding { return nil }

// FullHelp implements help.KeyMap: none.
func (m *Model) FullHelp() [][]key.Binding { return nil }

// Comparison is the comparison the headline shows: the run's main one, as
// report.html's conclusion picks it (results.Conclude): the last bench with
// two variants or more, its last variant against its first (the
// baseline), at the last sweep point both measured (the most load).
type Comparison struct {
	Bench         *results.Compare
	Variant, Base *results.VariantResult
	// Point and BasePoint are the two sides' sweep points (same Value).
	Point, BasePoint *results.SweepPoint
}

// Main finds r's main comparison; ok is false when r compared nothing.
func Main(r *results.Results) (c Comparison, ok bool) {
	if r == nil {
		return c, false
	}
	for i := len(r.Benches) - 1; i >= 0; i-- {
		b := &r.Benches[i]
		if len(b.Variants) < 2 {
			continue
		}
		base, last := &b.Variants[0], &b.Variants[len(b.Variants)-1]
		for pi := len(last.Points) - 1; pi >= 0; pi-- {
			p := &last.Points[pi]
			for bi := range base.Points {
				if base.Points[bi].Value == p.Value {
					return Comparison{Bench: b, Variant: last, Base: base, Point: p, BasePoint: &base.Points[bi]}, true
				}
			}
		}
	}
	return c, false
}

// Figure is one metric of the headline as the screen says it.
type Figure struct {
	Metric results.MetricDesc
	// Measured is false when either side did not measure the metric (no
	// sampler on the server hosts): the screen says so, no number.
	Measured bool
	Delta    results.Delta
	Verdict  results.Verdict
	// Big is the delta with the significance rule's marks, as the compare
	// table writes it without words (Delta.Short: "+31.2%", "~ +3.1%",
	// "+12.0% ?"): what the big digits draw.
	Big string
	// Words is the delta as it reads without colour (Delta.Format:
	// "+31.2% better, p=0.003", "~ no significant difference: +3.1%,
	// p=0.410").
	Words string
	// Values is the two means with their spread over the runs, baseline
	// first, as the compare table writes them ("200k±4.0k → 278k±3.0k
	// ops/s").
	Values string
	// NoVerdict, when set, says why the headline states no verdict on
	// this figure (the difference is within the noise or untested, or
	// the host was saturated): the screen shows the measured figures,
	// each labelled with its variant (Sides), not a delta in big digits.
	NoVerdict string
	// Sides are the two measured figures, baseline first, each with its
	// variant's label ("host does it all: 200k±4.0k ops/s").
	Sides []string
}

// Figures are the headline metrics of c, in Metrics' order; a metric the
// table does not know is left out. A verdict (a delta in big digits,
// coloured better or worse) is stated only where the difference is beyond
// the run-to-run noise (Delta.Verdict) and no run of the two sides was on
// a saturated host (the runs' ClientBound, as the results recorded it);
// otherwise the figure says why not and shows the two measured figures.
func Figures(c Comparison) []Figure {
	var out []Figure
	saturated := saturation(c)
	for _, name := range Metrics {
		d, ok := results.LookupMetric(name)
		if !ok {
			continue
		}
		f := Figure{Metric: d}
		delta, ok := results.DeltaOf(name, c.Point.Stats, c.BasePoint.Stats)
		if ok {
			v, _ := c.Point.Stats.Metric(name)
			b, _ := c.BasePoint.Stats.Metric(name)
			f.Measured, f.Delta, f.Verdict = true, delta, delta.Verdict(name)
			f.Big = bigOf(delta.Short(name))
			f.Words = delta.Format(name)
			f.Values = spread(d, b) + " → " + spread(d, v) + results.UnitSuffix(d.Unit)
			switch {
			case saturated != "":
				// Why is said once, under the header (View).
				f.NoVerdict = "no verdict: saturated host"
			case f.Verdict != results.Improved && f.Verdict != results.Worsened:
				// Delta.Format's words say why ("~ no significant
				// difference", "not tested against the noise").
				f.NoVerdict = f.Words
			}
			if f.NoVerdict != "" {
				f.Big = ""
				f.Sides = []string{c.Base.Label + ": " + spread(d, b) + results.UnitSuffix(d.Unit),
					c.Variant.Label + ": " + spread(d, v) + results.UnitSuffix(d.Unit)}
			}
		}
		out = append(out, f)
	}
	return out
}

// saturation says why no verdict can be drawn from c's two sides when a
// run of either was on a saturated host, as the run recorded it
// (RunResult.ClientBound; SharedClientHosts tells a host that also served
// from a client host alone), or "".
func saturation(c Comparison) string {
	s1 := results.Saturation(c.Bench, c.Base, c.BasePoint)
	s2 := results.Saturation(c.Bench, c.Variant, c.Point)
	switch {
	case s1 == results.WarnSaturated || s2 == results.WarnSaturated:
		return "No verdict: the load generator and the servers shared one saturated host, so these figures are that host's limits, not the servers'."
	case s1 != "" || s2 != "":
		return "No verdict: a client host was saturated (client-bound), so the load generator, not only the server, limited these figures."
	}
	return ""
}

// spread is a mean and, over two runs or more, its standard deviation.
func spread(d results.MetricDesc, m results.MeanStd) string {
	if m.N < 2 {
		return d.Human(m.Mean)
	}
	return d.Human(m.Mean) + "±" + d.Human(m.Stddev)
}

// bigOf keeps of a Short delta what the block font draws: the number and
// its marks ("~ +3.1%", "+12.0% ?"), not the words ("better", "same"),
// which the line under the digits says.
func bigOf(short string) string {
	var keep []string
	for _, f := range strings.Fields(short) {
		if supported(f) {
			keep = append(keep, f)
		}
	}
	return strings.Join(keep, " ")
}

// View draws the headline in Width×Height: the largest layout and font
// that fit, else plain text.
func (m *Model) View() string {
	w, h := max(m.Width, 20), max(m.Height, 5)
	c, ok := Main(m.res)
	if !ok {
		return common.Fit(m.nothing(w), w, h)
	}
	head := m.header(c, w)
	figs := Figures(c)
	room := h - len(head) - 1
	body, _ := plainLayout(m, figs, w)
	var foot []string
	for _, l := range layouts {
		if b, ok := l.draw(m, figs, w, room); ok {
			body = b
			// The other variants' lines, when they fit beside the
			// largest digits that fit without them.
			if o := m.others(c, w); len(o) > 0 && fits(b, w, room-len(o)-1) {
				foot = o
			}
			break
		}
	}
	// The figures in the middle of the room under the header.
	n := strings.Count(body, "\n") + 1
	if len(foot) > 0 {
		n += len(foot) + 1
		body += "\n\n" + strings.Join(foot, "\n")
	}
	pad := max((room-n)/2, 0)
	return common.Fit(strings.Join(head, "\n")+"\n\n"+strings.Repeat("\n", pad)+body, w, h)
}

// others are the lines of the variants between the baseline and the one
// in big digits (the whitepaper's partial offload between its standard NIC
// and its full offload): each headline delta in the compare table's short
// form, then the legend of its marks.
func (m *Model) others(c Comparison, w int) []string {
	st := m.Styles
	var ls []string
	saturated := saturation(c)
	for vi := 1; vi < len(c.Bench.Variants)-1; vi++ {
		v := &c.Bench.Variants[vi]
		var p *results.SweepPoint
		for pi := range v.Points {
			if v.Points[pi].Value == c.Point.Value {
				p = &v.Points[pi]
			}
		}
		if p == nil {
			continue
		}
		var parts []string
		for _, name := range Metrics {
			d, ok := results.DeltaOf(name, p.Stats, c.BasePoint.Stats)
			desc, known := results.LookupMetric(name)
			if !ok || !known {
				continue
			}
			if saturated != "" {
				// No verdict here either: the figure itself.
				v, _ := p.Stats.Metric(name)
				parts = append(parts, desc.Label+" "+spread(desc, v)+results.UnitSuffix(desc.Unit))
				continue
			}
			parts = append(parts, desc.Label+" "+d.Short(name))
		}
		if len(parts) > 0 {
			ls = append(ls, wrap(st.Bold, v.Label+" against "+c.Base.Label+": "+strings.Join(parts, " · "), w)...)
		}
	}
	if len(ls) > 0 && saturated == "" {
		ls = append(ls, wrap(st.Muted, results.Legend, w)...)
	}
	return ls
}

// nothing is the screen of results that compare nothing: the report's
// conclusion says why.
func (m *Model) nothing(w int) string {
	st := m.Styles
	if m.res == nil {
		return st.Muted.Render("No results yet.")
	}
	var ls []string
	if k := results.RunKind(m.res); k != "" {
		ls = append(ls, wrap(st.Banner, k, w)...)
	}
	ls = append(ls, wrap(st.Bold, results.Conclude(m.res).Text, w)...)
	return strings.Join(ls, "\n")
}

// header is the title, what is compared with what, and the run's label.
func (m *Model) header(c Comparison, w int) []string {
	st := m.Styles
	title := c.Bench.Title
	if title == "" {
		title = c.Bench.Step
	}
	ls := wrap(st.Title, title, w)
	what := fmt.Sprintf("%s against %s (baseline)", c.Variant.Label, c.Base.Label)
	if c.Bench.Sweep != "" && c.Point.Value != "" {
		what += fmt.Sprintf(" at %s=%s", c.Bench.Sweep, c.Point.Value)
	}
	if n, nb := runsOf(c.Point), runsOf(c.BasePoint); n == nb {
		what += fmt.Sprintf(", %d runs each", n)
	} else {
		what += fmt.Sprintf(", %d and %d runs", n, nb)
	}
	ls = append(ls, wrap(st.Bold, what, w)...)
	if k := results.CompareFigures(m.res, c.Bench).Long(); k != "" {
		// The label of what this comparison's figures are (the one
		// label source): a passer-by must not take an emulation for a
		// DPU measurement, nor a real comparison for an emulation.
		ls = append(ls, wrap(st.Banner, k, w)...)
	}
	if s := saturation(c); s != "" {
		ls = append(ls, wrap(st.Worse, s, w)...)
	}
	return ls
}

func runsOf(p *results.SweepPoint) int {
	if n := len(p.Runs); n > 0 {
		return n
	}
	return p.Stats.OpsPerSec.N
}

// wrap renders s in style, wrapped to w columns, one string per line.
func wrap(style lipgloss.Style, s string, w int) []string {
	// The style's padding (the banner's) counts against the width.
	inner := max(w-style.GetHorizontalFrameSize(), 10)
	var out []string
	for _, l := range common.WrapWords(s, inner) {
		out = append(out, style.Render(l))
	}
	return out
}

// styleOf colours a figure by its verdict; the words say it without colour.
func (m *Model) styleOf(f Figure) lipgloss.Style {
	st := m.Styles
	switch {
	case !f.Measured:
		return st.Muted
	case f.NoVerdict != "":
		return st.Bold
	case f.Verdict == results.Improved:
		return st.Better.Bold(true)
	case f.Verdict == results.Worsened:
		return st.Worse.Bold(true)
	}
	return st.Muted.Bold(true)
}
