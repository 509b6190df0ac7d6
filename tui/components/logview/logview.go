// Package logview is the lab screen's live output pane: host-prefixed lines
// in a scrollable viewport that follows the tail until the person scrolls up,
// and follows again once they scroll back to the bottom (or press G/end).
package logview

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/dpulab/dpulab/internal/termtext"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/tui/common"
)

// MaxLines bounds the memory the pane holds; older lines scroll away.
const MaxLines = 2000

// Model is the output pane.
type Model struct {
	common.Common
	vp     viewport.Model
	lines  []string
	follow bool
}

var _ common.Component = (*Model)(nil)

// New returns an empty output pane that follows the tail.
func New(c common.Common) *Model {
	m := &Model{Common: c, vp: viewport.New(c.Width, c.Height), follow: true}
	m.vp.KeyMap = viewport.KeyMap{
		PageDown:     m.KeyMap.PageDn,
		PageUp:       m.KeyMap.PageUp,
		Up:           m.KeyMap.Up,
		Down:         m.KeyMap.Down,
		HalfPageUp:   c.KeyMap.HalfPageUp,
		HalfPageDown: c.KeyMap.HalfPageDn,
	}
	return m
}

// SetSize implements common.Component.
func (m *Model) SetSize(w, h int) {
	m.Common.SetSize(w, h)
	m.vp.Width = max(w, 1)
	m.vp.Height = max(h, 1)
	m.refresh()
}

// Following reports whether the pane sticks to the newest line.
func (m *Model) Following() bool { return m.follow }

// Lines returns the lines held (plain text, for tests and copy).
func (m *Model) Lines() []string { return m.lines }

// Clear empties the pane (a new step starts) and follows the tail again.
func (m *Model) Clear() {
	m.lines = m.lines[:0]
	m.follow = true
	m.refresh()
}

// AppendLines adds output lines, each prefixed with its host (see format).
func (m *Model) AppendLines(ls []runner.Line) {
	for _, l := range ls {
		m.lines = append(m.lines, m.format(l)...)
	}
	m.trimAndRefresh()
}

// AppendText adds a line that came from dpulab itself (a note, an error).
func (m *Model) AppendText(s string) {
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		m.lines = append(m.lines, m.Styles.Muted.Render("» "+l))
	}
	m.trimAndRefresh()
}

func (m *Model) trimAndRefresh() {
	if over := len(m.lines) - MaxLines; over > 0 {
		m.lines = append(m.lines[:0], m.lines[over:]...)
	}
	m.refresh()
}

// format draws one output line, prefixed with its host. The text
// keeps the safe SGR colours of termtext.SGR (none with NO_COLOR); anything
// else a remote command prints to move the cursor, clear the screen or talk
// to the terminal is dropped here too, whoever the caller. A line holding
// carriage returns (a progress bar's redraws) becomes one line per redraw.
func (m *Model) format(l runner.Line) []string {
	host := termtext.Line(l.Host)
	if host == "" {
		host = "local"
	}
	clean := termtext.SGR
	if m.Styles.NoColor {
		clean = termtext.Plain
	}
	text := clean(strings.TrimRight(l.Text, "\r\n"))
	prefix := m.Styles.OutHost.Render(host + " │ ")
	out := make([]string, 0, 1)
	for _, t := range strings.Split(text, "\n") {
		if strings.IndexByte(t, 0x1b) >= 0 {
			// The command's colours end with its line, never bleed into
			// the next one or into the rest of the screen.
			t += ansi.ResetStyle
		}
		if l.Stream == runner.Stderr {
			t = m.Styles.OutStderr.Render(t)
		}
		out = append(out, prefix+t)
	}
	return out
}

func (m *Model) refresh() {
	m.vp.SetContent(strings.Join(m.lines, "\n"))
	if m.follow {
		m.vp.GotoBottom()
	}
}

// Init implements tea.Model.
func (m *Model) Init() tea.Cmd { return nil }

// Update scrolls; scrolling up stops following, reaching the bottom resumes.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyMsg); ok {
		switch {
		case key.Matches(k, m.KeyMap.Bottom):
			m.follow = true
			m.vp.GotoBottom()
			return m, nil
		case key.Matches(k, m.KeyMap.Top):
			m.follow = false
			m.vp.GotoTop()
			return m, nil
		}
	}
	var cmd tea.Cmd
	m.vp, cmd = m.vp.Update(msg)
	m.follow = m.vp.AtBottom()
	return m, cmd
}

// View draws the pane.
func (m *Model) View() string {
	if len(m.lines) == 0 {
		return m.Styles.Muted.Render("(no output yet — enter runs the step)") + strings.Repeat("\n", max(m.Height-1, 0))
	}
	return m.vp.View()
}

// ShortHelp implements help.KeyMap.
func (m *Model) ShortHelp() []key.Binding {
	return []key.Binding{m.KeyMap.Up, m.KeyMap.Down, m.KeyMap.Bottom}
}

// FullHelp implements help.KeyMap.
func (m *Model) FullHelp() [][]key.Binding {
	return [][]key.Binding{{m.KeyMap.Up, m.KeyMap.Down, m.KeyMap.PageUp, m.KeyMap.PageDn, m.KeyMap.Top, m.KeyMap.Bottom}}
}
