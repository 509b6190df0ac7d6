// Package picker is the first page: the labs (embedded and --lab-dir) in a
// filterable list with their duration, roles and whether the inventory
// covers them, and saved progress. quickstart comes first and is selected.
package picker

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/list"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/session"
)

// OpenLabMsg asks the root to open a lab; Restart ignores saved progress.
type OpenLabMsg struct {
	ID      string
	Restart bool
}

// item is one lab in the list.
type item struct{ info session.LabInfo }

func (i item) Title() string {
	if i.info.Err != "" {
		return i.info.Title + "  ✘ cannot open"
	}
	return i.info.Title
}

func (i item) Description() string { return Describe(i.info) }

func (i item) FilterValue() string { return i.info.ID + " " + i.info.Title }

// Describe is a lab's summary: what cannot run with this binary or lacks
// its hardware here (a rehearsal, by the engine's rule), duration, roles
// with inventory coverage, saved progress. The list wraps it.
func Describe(l session.LabInfo) string {
	var parts []string
	// What stops part of the lab on this binary comes first: the list cuts
	// a long description at the window's edge.
	for _, r := range l.CannotRun {
		parts = append(parts, "⚠ cannot run here: "+r)
	}
	if l.NoHardware != "" {
		parts = append(parts, "⚠ "+l.NoHardware)
	}
	if l.Rehearsal != "" {
		// The engine's own rule: its figures will be labelled REHEARSAL.
		parts = append(parts, "⚠ REHEARSAL here, not a measurement of its hardware: "+l.Rehearsal)
	}
	if l.Duration > 0 {
		parts = append(parts, fmt.Sprintf("%d min", int(l.Duration.Minutes()+0.5)))
	}
	if len(l.Roles) > 0 {
		cov := "✔ inventory covers them"
		if l.Local {
			cov = "(all on this machine: no inventory)"
		}
		if len(l.Missing) > 0 {
			cov = "✘ no host for " + strings.Join(l.Missing, ", ")
		}
		parts = append(parts, "roles: "+strings.Join(l.Roles, ", ")+" "+cov)
	}
	switch {
	case l.Err != "":
		parts = append(parts, l.Err)
	case l.StateErr != "":
		parts = append(parts, "saved progress unreadable (R starts over): "+l.StateErr)
	case l.Finished || l.ResumeAt >= l.Steps && l.Steps > 0:
		parts = append(parts, "✔ done · enter to review, R to start over")
	case l.ResumeAt > 0:
		parts = append(parts, fmt.Sprintf("resume at step %d/%d", l.ResumeAt+1, l.Steps))
	case l.Steps > 0:
		parts = append(parts, fmt.Sprintf("%d steps", l.Steps))
	}
	return strings.Join(parts, " · ")
}

// Model is the picker page.
type Model struct {
	common.Common
	list     list.Model
	labs     []session.LabInfo
	delegate *delegate
}

var _ common.Component = (*Model)(nil)

// New builds the picker over labs; quickstart is moved first and selected.
func New(c common.Common, labs []session.LabInfo) *Model {
	ordered := make([]session.LabInfo, 0, len(labs))
	for _, l := range labs {
		if l.ID == "quickstart" {
			ordered = append(ordered, l)
		}
	}
	for _, l := range labs {
		if l.ID != "quickstart" {
			ordered = append(ordered, l)
		}
	}
	items := make([]list.Item, len(ordered))
	for i, l := range ordered {
		items[i] = item{l}
	}
	d := newDelegate()
	l := list.New(items, d, c.Width, c.Height)
	l.Title = "dpulab — pick a lab"
	for _, lab := range labs {
		if lab.Rehearse {
			// Every lab opened from here is a rehearsal (--rehearse).
			l.Title += " · REHEARSAL: no hardware checks"
			break
		}
	}
	l.SetShowHelp(false) // the root footer shows help
	l.SetStatusBarItemName("lab", "labs")
	l.DisableQuitKeybindings()
	m := &Model{Common: c, list: l, labs: ordered, delegate: d}
	m.SetSize(c.Width, c.Height)
	return m
}

// SetSize implements common.Component.
func (m *Model) SetSize(w, h int) {
	m.Common.SetSize(w, h)
	// The items' height follows the width their text wraps to.
	m.delegate.fit(m.list.Items(), w, h)
	m.list.SetDelegate(m.delegate)
	m.list.SetSize(w, h)
}

// Selected returns the highlighted lab.
func (m *Model) Selected() (session.LabInfo, bool) {
	it, ok := m.list.SelectedItem().(item)
	return it.info, ok
}

// Filtering reports whether the filter input has the keyboard.
func (m *Model) Filtering() bool { return m.list.FilterState() == list.Filtering }

// Init implements tea.Model.
func (m *Model) Init() tea.Cmd { return nil }

// Update moves, filters and opens.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyMsg); ok && !m.Filtering() && (key.Matches(k, m.KeyMap.Enter) || key.Matches(k, m.KeyMap.Restart)) {
		if l, ok := m.Selected(); ok {
			if l.Err != "" {
				return m, common.ErrorCmd(fmt.Errorf("lab %s cannot be opened: %s (run `dpulab lint` on it)", l.ID, l.Err))
			}
			msg := OpenLabMsg{ID: l.ID, Restart: key.Matches(k, m.KeyMap.Restart)}
			return m, func() tea.Msg { return msg }
		}
		return m, nil
	}
	var cmd tea.Cmd
	m.list, cmd = m.list.Update(msg)
	return m, cmd
}

// View draws the list.
func (m *Model) View() string { return m.list.View() }

// ShortHelp implements help.KeyMap.
func (m *Model) ShortHelp() []key.Binding {
	return []key.Binding{m.KeyMap.Up, m.KeyMap.Down, m.KeyMap.Enter, m.KeyMap.Restart, m.KeyMap.Runs, m.KeyMap.Filter, m.KeyMap.Quit, m.KeyMap.Help}
}

// FullHelp implements help.KeyMap.
func (m *Model) FullHelp() [][]key.Binding {
	return [][]key.Binding{{m.KeyMap.Up, m.KeyMap.Down, m.KeyMap.Enter, m.KeyMap.Restart, m.KeyMap.Runs}, {m.KeyMap.Filter, m.KeyMap.Back, m.KeyMap.Quit, m.KeyMap.ForceQuit, m.KeyMap.Help}}
}
