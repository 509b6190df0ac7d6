// Package runs is the results browser: past runs under the results root
// (and --results folders), newest first, with lab, date, hosts, status and
// kind; enter opens a run's compare view, r replays it (the app's replay
// page), o shows its report.md. Rows come from session.ScanRuns, already
// sanitised; report.md is cleaned here before glamour renders it.
package runs

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/list"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/dpulab/dpulab/internal/termtext"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/components/compare"
	"github.com/dpulab/dpulab/tui/components/markdown"
	"github.com/dpulab/dpulab/tui/keymap"
	"github.com/dpulab/dpulab/tui/session"
)

// BackMsg asks the app for the picker.
type BackMsg struct{}

// ReplayMsg asks the app to replay a run's results.
type ReplayMsg struct{ Results *results.Results }

type item struct{ run session.RunInfo }

func (i item) Title() string       { return i.run.Row() }
func (i item) Description() string { return i.run.Dir }
func (i item) FilterValue() string { return i.run.Row() }

type view int

const (
	viewList view = iota
	viewCompare
	viewReport
)

// Model is the results browser page.
type Model struct {
	common.Common
	list   list.Model
	view   view
	cmp    *compare.Model
	report viewport.Model
	tco    compare.TCOFunc
}

var _ common.Component = (*Model)(nil)

// New lists runs (newest first, as ScanRuns orders them).
func New(c common.Common, runs []session.RunInfo, tco compare.TCOFunc) *Model {
	items := make([]list.Item, len(runs))
	for i, r := range runs {
		items[i] = item{r}
	}
	l := list.New(items, list.NewDefaultDelegate(), c.Width, c.Height)
	l.Title = "dpulab — past runs"
	l.SetShowHelp(false)
	l.SetStatusBarItemName("run", "runs")
	l.DisableQuitKeybindings()
	m := &Model{Common: c, list: l, tco: tco, report: viewport.New(c.Width, c.Height)}
	m.SetSize(c.Width, c.Height)
	return m
}

// SetSize implements common.Component.
func (m *Model) SetSize(w, h int) {
	m.Common.SetSize(w, h)
	m.list.SetSize(w, h)
	m.report.Width, m.report.Height = w, h
	if m.cmp != nil {
		m.cmp.SetSize(w, h)
	}
}

// Selected is the run highlighted.
func (m *Model) Selected() (session.RunInfo, bool) {
	it, ok := m.list.SelectedItem().(item)
	return it.run, ok
}

// Filtering reports whether the filter input has the keyboard.
func (m *Model) Filtering() bool { return m.list.FilterState() == list.Filtering }

// ShowingCompare and ShowingReport say which view is up (tests).
func (m *Model) ShowingCompare() bool { return m.view == viewCompare }

// ShowingReport reports whether report.md is shown.
func (m *Model) ShowingReport() bool { return m.view == viewReport }

// Init implements tea.Model.
func (m *Model) Init() tea.Cmd { return nil }

// Update moves, opens, replays and shows reports.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	k, isKey := msg.(tea.KeyMsg)
	km := m.KeyMap
	if isKey && m.view != viewList {
		if key.Matches(k, km.Back) {
			m.view = viewList
			return m, nil
		}
		if m.view == viewCompare {
			_, cmd := m.cmp.Update(msg)
			return m, cmd
		}
		var cmd tea.Cmd
		m.report, cmd = m.report.Update(msg)
		return m, cmd
	}
	if isKey && !m.Filtering() {
		switch {
		case key.Matches(k, km.Back):
			return m, func() tea.Msg { return BackMsg{} }
		case key.Matches(k, km.Enter), key.Matches(k, km.Replay), key.Matches(k, km.Report):
			r, ok := m.Selected()
			if !ok {
				return m, nil
			}
			if r.Err != "" {
				return m, common.ErrorCmd(fmt.Errorf("%s cannot be opened: %s", r.Dir, r.Err))
			}
			switch {
			case key.Matches(k, km.Replay):
				res := r.Results
				return m, func() tea.Msg { return ReplayMsg{Results: res} }
			case key.Matches(k, km.Report):
				m.showReport(r)
			default:
				m.cmp = compare.New(m.Common, r.Results, m.tco)
				m.cmp.SetSize(m.Width, m.Height)
				m.view = viewCompare
			}
			return m, nil
		}
	}
	var cmd tea.Cmd
	m.list, cmd = m.list.Update(msg)
	return m, cmd
}

func (m *Model) showReport(r session.RunInfo) {
	b, err := os.ReadFile(filepath.Join(r.Path, results.ReportFile))
	src := termtext.Plain(string(b))
	if err != nil {
		src = "_No report: " + termtext.Line(err.Error()) + " (`dpulab report` writes it again from results.json)._"
	}
	m.report.SetContent(markdown.Render(src, m.Width, m.Styles.NoColor))
	m.report.GotoTop()
	m.view = viewReport
}

// View draws the list, the compare view or the report.
func (m *Model) View() string {
	switch m.view {
	case viewCompare:
		return m.cmp.View()
	case viewReport:
		return m.report.View()
	}
	if len(m.list.Items()) == 0 {
		return m.list.View() + "\n\n  No runs yet: a lab's results show here once it has run."
	}
	return m.list.View()
}

// ShortHelp implements help.KeyMap.
func (m *Model) ShortHelp() []key.Binding {
	km := m.KeyMap
	if m.view != viewList {
		return []key.Binding{km.Up, km.Down, km.Back, km.Quit, km.Help}
	}
	return []key.Binding{km.Up, km.Down, keymap.Relabel(km.Enter, "compare view"), km.Replay, km.Report, km.Back, km.Quit, km.Help}
}

// FullHelp implements help.KeyMap.
func (m *Model) FullHelp() [][]key.Binding {
	return [][]key.Binding{m.ShortHelp(), {m.KeyMap.Filter, m.KeyMap.ForceQuit}}
}
