// Package dashboard is the live view of a running bench or compare: big
// current numbers, elapsed/remaining with a progress bar, and a grid of
// asciigraph charts, all laid out from the metric table
// (steps/results.MetricDescs): one ring buffer per metric with a Live entry,
// one chart per Live.Chart caption (TPS; latency p50 and p99; server CPU
// with its network share; network Gb/s), one big number per Live.Big. A new
// metric shows here by its table entry alone. Samples go into the rings; the
// charts are drawn only when a sample or the size changed, so redraws cost
// little.
//
// What the figures are comes with them: each Sample and Progress carries
// results.Figures, the one label source, and the title and every chart's
// caption carry its label (EMULATION while an emulated variant runs,
// nothing while a real one does, REPLAY and the saved variant's own in a
// replay). Captions are drawn under their charts here, wrapped rather than
// cut, so the label is read whole at 80 columns.
//
// At scale (many server instances, several client hosts) the charts show
// the merged load and two drill-down views (drill.go) show its parts from
// the Sample's per-host and per-instance seconds: the hosts (a client host
// at benchwire.ClientBoundPct CPU or more is flagged client-bound: the
// client, not the server, limits the second), and the instances, slowest
// (or busiest) first, with those far from the median marked hot. Keys 1,
// 2 and 3 switch views; ↑/↓ scroll, ←/→ change the instances' order.
package dashboard

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/progress"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/dpulab/dpulab/internal/plot"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/steps/results"
	"github.com/dpulab/dpulab/tui/chart"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/keymap"
	"github.com/muesli/termenv"
)

// History is how many seconds each chart keeps.
const History = 600

// Model is the dashboard.
type Model struct {
	common.Common
	// live holds a ring per live metric, in table order; groups are the
	// charts, boxes the big numbers, both indexes into live.
	live   []liveMetric
	groups []group
	boxes  []box
	series string // variant/sweep/run the rings hold
	step   string
	// figures is what the figures shown are, from the newest Sample or
	// Progress (results.Figures, the one label source): the title and
	// every chart's caption carry its label.
	figures  results.Figures
	samples  int
	progress steps.Progress
	bar      progress.Model
	// charts caches the drawn chart grid; version bumps when data changes.
	charts         string
	version, drawn int
	drawnW, drawnH int
	// view is the view shown, drill the per-host and per-instance
	// figures, scroll the first row shown and sortBy the instances' order.
	view   View
	noKeys bool // HideKeys: nobody types at this screen (a booth)
	drill  drill
	scroll int
	sortBy SortBy
}

// liveMetric is one metric's ring; seen says it had a value since Reset.
type liveMetric struct {
	desc results.MetricDesc
	ring *chart.Ring
	seen bool
}

// group is one chart: the live metrics that share its caption.
type group struct {
	caption string
	metrics []int
}

// box is one big number: a metric and its parts shown beside it.
type box struct {
	metric int
	parts  []int
}

var _ common.Component = (*Model)(nil)

// New returns an empty dashboard laid out from the metric table as it is
// now (metrics register before the TUI starts).
func New(c common.Common) *Model {
	opts := []progress.Option{progress.WithoutPercentage(), progress.WithFillCharacters('█', '░')}
	if c.Styles.NoColor {
		opts = append(opts, progress.WithColorProfile(termenv.Ascii))
	} else {
		opts = append(opts, progress.WithSolidFill(c.Styles.ProgressColor))
	}
	m := &Model{Common: c, bar: progress.New(opts...)}
	m.layout(results.MetricDescs())
	m.drawn = -1
	return m
}

