// Package steplist is the lab screen's left pane: the steps with a status
// icon each (a spinner for the running one) and the overall progress bar.
package steplist

import (
	"fmt"
	"strings"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/progress"
	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/muesli/termenv"
)

// Icons per status; distinct shapes so the list reads without colour.
var icons = map[results.Status]string{
	results.Pending: "○",
	results.Running: "◐",
	results.Done:    "✔",
	results.Failed:  "✘",
	results.Skipped: "↷",
	// Stopped mid-way: not a failure; it runs again on resume.
	results.Interrupted: "■",
}

// CannotRunIcon marks a pending step this binary or machine cannot run
// (SetCannotRun).
const CannotRunIcon = "⊘"

// Model is the step list.
type Model struct {
	common.Common
	steps    []steps.StepInfo
	selected int
	// cannot says, per step index, why it cannot run here.
	cannot  map[int]string
	spinner spinner.Model
	bar     progress.Model
}

var _ common.Component = (*Model)(nil)

// New returns an empty step list.
func New(c common.Common) *Model {
	sp := spinner.New(spinner.WithSpinner(spinner.Dot), spinner.WithStyle(c.Styles.StepRunning))
	opts := []progress.Option{progress.WithoutPercentage(), progress.WithFillCharacters('█', '░')}
	if c.Styles.NoColor {
		opts = append(opts, progress.WithColorProfile(termenv.Ascii))
	} else {
		opts = append(opts, progress.WithSolidFill(c.Styles.ProgressColor))
	}
	m := &Model{Common: c, spinner: sp, bar: progress.New(opts...)}
	m.SetSize(c.Width, c.Height)
	return m
}

// SetSize implements common.Component.
func (m *Model) SetSize(w, h int) {
	m.Common.SetSize(w, h)
	m.bar.Width = max(w-12, 4)
}

// SetSteps replaces the steps (on open and on restart).
func (m *Model) SetSteps(s []steps.StepInfo) {
	m.steps = append([]steps.StepInfo(nil), s...)
	if m.selected >= len(m.steps) {
		m.selected = 0
	}
}

// SetCannotRun marks the steps that cannot run here, by index, each with
// a short reason (CannotRun); a pending one shows CannotRunIcon.
func (m *Model) SetCannotRun(why map[int]string) { m.cannot = why }

// CannotRun says why step i cannot run here, "" when it can.
func (m *Model) CannotRun(i int) string { return m.cannot[i] }

// Steps returns the steps as shown.
func (m *Model) Steps() []steps.StepInfo { return m.steps }

// SetStatus updates step i's status.
func (m *Model) SetStatus(i int, st results.Status) {
	if i >= 0 && i < len(m.steps) {
		m.steps[i].Status = st
	}
}

// Status returns step i's status.
func (m *Model) Status(i int) results.Status {
	if i >= 0 && i < len(m.steps) {
		return m.steps[i].Status
	}
	return results.Pending
}

// Selected is the index of the selected step.
func (m *Model) Selected() int { return m.selected }

// Select moves the selection to step i (clamped).
func (m *Model) Select(i int) {
	if len(m.steps) == 0 {
		m.selected = 0
		return
	}
	m.selected = min(max(i, 0), len(m.steps)-1)
}

// Running reports whether any step is running.
func (m *Model) Running() bool {
	for _, s := range m.steps {
		if s.Status == results.Running {
			return true
		}
	}
	return false
}

// Finished counts steps that are done or skipped.
func (m *Model) Finished() int {
	n := 0
	for _, s := range m.steps {
		if s.Status == results.Done || s.Status == results.Skipped {
			n++
		}
	}
	return n
}

// Init starts the spinner.
func (m *Model) Init() tea.Cmd { return m.spinner.Tick }

// Update moves the selection and animates the spinner.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case spinner.TickMsg:
		if !m.Running() {
			// Idle: let the spinner stop, so an idle screen (a booth
			// showing results for a minute) costs no redraws. Init
			// starts it again with the next step.
			return m, nil
		}
		var cmd tea.Cmd
		m.spinner, cmd = m.spinner.Update(msg)
		return m, cmd
	case tea.KeyMsg:
		switch {
		case key.Matches(msg, m.KeyMap.Up), key.Matches(msg, m.KeyMap.Prev):
			m.Select(m.selected - 1)
		case key.Matches(msg, m.KeyMap.Down), key.Matches(msg, m.KeyMap.Next):
			m.Select(m.selected + 1)
		case key.Matches(msg, m.KeyMap.Top):
			m.Select(0)
		case key.Matches(msg, m.KeyMap.Bottom):
			m.Select(len(m.steps) - 1)
		}
	}
	return m, nil
}

