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
)

// AnsweredMsg says the prompt was answered and the dialog closed.
type AnsweredMsg struct {
	Prompt steps.Prompt
	Answer steps.Answer
	// Auto is set when the answer was given by a timeout (booth mode).
	Auto bool
}

// choice is one button of the dialog.
type choice struct{ value, label string }

var defaultChoices = map[steps.PromptKind][]choice{
	steps.PromptHostKey: {{"once", "Accept once"}, {"save", "Accept and save"}, {"refuse", "Refuse"}},
	steps.PromptConfirm: {{"yes", "Yes, run it"}, {"no", "No"}},
	steps.PromptSecret:  {{"ok", "OK"}, {"cancel", "Cancel"}},
}

var labels = map[string]string{
	"once": "Accept once", "save": "Accept and save", "refuse": "Refuse",
	"yes": "Yes, run it", "no": "No", "ok": "OK", "cancel": "Cancel",
}

// Model is one open dialog.
type Model struct {
	common.Common
	p       steps.Prompt
	choices []choice
	cursor  int
	input   textinput.Model
	done    bool
	// deadline, when set, answers the safe choice on its own (booth mode
	// never waits forever); autoAnswer is that choice.
	deadline   time.Time
	autoAnswer steps.Answer
}

// New opens a dialog for p. The safe choice is selected first: refusing a
// host key and saying no must be what a stray enter does.
func New(c common.Common, p steps.Prompt) *Model {
	m := &Model{Common: c, p: p}
	if len(p.Choices) > 0 {
		for _, v := range p.Choices {
			l := labels[v]
			if l == "" {
				l = v
			}
			m.choices = append(m.choices, choice{v, l})
		}
	} else {
		m.choices = defaultChoices[p.Type]
	}
	switch p.Type {
	case steps.PromptHostKey:
		m.cursor = m.index("refuse")
	case steps.PromptConfirm:
		m.cursor = m.index("no")
	case steps.PromptSecret:
		m.input = textinput.New()
		m.input.EchoMode = textinput.EchoPassword
		m.input.EchoCharacter = '•'
		m.input.Placeholder = "password"
		m.input.Focus()
	}
	return m
}

func (m *Model) index(v string) int {
	for i, c := range m.choices {
		if c.value == v {
			return i
		}
	}
	return 0
}

// Prompt returns the question being asked.
func (m *Model) Prompt() steps.Prompt { return m.p }

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
	if m.p.Type == steps.PromptSecret {
		switch {
		case k.Type == tea.KeyEnter:
			return m, m.Answer(steps.Answer{Choice: "ok", Secret: m.input.Value()}, false)
		case key.Matches(k, km.Cancel):
			return m, m.Answer(steps.Answer{Choice: "cancel"}, false)
		}
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		return m, cmd
	}
	switch {
	case key.Matches(k, km.Left), key.Matches(k, km.PrevField):
		m.cursor = (m.cursor + len(m.choices) - 1) % len(m.choices)
	case key.Matches(k, km.Right), key.Matches(k, km.NextField):
		m.cursor = (m.cursor + 1) % len(m.choices)
	case k.Type == tea.KeyEnter:
		return m, m.Answer(steps.Answer{Choice: m.choices[m.cursor].value}, false)
	case key.Matches(k, km.Cancel):
		safe := "no"
		if m.p.Type == steps.PromptHostKey {
			safe = "refuse"
		}
		return m, m.Answer(steps.Answer{Choice: safe}, false)
	default:
		// Shortcuts: the first letter of a choice (o/s/r, y/n).
		for _, c := range m.choices {
			if k.String() == c.value[:1] {
				return m, m.Answer(steps.Answer{Choice: c.value}, false)
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
	switch m.p.Type {
	case steps.PromptHostKey:
		b.WriteString(st.ModalTitle.Render("Unknown host key") + "\n\n")
		fmt.Fprintf(&b, "%s %s\n", st.FieldLabel.Render("Host:       "), m.p.Host)
		fmt.Fprintf(&b, "%s %s\n", st.FieldLabel.Render("Key type:   "), m.p.KeyType)
		fmt.Fprintf(&b, "%s %s\n\n", st.FieldLabel.Render("Fingerprint:"), st.Fingerprint.Render(m.p.Fingerprint))
		b.WriteString(lipgloss.NewStyle().Width(w).Render(orDefault(m.p.Message,
			"This host is not in known_hosts. Compare the fingerprint with the one the host's owner gives you "+
				"(ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub on the host) before accepting.")) + "\n\n")
	case steps.PromptSecret:
		b.WriteString(st.ModalTitle.Render("Password needed") + "\n\n")
		if m.p.Host != "" {
			fmt.Fprintf(&b, "%s %s\n", st.FieldLabel.Render("Host:"), m.p.Host)
		}
		b.WriteString(lipgloss.NewStyle().Width(w).Render(orDefault(m.p.Message, "Enter the password.")) + "\n\n")
		b.WriteString(m.input.View() + "\n\n")
		b.WriteString(st.Muted.Render("enter submit · esc cancel · the password is never stored or logged"))
		return m.box(b.String(), w)
	case steps.PromptConfirm:
		b.WriteString(st.ModalTitle.Render("Confirm") + "\n\n")
		if m.p.Host != "" {
			fmt.Fprintf(&b, "%s %s\n", st.FieldLabel.Render("Host:"), m.p.Host)
		}
		b.WriteString(lipgloss.NewStyle().Width(w).Render(orDefault(m.p.Message, "Run this step?")) + "\n\n")
	}
	var btns []string
	for i, c := range m.choices {
		label := "[" + string(c.value[0]) + "] " + c.label
		if i == m.cursor {
			btns = append(btns, st.ChoiceActive.Render("› "+label))
		} else {
			btns = append(btns, st.Choice.Render("  "+label))
		}
	}
	b.WriteString(lipgloss.JoinHorizontal(lipgloss.Top, btns...))
	b.WriteString("\n\n" + st.Muted.Render("←/→ choose · enter confirm · esc refuse"))
	return m.box(b.String(), w)
}

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
			key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "submit")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
		}
	}
	return []key.Binding{m.KeyMap.Left, m.KeyMap.Right,
		key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "confirm choice")),
		key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "refuse/no"))}
}

// FullHelp implements help.KeyMap.
func (m *Model) FullHelp() [][]key.Binding { return [][]key.Binding{m.ShortHelp()} }