// layout makes a ring per live metric, a chart per caption (in the order of
// its first metric) and a big number per Live.Big, a part of a boxed metric
// going into its parent's box.
func (m *Model) layout(descs []results.MetricDesc) {
	byName := map[string]int{}
	byCaption := map[string]int{}
	for _, d := range descs {
		if d.Live == nil || d.Sample == nil {
			continue
		}
		i := len(m.live)
		m.live = append(m.live, liveMetric{desc: d, ring: chart.NewRing(History)})
		byName[d.Name] = i
		g, ok := byCaption[d.Live.Chart]
		if !ok {
			g = len(m.groups)
			byCaption[d.Live.Chart] = g
			m.groups = append(m.groups, group{caption: d.Live.Chart})
		}
		m.groups[g].metrics = append(m.groups[g].metrics, i)
	}
	boxOf := map[int]int{}
	for i, l := range m.live {
		if l.desc.Live.Big == "" {
			continue
		}
		if p, ok := byName[l.desc.Parent]; ok {
			if b, ok := boxOf[p]; ok {
				m.boxes[b].parts = append(m.boxes[b].parts, i)
				continue
			}
		}
		boxOf[i] = len(m.boxes)
		m.boxes = append(m.boxes, box{metric: i})
	}
}

// SetSize implements common.Component.
func (m *Model) SetSize(w, h int) { m.Common.SetSize(w, h) }

// Reset clears every series (a new bench starts).
func (m *Model) Reset() {
	for i := range m.live {
		m.live[i].ring.Reset()
		m.live[i].seen = false
	}
	m.series, m.samples = "", 0
	m.progress = steps.Progress{}
	m.figures = results.Figures{}
	m.drill.reset()
	m.version++
}

// Series returns the live series of the metric named name, oldest first
// (NaN where a second did not measure it), and whether it is on the
// dashboard.
func (m *Model) Series(name string) ([]float64, bool) {
	for _, l := range m.live {
		if l.desc.Name == name {
			return l.ring.Tail(0), true
		}
	}
	return nil, false
}

// Samples is how many samples the dashboard received since Reset.
func (m *Model) Samples() int { return m.samples }

// SeriesLabel names what the charts show now ("tcp · instances 4 · run 1").
func (m *Model) SeriesLabel() string { return m.series }

func seriesKey(s steps.Sample) string {
	parts := []string{}
	if s.Variant != "" {
		parts = append(parts, s.Variant)
	}
	if s.Sweep != "" {
		parts = append(parts, s.Sweep)
	}
	parts = append(parts, fmt.Sprintf("run %d", s.Run))
	return strings.Join(parts, " · ")
}

// AddSample appends one second of a bench. A sample of another variant,
// sweep point or run leaves a gap (NaN) in every chart, so a line never
// joins two different runs while the charts still show them side by side.
func (m *Model) AddSample(s steps.Sample) {
	k := seriesKey(s)
	if k != m.series {
		if m.series != "" {
			for _, l := range m.live {
				l.ring.Push(math.NaN())
			}
		}
		m.series = k
		// Hosts and instances of another run are not this one's.
		m.drill.reset()
	}
	m.drill.add(s)
	m.step = s.Step
	if m.figures != s.Figures {
		m.figures = s.Figures
		m.version++ // the captions change
	}
	for i := range m.live {
		l := &m.live[i]
		v, ok := l.desc.Sample(&s.Point)
		if !ok {
			v = math.NaN()
		}
		l.seen = l.seen || ok
		l.ring.Push(v)
	}
	m.samples++
	m.version++
}

// Figures is what the figures shown are (the newest event's): the label
// of the title and of every chart.
func (m *Model) Figures() results.Figures { return m.figures }

// SetProgress records how far the bench is, and what its figures are.
func (m *Model) SetProgress(p steps.Progress) {
	m.progress = p
	if m.figures != p.Figures {
		m.figures = p.Figures
		m.version++
	}
}

// Progress returns the last progress.
func (m *Model) Progress() steps.Progress { return m.progress }

// Init implements tea.Model.
func (m *Model) Init() tea.Cmd { return nil }