// View draws the list and the progress bar, exactly Height lines.
func (m *Model) View() string {
	st := m.Styles
	var b strings.Builder
	listH := max(m.Height-1, 1) // the progress bar takes the last line
	// The selected step shows its whole title, wrapped under itself (up
	// to four rows); the others are cut to one row.
	textW := max(m.Width-4, 1)
	var sel []string
	if m.selected < len(m.steps) {
		sel = strings.Split(wrapTitle(fmt.Sprintf("%2d %s", m.selected+1, m.steps[m.selected].Title), textW), "\n")
		if len(sel) > 4 {
			sel = sel[:4]
			sel[3] = ansi.Truncate(sel[3], lineW(3, textW)-1, "") + "…"
		}
	}
	rows := max(listH-max(len(sel)-1, 0), 1)
	// Scroll so the selection stays visible.
	first := 0
	if m.selected >= rows {
		first = m.selected - rows + 1
	}
	used := 0
	for i := first; i < len(m.steps) && used < listH; i++ {
		s := m.steps[i]
		icon := icons[s.Status]
		if s.Status == results.Pending && m.cannot[i] != "" {
			icon = CannotRunIcon
		}
		style := st.StepNormal
		switch s.Status {
		case results.Running:
			if !m.NoAnimation {
				icon = strings.TrimSpace(ansi.Strip(m.spinner.View()))
			}
			style = st.StepRunning
		case results.Done:
			style = st.StepDone
		case results.Failed:
			style = st.StepFailed
		case results.Skipped, results.Interrupted:
			style = st.StepSkipped
		}
		if i == m.selected {
			for k, t := range sel {
				if used >= listH {
					break
				}
				lead := "›" + icon + " "
				if k > 0 {
					lead = strings.Repeat(" ", ansi.StringWidth(lead)) + "   "
				}
				// Selection marked by › as well as reverse video.
				b.WriteString(st.StepSelected.Render(lead+t) + "\n")
				used++
			}
			continue
		}
		text := ansi.Truncate(fmt.Sprintf("%2d %s", i+1, s.Title), textW, "…")
		b.WriteString(" " + style.Render(icon) + " " + text + "\n")
		used++
	}
	for ; used < listH; used++ {
		b.WriteByte('\n')
	}
	frac := 0.0
	if len(m.steps) > 0 {
		frac = float64(m.Finished()) / float64(len(m.steps))
	}
	b.WriteString(m.bar.ViewAs(frac) + " " + st.Muted.Render(fmt.Sprintf("%d/%d", m.Finished(), len(m.steps))))
	return b.String()
}

// ShortHelp implements help.KeyMap.
func (m *Model) ShortHelp() []key.Binding {
	return []key.Binding{m.KeyMap.Up, m.KeyMap.Down}
}

// FullHelp implements help.KeyMap.
func (m *Model) FullHelp() [][]key.Binding {
	return [][]key.Binding{{m.KeyMap.Up, m.KeyMap.Down, m.KeyMap.Next, m.KeyMap.Prev, m.KeyMap.Top, m.KeyMap.Bottom}}
}

// wrapTitle wraps a numbered title ("12 Title") at spaces to w columns,
// its later lines indented past the number.
func wrapTitle(t string, w int) string {
	words := strings.Fields(t)
	var lines []string
	cur := ""
	for _, word := range words {
		switch {
		case cur == "":
			cur = word
			if len(lines) == 0 && len(t) > 0 && t[0] == ' ' {
				cur = " " + word // a one-digit number keeps its column
			}
		case ansi.StringWidth(cur)+1+ansi.StringWidth(word) <= lineW(len(lines), w):
			cur += " " + word
		default:
			lines = append(lines, cur)
			cur = word
		}
	}
	lines = append(lines, cur)
	for k, l := range lines {
		lines[k] = ansi.Truncate(l, lineW(k, w), "…")
	}
	return strings.Join(lines, "\n")
}

// lineW is the width of a wrapped title's line k: later lines start
// under the title, past the number's three columns.
func lineW(k, w int) int {
	if k == 0 {
		return w
	}
	return max(w-3, 1)
}
