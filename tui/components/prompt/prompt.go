// Package prompt is the modal dialog for the engine's questions: trusting an
// unknown host key, a password (masked), and confirming a step. The engine
// waits on the prompt's Reply; this component calls it exactly once.
package prompt

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/keymap"
)

// AnsweredMsg says the prompt was answered and the dialog closed.
type AnsweredMsg struct {
	Prompt steps.Prompt
	Answer steps.Answer
	// Auto is set when the answer was given by a timeout (booth mode).
	Auto bool
}

// Model is one open dialog.
type Model struct {
	common.Common
	p       steps.Prompt
	purpose Purpose
	cursor  int
	input   textinput.Model
	done    bool
	// deadline, when set, answers the safe choice on its own (booth mode
	// never waits forever); autoAnswer is that choice.
	deadline   time.Time
	autoAnswer steps.Answer
}

var _ common.Component = (*Model)(nil)

// New opens a dialog for the engine's question p. The safe choice is
// selected first: refusing a host key and saying no must be what a stray
// enter does.
func New(c common.Common, p steps.Prompt) *Model { return NewFor(c, p, ForPrompt(p)) }

// NewFor opens a dialog for p that reads as purpose says (a page's own
// question, such as quitting while a step runs).
func NewFor(c common.Common, p steps.Prompt, purpose Purpose) *Model {
	m := &Model{Common: c, p: p, purpose: purpose}
	m.cursor = m.index(purpose.Safe)
	if p.Type == steps.PromptSecret {
		m.input = textinput.New()
		m.input.EchoMode = textinput.EchoPassword
		m.input.EchoCharacter = '•'
		m.input.Placeholder = "password"
		m.input.Focus()
	}
	return m
}

func (m *Model) index(v string) int {
	for i, c := range m.purpose.Choices {
		if c.Value == v {
			return i
		}
	}
	return 0
}

// Purpose returns how the dialog reads.
func (m *Model) Purpose() Purpose { return m.purpose }

// Prompt returns the question being asked.
func (m *Model) Prompt() steps.Prompt { return m.p }

// SafeAnswer is the answer that does nothing risky (refuse, no, cancel):
// what a dialog gets when nobody can answer it.
func (m *Model) SafeAnswer() steps.Answer { return steps.Answer{Choice: m.purpose.Safe} }

// Done reports whether the prompt has been answered.
func (m *Model) Done() bool { return m.done }

// SetDeadline makes the dialog answer a on its own at t (booth mode).
func (m *Model) SetDeadline(t time.Time, a steps.Answer) {
	m.deadline = t
	m.autoAnswer = a
}

// Deadline returns the auto-answer time (zero when none).
func (m *Model) Deadline() time.Time { return m.deadline }

// SetSize implements common.Component.
func (m *Model) SetSize(w, h int) { m.Common.SetSize(w, h) }

// Answer replies to the engine (once) and closes the dialog.
func (m *Model) Answer(a steps.Answer, auto bool) tea.Cmd {
	if m.done {
		return nil
	}
	m.done = true
	if m.p.Reply != nil {
		m.p.Reply(a)
	}
	p := m.p
	return func() tea.Msg { return AnsweredMsg{Prompt: p, Answer: a, Auto: auto} }
}

// Tick answers automatically when the deadline passed; the root calls it on
// its clock tick.
func (m *Model) Tick(now time.Time) tea.Cmd {
	if m.deadline.IsZero() || m.done || now.Before(m.deadline) {
		return nil
	}
	return m.Answer(m.autoAnswer, true)
}

// Init implements tea.Model.
func (m *Model) Init() tea.Cmd { return textinput.Blink }