// Update implements tea.Model: samples come from the root (AddSample);
// keys switch views (1 charts, 2 hosts, 3 instances), scroll (↑/↓, page
// up/down, home/end) and order the instances (←/→).
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return m, nil
	}
	km := m.KeyMap
	switch {
	case key.Matches(k, km.Tab1):
		m.SetView(ViewCharts)
	case key.Matches(k, km.Tab2):
		m.SetView(ViewHosts)
	case key.Matches(k, km.Tab3):
		m.SetView(ViewInstances)
	case key.Matches(k, km.Up):
		m.scroll = max(m.scroll-1, 0)
	case key.Matches(k, km.Down):
		m.scroll++
	case key.Matches(k, km.PageUp):
		m.scroll = max(m.scroll-m.rows(), 0)
	case key.Matches(k, km.PageDn):
		m.scroll += m.rows()
	case key.Matches(k, km.Top):
		m.scroll = 0
	case key.Matches(k, km.Bottom):
		m.scroll = len(m.drill.targets) + len(m.drill.clients) + 4
	case key.Matches(k, km.Right) && m.view == ViewInstances:
		m.sortBy = (m.sortBy + 1) % sortCount
		m.drill.sortedAt = -1
		m.scroll = 0
	case key.Matches(k, km.Left) && m.view == ViewInstances:
		m.sortBy = (m.sortBy + sortCount - 1) % sortCount
		m.drill.sortedAt = -1
		m.scroll = 0
	}
	return m, nil
}

// HideKeys leaves the views' keys unsaid: at a booth a visitor's key only
// pauses the loop.
func (m *Model) HideKeys() { m.noKeys = true }

// SetView shows view v from its top.
func (m *Model) SetView(v View) {
	if v != m.view {
		m.view, m.scroll = v, 0
	}
}

// CurrentView is the view shown.
func (m *Model) CurrentView() View { return m.view }

// rows is how many table rows a drill-down view shows.
func (m *Model) rows() int { return max(m.Height-3, 1) }

