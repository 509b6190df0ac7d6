// Package dashboard is the live view of a running bench or compare: big
// current numbers, elapsed/remaining with a progress bar, and four
// asciigraph charts (TPS; latency p50 and p99; server CPU with its network
// share; network Gb/s). Samples go into ring buffers; the charts are drawn
// only when a sample or the size changed, so redraws cost little.
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
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/chart"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/guptarohit/asciigraph"
	"github.com/muesli/termenv"
)

// History is how many seconds each chart keeps.
const History = 600

// Model is the dashboard.
type Model struct {
	common.Common
	tps, p50, p99, cpu, netCPU, gbps *chart.Ring
	series                           string // variant/sweep/run the rings hold
	step                             string
	samples                          int
	progress                         steps.Progress
	bar                              progress.Model
	// charts caches the drawn chart grid; version bumps when data changes.
	charts         string
	version, drawn int
	drawnW, drawnH int
}

var _ common.Component = (*Model)(nil)

// New returns an empty dashboard.
func New(c common.Common) *Model {
	opts := []progress.Option{progress.WithoutPercentage(), progress.WithFillCharacters('█', '░')}
	if c.Styles.NoColor {
		opts = append(opts, progress.WithColorProfile(termenv.Ascii))
	} else {
		opts = append(opts, progress.WithSolidFill(c.Styles.ProgressColor))
	}
	m := &Model{Common: c, bar: progress.New(opts...)}
	m.tps, m.p50, m.p99 = chart.NewRing(History), chart.NewRing(History), chart.NewRing(History)
	m.cpu, m.netCPU, m.gbps = chart.NewRing(History), chart.NewRing(History), chart.NewRing(History)
	m.drawn = -1
	return m
}

// SetSize implements common.Component.
func (m *Model) SetSize(w, h int) { m.Common.SetSize(w, h) }

