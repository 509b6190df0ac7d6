// Package compare is the view of a finished compare: a variants × metrics
// table with deltas against the first variant, per-second charts of the
// variants overlaid, the sweep charts (each metric's mean against the swept
// variable per variant, TPS first: the shape of the whitepaper's figure 3),
// the lab's published reference figures with their source, and a TCO
// estimate with editable inputs. Rows and charts come from the metric table
// (steps/results.MetricDescs): a metric's Read puts it in the table, its
// Plots in the charts.
//
// A step with a capacity search (labs' capacity: key) has the row "TPS at
// latency cap": at each point, the highest rate at which the step's
// objective (p99 ≤ 1 ms unless the lab says otherwise) held, found by
// `dpulab bench --capacity`: probes at fixed rates with latencies counted
// from when each request was due (coordinated omission corrected),
// doubling while they pass, halving while they fail, then bisecting until
// the lowest failing rate is within the search's precision (5% by default)
// of the highest passing one. The capacity lies between the two; report.md
// and report.html give both, the precision and the probe count per point,
// and the chart of the capped TPS against the swept variable beside the
// flat-out TPS (steps/results/capacity.go).
package compare

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/dpulab/dpulab/labs/tco"
	"github.com/dpulab/dpulab/tui/common"
)

// Tab is the compare view's sub-view.
type Tab int

// The tabs, in key order 1..4.
const (
	TabTable Tab = iota
	TabCharts
	TabSweep
	TabTCO
)

var tabNames = [...]string{"1 table", "2 charts", "3 sweep", "4 TCO"}

// TCOFunc computes a TCO from inputs (tco.Compute in the real TUI).
type TCOFunc func(inputs map[string]float64) (*tco.Estimate, error)

// Model is the compare view.
type Model struct {
	common.Common
	res   *results.Results
	bench int
	point int
	tab   Tab
	tco   *tcoForm
}

var _ common.Component = (*Model)(nil)

// New returns a compare view of res (nil shows "no results yet").
func New(c common.Common, res *results.Results, compute TCOFunc) *Model {
	m := &Model{Common: c}
	m.SetResults(res, compute)
	return m
}

// SetResults replaces the results shown; the last bench with the most
// variants is selected, at its last sweep point.
func (m *Model) SetResults(res *results.Results, compute TCOFunc) {
	m.res = res
	m.bench, m.point = 0, 0
	if res != nil {
		best := -1
		for i, b := range res.Benches {
			if len(b.Variants) >= best {
				best = len(b.Variants)
				m.bench = i
			}
		}
		m.point = max(m.points()-1, 0)
	}
	m.tco = newTCOForm(m.Common, res, compute)
}

// Results returns what is shown.
func (m *Model) Results() *results.Results { return m.res }

// Tab returns the active tab.
func (m *Model) Tab() Tab { return m.tab }

// SetTab selects a tab.
func (m *Model) SetTab(t Tab) {
	if t >= TabTable && t <= TabTCO {
		m.tab = t
	}
}

// SetSize implements common.Component.
func (m *Model) SetSize(w, h int) {
	m.Common.SetSize(w, h)
	m.tco.SetSize(w, h)
}

func (m *Model) current() *results.Compare {
	if m.res == nil || m.bench >= len(m.res.Benches) {
		return nil
	}
	return &m.res.Benches[m.bench]
}

func (m *Model) points() int {
	c := m.current()
	if c == nil || len(c.Variants) == 0 {
		return 0
	}
	return len(c.Variants[0].Points)
}

// Init implements tea.Model.
func (m *Model) Init() tea.Cmd { return nil }

// Update switches tabs, benches and sweep points, and edits TCO inputs.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return m, nil
	}
	if m.tab == TabTCO && m.tco.editing {
		return m, m.tco.Update(k)
	}
	km := m.KeyMap
	switch {
	case key.Matches(k, km.Tab1):
		m.tab = TabTable
	case key.Matches(k, km.Tab2):
		m.tab = TabCharts
	case key.Matches(k, km.Tab3):
		m.tab = TabSweep
	case key.Matches(k, km.Tab4):
		m.tab = TabTCO
	case key.Matches(k, km.Right):
		m.tab = (m.tab + 1) % 4
	case key.Matches(k, km.Left):
		m.tab = (m.tab + 3) % 4
	case key.Matches(k, km.NextBench) && m.res != nil && len(m.res.Benches) > 1:
		m.bench = (m.bench + 1) % len(m.res.Benches)
		m.point = max(m.points()-1, 0)
	default:
		if m.tab == TabTCO {
			return m, m.tco.Update(k)
		}
		switch {
		case key.Matches(k, km.Up):
			m.point = max(m.point-1, 0)
		case key.Matches(k, km.Down):
			m.point = min(m.point+1, max(m.points()-1, 0))
		}
	}
	return m, nil
}