// Update handles the dialog's keys.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	k, ok := msg.(tea.KeyMsg)
	if !ok || m.done {
		return m, nil
	}
	km := m.KeyMap
	safe := steps.Answer{Choice: m.purpose.Safe}
	if m.p.Type == steps.PromptSecret {
		switch {
		case key.Matches(k, km.Enter):
			return m, m.Answer(steps.Answer{Choice: "ok", Secret: m.input.Value()}, false)
		case key.Matches(k, km.Cancel):
			return m, m.Answer(safe, false)
		}
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		return m, cmd
	}
	cs := m.purpose.Choices
	if len(cs) == 0 {
		// Nothing to choose from: only the safe answer can be given.
		if key.Matches(k, km.Enter) || key.Matches(k, km.Cancel) {
			return m, m.Answer(safe, false)
		}
		return m, nil
	}
	switch {
	case key.Matches(k, km.Left), key.Matches(k, km.PrevField):
		m.cursor = (m.cursor + len(cs) - 1) % len(cs)
	case key.Matches(k, km.Right), key.Matches(k, km.NextField):
		m.cursor = (m.cursor + 1) % len(cs)
	case key.Matches(k, km.Enter):
		return m, m.Answer(steps.Answer{Choice: cs[m.cursor].Value}, false)
	case key.Matches(k, km.Cancel):
		return m, m.Answer(safe, false)
	default:
		// Shortcuts: the first letter of a choice (o/s/r, y/n).
		for _, c := range cs {
			if c.Value != "" && k.String() == c.Value[:1] {
				return m, m.Answer(steps.Answer{Choice: c.Value}, false)
			}
		}
	}
	return m, nil
}

// View draws the dialog box (not centred; the root places it).
func (m *Model) View() string {
	st := m.Styles
	var b strings.Builder
	w := min(max(m.Width-8, 40), 76)
	b.WriteString(st.ModalTitle.Render(m.purpose.Title) + "\n\n")
	msg := lipgloss.NewStyle().Width(w).Render(orDefault(m.p.Message, m.purpose.Default))
	switch m.p.Type {
	case steps.PromptHostKey:
		fmt.Fprintf(&b, "%s %s\n", st.FieldLabel.Render("Host:       "), m.p.Host)
		fmt.Fprintf(&b, "%s %s\n", st.FieldLabel.Render("Key type:   "), m.p.KeyType)
		fmt.Fprintf(&b, "%s %s\n\n", st.FieldLabel.Render("Fingerprint:"), st.Fingerprint.Render(m.p.Fingerprint))
		b.WriteString(msg + "\n\n")
	case steps.PromptSecret:
		if m.p.Host != "" {
			fmt.Fprintf(&b, "%s %s\n", st.FieldLabel.Render("Host:"), m.p.Host)
		}
		b.WriteString(msg + "\n\n")
		b.WriteString(m.input.View() + "\n\n")
		b.WriteString(st.Muted.Render("enter submit · esc cancel · the password is never stored or logged"))
		return m.box(b.String(), w)
	default:
		if m.p.Host != "" {
			fmt.Fprintf(&b, "%s %s\n", st.FieldLabel.Render("Host:"), m.p.Host)
		}
		b.WriteString(msg + "\n\n")
	}
	var btns []string
	for i, c := range m.purpose.Choices {
		label := "[" + c.Value[:1] + "] " + c.Label
		if i == m.cursor {
			btns = append(btns, st.ChoiceActive.Render("› "+label))
		} else {
			btns = append(btns, st.Choice.Render("  "+label))
		}
	}
	b.WriteString(lipgloss.JoinHorizontal(lipgloss.Top, btns...))
	b.WriteString("\n\n" + st.Muted.Render("←/→ choose · enter confirm · esc "+m.safeLabel()))
	return m.box(b.String(), w)
}

// safeLabel is what esc does, in the dialog's own words.
func (m *Model) safeLabel() string { return strings.ToLower(m.purpose.label(m.purpose.Safe)) }

func (m *Model) box(s string, w int) string {
	if !m.deadline.IsZero() && !m.done {
		left := time.Until(m.deadline).Round(time.Second)
		s += "\n" + m.Styles.Countdown.Render(fmt.Sprintf("booth mode: answering %q on its own in %s", m.autoAnswer.Choice, max(left, 0)))
	}
	return m.Styles.Modal.Width(w + 4).Render(s)
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// ShortHelp implements help.KeyMap.
func (m *Model) ShortHelp() []key.Binding {
	if m.p.Type == steps.PromptSecret {
		return []key.Binding{
			keymap.Relabel(m.KeyMap.Enter, "submit"),
			keymap.Relabel(m.KeyMap.Cancel, "cancel"),
		}
	}
	return []key.Binding{m.KeyMap.Left, m.KeyMap.Right,
		keymap.Relabel(m.KeyMap.Enter, "confirm choice"),
		keymap.Relabel(m.KeyMap.Cancel, m.safeLabel())}
}

// FullHelp implements help.KeyMap.
func (m *Model) FullHelp() [][]key.Binding { return [][]key.Binding{m.ShortHelp()} }