func fmtDur(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

func (m *Model) big(label, value, unit string, w int) string {
	st := m.Styles
	content := st.BigNumberUnit.Render(label+" ") + st.BigNumber.Render(value) + st.BigNumberUnit.Render(" "+unit)
	return st.BigBox.Width(w - 2).Render(ansi.Truncate(content, w-4, "…"))
}

// View draws the dashboard in exactly Width×Height (or a message when the
// space is too small for charts).
func (m *Model) View() string {
	if m.Width < common.MinWidth || m.Height < 14 {
		return m.Styles.Error.Render("dashboard needs at least 80×24") + fmt.Sprintf(" (now %d×%d): enlarge the window", m.Width, m.Height)
	}
	st := m.Styles
	var b strings.Builder
	title := "Live bench"
	if m.figures.Replay {
		title = "Recorded bench"
	}
	if m.step != "" {
		title += ": " + m.step
	}
	head := st.Title.Render(title)
	if k := m.figures.Title(); k != "" {
		// What the figures are, before any of them, so that no cut
		// at the edge loses it.
		head = st.Error.Render(k) + " " + head
	}
	if m.series != "" {
		head += st.Muted.Render("  " + m.series)
	}
	b.WriteString(ansi.Truncate(head, m.Width, "…") + "\n")
	if m.view != ViewCharts {
		b.WriteString(m.drillView())
		return b.String()
	}

	// Big numbers: the newest second.
	if boxes := m.shownBoxes(); len(boxes) > 0 {
		n := len(boxes)
		bw := m.Width / n
		var row []string
		for i, bx := range boxes {
			w := bw
			if i == n-1 {
				w = m.Width - (n-1)*bw
			}
			row = append(row, m.bigBox(bx, w))
		}
		b.WriteString(lipgloss.JoinHorizontal(lipgloss.Top, row...) + "\n")
	}

	// Progress.
	p := m.progress
	info := fmt.Sprintf(" %3.0f%%  elapsed %s  remaining %s", p.Fraction*100, fmtDur(p.Elapsed), fmtDur(p.Remaining))
	lbl := ""
	if p.Label != "" {
		lbl = "  " + p.Label
	}
	m.bar.Width = max(m.Width/3, 10)
	b.WriteString(ansi.Truncate(m.bar.ViewAs(p.Fraction)+info+st.Muted.Render(lbl), m.Width, "…") + "\n")

	// A line on hosts and instances, when the bench gave per-host or
	// per-instance figures.
	chartsH := m.Height - 5
	if m.drill.has() {
		b.WriteString(ansi.Truncate(m.summary(m.Width), m.Width, "…") + "\n")
		chartsH--
	}
	// Charts, redrawn only when data or size changed.
	if m.drawn != m.version || m.drawnW != m.Width || m.drawnH != chartsH {
		m.charts = m.drawCharts(m.Width, chartsH)
		m.drawn, m.drawnW, m.drawnH = m.version, m.Width, chartsH
	}
	b.WriteString(m.charts)
	return b.String()
}

// bigBox is a metric's newest value with its unit, its parts beside it:
// "CPU 100% · net 3.54%"; in a box too narrow for that (four boxes at 80
// columns), the shorter "CPU 100% net 4%" (whole percents, no dots)
// rather than a number cut to "net…".
func (m *Model) bigBox(bx box, w int) string {
	l := m.live[bx.metric]
	for _, short := range []bool{false, true} {
		v := l.ring.Last()
		value, unit := l.desc.Human(v), l.desc.Unit
		round := short && unit == "%" && !math.IsNaN(v)
		if round {
			value = fmt.Sprintf("%.0f", v)
		}
		var parts []string
		for _, p := range bx.parts {
			d := m.live[p].desc
			if pv := m.live[p].ring.Last(); !math.IsNaN(pv) {
				pvs := d.WithUnit(pv)
				if round && d.Unit == "%" {
					pvs = fmt.Sprintf("%.0f%%", pv)
				}
				parts = append(parts, d.Live.Big+" "+pvs)
			}
		}
		if len(parts) > 0 {
			// The unit on each number, not after the group.
			value += results.UnitSuffix(unit)
			sep := " · "
			if short {
				sep = " "
			}
			unit = strings.TrimPrefix(sep, " ") + strings.Join(parts, sep)
		}
		if !short && ansi.StringWidth(l.desc.Live.Big+" "+value+" "+unit) > w-4 {
			continue
		}
		return m.big(l.desc.Live.Big, value, unit, w)
	}
	return ""
}

// settle is how many seconds a chart (or big number) whose metrics never
// had a value keeps its place: a sampler's first figures come a second or two after the
// bench's, but a host without RAPL or a hypervisor feed should not keep an
// empty chart for the whole run.
const settle = 5

// shownBoxes is the big numbers to draw: all of them at first, then those
// with data.
func (m *Model) shownBoxes() []box {
	if m.samples < settle {
		return m.boxes
	}
	var out []box
	for _, bx := range m.boxes {
		if m.live[bx.metric].seen {
			out = append(out, bx)
		}
	}
	return out
}

// shown is the charts to draw: all of them at first (but those only drawn
// with data), then those with data.
func (m *Model) shown() []group {
	var out []group
	for _, g := range m.groups {
		for _, i := range g.metrics {
			if m.live[i].seen || m.samples < settle && !m.live[i].desc.Live.OnlyWithData {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// drawCharts lays the charts out two to a row, a last odd one across the
// whole width, the rows sharing the height.
func (m *Model) drawCharts(w, h int) string {
	groups := m.shown()
	if len(groups) == 0 {
		return ""
	}
	cw := w / 2
	rows := (len(groups) + 1) / 2
	var out []string
	for r := range rows {
		rh := h*(r+1)/rows - h*r/rows
		pair := groups[2*r : min(2*r+2, len(groups))]
		if len(pair) == 1 {
			out = append(out, lipgloss.NewStyle().Width(w).MaxWidth(w).Render(m.plot(pair[0], w, rh, cw-12)))
			continue
		}
		left := lipgloss.NewStyle().Width(cw).MaxWidth(cw).Render(m.plot(pair[0], cw, rh, cw-12))
		right := lipgloss.NewStyle().Width(w - cw).MaxWidth(w - cw).Render(m.plot(pair[1], w-cw, rh, cw-12))
		out = append(out, lipgloss.JoinHorizontal(lipgloss.Top, left, right))
	}
	return strings.Join(out, "\n")
}

// plot draws one chart of w×h from the newest n seconds of its metrics,
// each in its live colour; a chart of one metric needs no legend. The
// caption, under it, carries the figures' label.
func (m *Model) plot(g group, w, h, n int) string {
	caption := m.caption(g, w)
	spec := plot.Spec{Width: w, Height: max(h-len(caption), 1), Empty: "waiting for data…", LowerBound: 0}
	var colours []lipgloss.Style
	for _, i := range g.metrics {
		l := m.live[i]
		spec.Series = append(spec.Series, l.ring.Tail(n))
		if len(g.metrics) > 1 {
			spec.Legends = append(spec.Legends, l.desc.Live.Legend)
		}
		if cs := m.Styles.LiveColors; len(cs) > 0 {
			colours = append(colours, cs[i%len(cs)])
		}
	}
	return chart.Plot(spec, colours) + "\n" + strings.Join(caption, "\n")
}

// caption is a chart's caption lines, centred in w: what its figures are
// (results.Figures.Short, "EMULATION"), then what the chart shows,
// wrapped between words rather than cut, so the label and the metric are
// both read whole at 80 columns.
func (m *Model) caption(g group, w int) []string {
	label := m.figures.Short()
	text := g.caption
	if label != "" {
		text = label + " · " + text
	}
	lines := strings.Split(ansi.Wrap(text, max(w-1, 10), " "), "\n")
	for i, l := range lines {
		l = strings.TrimRight(l, " ")
		pad := max((w-ansi.StringWidth(l))/2, 0)
		if i == 0 && label != "" && strings.HasPrefix(l, label) {
			l = m.Styles.Error.Render(label) + l[len(label):]
		}
		lines[i] = strings.Repeat(" ", pad) + l
	}
	return lines
}

// drillView is the hosts or instances view below the title: a line
// naming the views and keys, then the table, exactly Height-1 lines.
func (m *Model) drillView() string {
	st := m.Styles
	h := m.Height - 2
	var lines []string
	name := "hosts"
	if m.view == ViewInstances {
		name = fmt.Sprintf("%d instances by %s (←/→ order)", len(m.drill.targets), m.sortBy)
		lines = m.viewInstances(h)
	} else {
		lines = m.viewHosts(h)
	}
	out := make([]string, 0, m.Height-1)
	out = append(out, ansi.Truncate(st.Muted.Render("1 charts · 2 hosts · 3 instances — showing "+name+" · ↑/↓ scroll"), m.Width, "…"))
	for _, l := range lines {
		out = append(out, ansi.Truncate(l, m.Width, "…"))
	}
	for len(out) < m.Height-1 {
		out = append(out, "")
	}
	return strings.Join(out[:m.Height-1], "\n")
}

// ShortHelp implements help.KeyMap: the drill-down keys, once a bench
// gave per-host or per-instance figures.
func (m *Model) ShortHelp() []key.Binding {
	if !m.drill.has() {
		return nil
	}
	km := m.KeyMap
	bs := []key.Binding{keymap.Relabel(km.Tab1, "charts"), keymap.Relabel(km.Tab2, "hosts"), keymap.Relabel(km.Tab3, "instances")}
	if m.view != ViewCharts {
		bs = append(bs, km.Up, km.Down)
	}
	if m.view == ViewInstances {
		bs = append(bs, keymap.Relabel(km.Right, "order"))
	}
	return bs
}

// FullHelp implements help.KeyMap.
func (m *Model) FullHelp() [][]key.Binding {
	if bs := m.ShortHelp(); len(bs) > 0 {
		return [][]key.Binding{bs}
	}
	return nil
}
