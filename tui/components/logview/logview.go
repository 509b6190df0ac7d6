// Package logview is the lab screen's live output pane: host-prefixed lines
// in a scrollable viewport that follows the tail until the person scrolls up,
// and follows again once they scroll back to the bottom (or press G/end).
//
// The pane keeps one buffer per step and shows the selected step's: a step's
// output never appears under another step, and output of a step that runs
// while the person reads another one is there when they come back to it.
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

// MaxLines bounds the memory each step's buffer holds; older lines scroll
// away.
const MaxLines = 2000

// Model is the output pane.
type Model struct {
	common.Common
	vp viewport.Model
	// bufs holds each step's lines by step index; shown is the step on
	// screen. Lines appended without a step go to the shown one.
	bufs   map[int][]string
	shown  int
	lines  []string // bufs[shown], kept in step with it
	follow bool
	// empty replaces the empty pane's text (SetEmptyText).
	empty string
	// cut is lines as drawn, each cut to cutW columns (refreshAfter).
	cut  []string
	cutW int
}

var _ common.Component = (*Model)(nil)

// New returns an empty output pane that follows the tail.
func New(c common.Common) *Model {
	m := &Model{Common: c, vp: viewport.New(c.Width, c.Height), follow: true, bufs: map[int][]string{}}
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

// Lines returns the shown step's lines (as drawn, for tests and the
// whole-text view).
func (m *Model) Lines() []string { return m.lines }

// StepLines returns step i's lines, shown or not.
func (m *Model) StepLines(i int) []string { return m.bufs[i] }

// Shown is the step whose output the pane shows.
func (m *Model) Shown() int { return m.shown }

// Show shows step i's output. Switching to another step follows its tail;
// showing the same step again keeps the scroll position.
func (m *Model) Show(i int) {
	if i == m.shown {
		return
	}
	m.shown = i
	m.lines = m.bufs[i]
	m.follow = true
	m.refresh()
}

// Clear empties the shown step's output (it starts again) and follows the
// tail again.
func (m *Model) Clear() { m.ClearStep(m.shown) }

// ClearStep empties step i's output (a new attempt starts).
func (m *Model) ClearStep(i int) {
	delete(m.bufs, i)
	if i == m.shown {
		m.lines = nil
		m.follow = true
		m.refresh()
	}
}

// AppendLines adds output lines to the shown step, each prefixed with its
// host (see format).
func (m *Model) AppendLines(ls []runner.Line) { m.AppendLinesTo(m.shown, ls) }

// AppendLinesTo adds output lines to step i's buffer.
func (m *Model) AppendLinesTo(i int, ls []runner.Line) {
	buf := m.bufs[i]
	for _, l := range ls {
		buf = append(buf, m.format(l)...)
	}
	m.put(i, buf)
}

// AppendText adds a line that came from dpulab itself (a note, an error)
// to the shown step.
func (m *Model) AppendText(s string) { m.AppendTextTo(m.shown, s) }

// AppendTextTo adds a line of dpulab's own to step i's buffer.
func (m *Model) AppendTextTo(i int, s string) {
	buf := m.bufs[i]
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		buf = append(buf, m.Styles.Muted.Render("» "+l))
	}
	m.put(i, buf)
}

// put stores step i's lines, trimmed to MaxLines, and redraws when they
// are the ones shown.
func (m *Model) put(i int, buf []string) {
	over := max(len(buf)-MaxLines, 0)
	if over > 0 {
		buf = append(buf[:0], buf[over:]...)
	}
	m.bufs[i] = buf
	if i == m.shown {
		m.lines = buf
		m.refreshAfter(over)
	}
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

// refresh hands the viewport the shown lines, each cut to the pane's
// width with "…" at its end when longer, as k9s and lazygit mark theirs:
// the viewport would cut it silently, and the end of a bench line (its
// SATURATED SHARED HOST note) would be gone without a sign. The whole
// line stays in Lines, for the whole-text view (w).
func (m *Model) refresh() { m.refreshAfter(-1) }

// refreshAfter redraws after put dropped the oldest over lines (-1: the
// lines or the width changed wholesale). The cut form of each line is
// kept (cut, for width cutW), so an append measures and cuts only the new
// lines, not the whole buffer again. The viewport is still handed the
// whole joined buffer on each append (SetContent splits and measures it
// once more): drawing only the visible window from cut would save that.
func (m *Model) refreshAfter(over int) {
	w := max(m.vp.Width, 1)
	if over < 0 || w != m.cutW || over > len(m.cut) || len(m.cut)-over > len(m.lines) {
		m.cut, m.cutW = m.cut[:0], w
	} else {
		m.cut = append(m.cut[:0], m.cut[over:]...)
	}
	for _, l := range m.lines[len(m.cut):] {
		m.cut = append(m.cut, cutLine(l, w))
	}
	m.vp.SetContent(strings.Join(m.cut, "\n"))
	if m.follow {
		m.vp.GotoBottom()
	}
}

// cutLine is l cut to w columns, ending in "…" when text was cut (only
// blanks cut off, a padded line, lose no text and get none).
func cutLine(l string, w int) string {
	if ansi.StringWidth(l) <= w {
		return l
	}
	tail := "…"
	if ansi.StringWidth(strings.TrimRight(ansi.Strip(l), " ")) <= w {
		tail = ""
	}
	return ansi.Truncate(l, w, tail)
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

// SetEmptyText replaces what the pane says before a step has output
// ("" restores the default, which names the key that runs the step; booth
// mode has nobody to press it).
func (m *Model) SetEmptyText(s string) { m.empty = s }

// View draws the pane.
func (m *Model) View() string {
	if len(m.lines) == 0 {
		empty := m.empty
		if empty == "" {
			empty = "(no output yet — enter runs the step)"
		}
		return m.Styles.Muted.Render(empty) + strings.Repeat("\n", max(m.Height-1, 0))
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
