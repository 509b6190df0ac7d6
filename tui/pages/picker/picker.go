// Package picker is the first page: the labs (embedded and --lab-dir) in a
// filterable list with their duration, roles and whether the inventory
// covers them, and saved progress. quickstart comes first and is selected.
package picker

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/list"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/keymap"
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

// Describe is a lab's summary for the list, terse as k9s's and lazygit's
// lists are: a first line with what stops or changes the lab here, in a
// few words (session.Warning.Short; the details key shows it whole, and
// any others), then duration, roles with inventory coverage and saved
// progress. The list wraps each line.
func Describe(l session.LabInfo) string {
	var out []string
	if ws := l.Warnings(); len(ws) > 0 {
		// What stops part of the lab here comes first.
		w := "⚠ " + ws[0].Short
		if len(ws) > 1 {
			w += fmt.Sprintf(" (+%d more: i)", len(ws)-1)
		}
		out = append(out, w)
	}
	return strings.Join(append(out, strings.Join(facts(l), " · ")), "\n")
}

// Details is the whole of what the picker knows of a lab, for its details
// view: title, id, summary, each warning whole, duration, roles and
// progress. One paragraph per line; the view wraps them.
func Details(l session.LabInfo) string {
	out := []string{l.Title, "id: " + l.ID}
	if l.Summary != "" {
		out = append(out, l.Summary)
	}
	for _, w := range l.Warnings() {
		out = append(out, "⚠ "+w.Detail)
	}
	return strings.Join(append(out, facts(l)...), "\n")
}

// facts are a lab's duration, roles with inventory coverage, and saved
// progress.
func facts(l session.LabInfo) []string {
	var parts []string
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
	case l.Steps == 1:
		parts = append(parts, "1 step")
	case l.Steps > 0:
		parts = append(parts, fmt.Sprintf("%d steps", l.Steps))
	}
	return parts
}

// Model is the picker page.
type Model struct {
	common.Common
	list     list.Model
	labs     []session.LabInfo
	delegate *delegate
	// details shows the highlighted lab whole (the Details key), in a
	// viewport that scrolls when it is taller than the screen.
	details bool
	vp      viewport.Model
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
	m := &Model{Common: c, list: l, labs: ordered, delegate: d, vp: viewport.New(c.Width, max(c.Height-2, 1))}
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
	m.vp.Width, m.vp.Height = w, max(h-2, 1)
	if m.details {
		m.fillDetails()
	}
}

// fillDetails puts the highlighted lab's details in the viewport, wrapped
// to its width.
func (m *Model) fillDetails() {
	l, ok := m.Selected()
	if !ok {
		m.details = false
		return
	}
	w := max(m.vp.Width-2, 10)
	var lines []string
	for i, p := range strings.Split(Details(l), "\n") {
		if i > 0 {
			lines = append(lines, "")
		}
		for _, ln := range common.WrapWords(p, w) {
			lines = append(lines, "  "+ln)
		}
	}
	m.vp.SetContent(strings.Join(lines, "\n"))
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
	k, isKey := msg.(tea.KeyMsg)
	if isKey && !m.Filtering() {
		switch {
		case key.Matches(k, m.KeyMap.Details) || m.details && key.Matches(k, m.KeyMap.Back):
			m.details = !m.details
			if m.details {
				m.vp.GotoTop()
				m.fillDetails()
			}
			return m, nil
		case m.details && !key.Matches(k, m.KeyMap.Enter) && !key.Matches(k, m.KeyMap.Restart):
			var cmd tea.Cmd
			m.vp, cmd = m.vp.Update(msg)
			return m, cmd
		}
	}
	if isKey && !m.Filtering() && (key.Matches(k, m.KeyMap.Enter) || key.Matches(k, m.KeyMap.Restart)) {
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

// View draws the list, or the highlighted lab's details.
func (m *Model) View() string {
	if !m.details {
		return m.list.View()
	}
	hint := "  (i or esc: back to the list)"
	if !m.vp.AtBottom() {
		hint += " · ↓ more"
	}
	return "  " + m.Styles.Title.Render("dpulab — lab details") + m.Styles.Muted.Render(hint) + "\n\n" + m.vp.View()
}

// ShowingDetails reports whether the details view is open.
func (m *Model) ShowingDetails() bool { return m.details }

// ShortHelp implements help.KeyMap.
func (m *Model) ShortHelp() []key.Binding {
	if m.details {
		return []key.Binding{m.KeyMap.Up, m.KeyMap.Down, m.KeyMap.Enter, m.KeyMap.Restart, keymap.Relabel(m.KeyMap.Details, "list"), m.KeyMap.Quit, m.KeyMap.Help}
	}
	// The footer drops keys from before q when it is too narrow: start
	// over goes first (a finished lab's line says R), then filter.
	return []key.Binding{m.KeyMap.Up, m.KeyMap.Down, m.KeyMap.Enter, m.KeyMap.Details, m.KeyMap.Runs, m.KeyMap.Filter, m.KeyMap.Restart, m.KeyMap.Quit, m.KeyMap.Help}
}

// FullHelp implements help.KeyMap.
func (m *Model) FullHelp() [][]key.Binding {
	return [][]key.Binding{{m.KeyMap.Up, m.KeyMap.Down, m.KeyMap.Enter, m.KeyMap.Details, m.KeyMap.Restart, m.KeyMap.Runs}, {m.KeyMap.Filter, m.KeyMap.Back, m.KeyMap.Quit, m.KeyMap.ForceQuit, m.KeyMap.Help}}
}