// Reset clears every series (a new bench starts).
func (m *Model) Reset() {
	for _, r := range []*chart.Ring{m.tps, m.p50, m.p99, m.cpu, m.netCPU, m.gbps} {
		r.Reset()
	}
	m.series, m.samples = "", 0
	m.progress = steps.Progress{}
	m.version++
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

func val(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// AddSample appends one second of a bench. A sample of another variant,
// sweep point or run leaves a gap (NaN) in every chart, so a line never
// joins two different runs while the charts still show them side by side.
func (m *Model) AddSample(s steps.Sample) {
	k := seriesKey(s)
	if k != m.series {
		if m.series != "" {
			for _, r := range []*chart.Ring{m.tps, m.p50, m.p99, m.cpu, m.netCPU, m.gbps} {
				r.Push(math.NaN())
			}
		}
		m.series = k
	}
	m.step = s.Step
	p := s.Point
	m.tps.Push(p.OpsPerSec)
	m.p50.Push(p.LatencyMs.P50)
	m.p99.Push(p.LatencyMs.P99)
	m.cpu.Push(val(p.ServerCPU))
	m.netCPU.Push(val(p.NetworkCPU))
	m.gbps.Push(val(p.NetGbps))
	m.samples++
	m.version++
}

// SetProgress records how far the bench is.
func (m *Model) SetProgress(p steps.Progress) { m.progress = p }

// Progress returns the last progress.
func (m *Model) Progress() steps.Progress { return m.progress }

// Init implements tea.Model.
func (m *Model) Init() tea.Cmd { return nil }

// Update implements tea.Model; the dashboard is fed by the root, not keys.
func (m *Model) Update(tea.Msg) (tea.Model, tea.Cmd) { return m, nil }

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
	if m.step != "" {
		title += ": " + m.step
	}
	head := st.Title.Render(title)
	if m.series != "" {
		head += st.Muted.Render("  " + m.series)
	}
	b.WriteString(ansi.Truncate(head, m.Width, "…") + "\n")

	// Big numbers: the newest second.
	bw := m.Width / 4
	// "100% · net 3.54%": the unit on each number, not after the pair.
	cpu := chart.Human(m.cpu.Last())
	cpuUnit := "%"
	if n := m.netCPU.Last(); !math.IsNaN(n) {
		cpu += "%"
		cpuUnit = fmt.Sprintf("· net %s%%", chart.Human(n))
	}
	b.WriteString(lipgloss.JoinHorizontal(lipgloss.Top,
		m.big("TPS", chart.Human(m.tps.Last()), "ops/s", bw),
		m.big("p99", chart.Human(m.p99.Last()), "ms", bw),
		m.big("CPU", cpu, cpuUnit, bw),
		m.big("net", chart.Human(m.gbps.Last()), "Gb/s", m.Width-3*bw),
	) + "\n")

	// Progress.
	p := m.progress
	info := fmt.Sprintf(" %3.0f%%  elapsed %s  remaining %s", p.Fraction*100, fmtDur(p.Elapsed), fmtDur(p.Remaining))
	lbl := ""
	if p.Label != "" {
		lbl = "  " + p.Label
	}
	m.bar.Width = max(m.Width/3, 10)
	b.WriteString(ansi.Truncate(m.bar.ViewAs(p.Fraction)+info+st.Muted.Render(lbl), m.Width, "…") + "\n")

	// Charts, redrawn only when data or size changed.
	chartsH := m.Height - 5
	if m.drawn != m.version || m.drawnW != m.Width || m.drawnH != chartsH {
		m.charts = m.drawCharts(m.Width, chartsH)
		m.drawn, m.drawnW, m.drawnH = m.version, m.Width, chartsH
	}
	b.WriteString(m.charts)
	return b.String()
}

func (m *Model) drawCharts(w, h int) string {
	cw := w / 2
	top := h / 2
	bottom := h - top
	colors := m.Styles.SeriesColors
	pick := func(i ...int) []asciigraph.AnsiColor {
		if colors == nil {
			return nil
		}
		out := make([]asciigraph.AnsiColor, len(i))
		for k, j := range i {
			out[k] = colors[j%len(colors)]
		}
		return out
	}
	n := func(r *chart.Ring) []float64 { return r.Tail(cw - 12) }
	c1 := chart.Plot(chart.Spec{Series: [][]float64{n(m.tps)}, Width: cw, Height: top, Caption: "TPS (ops/s)", Colors: pick(1), LowerBound: 0})
	c2 := chart.Plot(chart.Spec{Series: [][]float64{n(m.p50), n(m.p99)}, Legends: []string{"p50", "p99"}, Width: w - cw, Height: top, Caption: "latency (ms)", Colors: pick(2, 0), LowerBound: 0})
	c3 := chart.Plot(chart.Spec{Series: [][]float64{n(m.cpu), n(m.netCPU)}, Legends: []string{"server CPU", "network share"}, Width: cw, Height: bottom, Caption: "server CPU (%)", Colors: pick(3, 4), LowerBound: 0})
	c4 := chart.Plot(chart.Spec{Series: [][]float64{n(m.gbps)}, Width: w - cw, Height: bottom, Caption: "network (Gb/s)", Colors: pick(5), LowerBound: 0})
	col := lipgloss.NewStyle().Width(cw).MaxWidth(cw)
	col2 := lipgloss.NewStyle().Width(w - cw).MaxWidth(w - cw)
	row1 := lipgloss.JoinHorizontal(lipgloss.Top, col.Render(c1), col2.Render(c2))
	row2 := lipgloss.JoinHorizontal(lipgloss.Top, col.Render(c3), col2.Render(c4))
	return row1 + "\n" + row2
}

// ShortHelp implements help.KeyMap.
func (m *Model) ShortHelp() []key.Binding { return nil }

// FullHelp implements help.KeyMap.
func (m *Model) FullHelp() [][]key.Binding { return nil }