// View draws the active tab in Width×Height.
func (m *Model) View() string {
	st := m.Styles
	c := m.current()
	if c == nil || len(c.Variants) == 0 {
		empty := st.Muted.Width(max(m.Width, 20)).Render("No compare results yet: run the lab's bench or compare step, or open a results folder with `dpulab replay DIR`.")
		if c != nil {
			// Why there are none (variants not run here, no run
			// finished), as the reports say it.
			if w := m.warningsBody(c); w != "" {
				empty += "\n\n" + w
			}
		}
		return fit(empty, max(m.Width, 20), max(m.Height, 1))
	}
	var tabs []string
	for i, n := range tabNames {
		// Brackets mark the open tab without colour too (NO_COLOR).
		if Tab(i) == m.tab {
			tabs = append(tabs, st.ChoiceActive.UnsetPadding().Render("["+n+"]"))
		} else {
			tabs = append(tabs, " "+n+" ")
		}
	}
	right := strings.Join(tabs, "")
	if len(m.res.Benches) > 1 {
		right += st.Muted.Render(fmt.Sprintf("  b: bench %d/%d", m.bench+1, len(m.res.Benches)))
	}
	// The title gives way to the tabs when space is short.
	titleW := max(m.Width-ansi.StringWidth(right)-2, 10)
	title := st.Title.Render("Compare: " + orStep(c))
	if k := results.CompareFigures(m.res, c).Title(); k != "" {
		// What every figure below is, before the title gives way.
		title = st.Error.Render(k) + " " + title
	}
	head := ansi.Truncate(title, titleW, "…") + "  " + right
	body := ""
	h := m.Height - 2
	gap := "\n\n"
	if note := m.warningsHead(c); note != "" {
		// The compare's warnings (an earlier attempt's figures, a
		// saturated host...) above every tab, wrapped, never cut.
		gap = "\n" + note + "\n"
		h -= strings.Count(note, "\n") + 1
	}
	switch m.tab {
	case TabTable:
		body = m.tableView(c, h)
	case TabCharts:
		body = m.chartsView(c, h)
	case TabSweep:
		body = m.sweepView(c, h)
	case TabTCO:
		body = m.tco.View()
	}
	return ansi.Truncate(head, m.Width, "…") + gap + fit(body, m.Width, max(h, 1))
}

func orStep(c *results.Compare) string {
	if c.Title != "" {
		return c.Title
	}
	return c.Step
}

// fit cuts s to w columns and h lines, so a tab never breaks the layout.
func fit(s string, w, h int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:max(h, 0)]
	}
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, w, "…")
	}
	return strings.Join(lines, "\n")
}

// pointLabel names sweep point i ("instances = 40"), empty without a sweep.
func pointLabel(c *results.Compare, i int) string {
	if c.Sweep == "" || len(c.Variants[0].Points) <= i {
		return ""
	}
	return fmt.Sprintf("%s = %s", c.Sweep, c.Variants[0].Points[i].Value)
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ShortHelp implements help.KeyMap.
func (m *Model) ShortHelp() []key.Binding {
	if m.tab == TabTCO {
		return m.tco.ShortHelp()
	}
	return []key.Binding{m.KeyMap.Tab1, m.KeyMap.Tab2, m.KeyMap.Tab3, m.KeyMap.Tab4}
}

// FullHelp implements help.KeyMap.
func (m *Model) FullHelp() [][]key.Binding {
	return [][]key.Binding{{m.KeyMap.Tab1, m.KeyMap.Tab2, m.KeyMap.Tab3, m.KeyMap.Tab4, m.KeyMap.Left, m.KeyMap.Right},
		{m.KeyMap.Up, m.KeyMap.Down}}
}
