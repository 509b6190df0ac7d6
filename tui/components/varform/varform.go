// Package varform is the variables form, shown before a bench or compare
// step and opened from any step with its key: one field per lab variable,
// checked against the lab's type and min/max as the person types,
// submitted only when every field is valid. When a change redoes work
// already done, the page asks the form to confirm it (Confirm): the form
// then lists what changes until enter applies it or esc goes back to the
// fields.
package varform

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/keymap"
	"github.com/dpulab/dpulab/tui/session"
)

// SubmittedMsg carries the form's values (every one valid).
type SubmittedMsg struct{ Vars map[string]string }

// CancelledMsg says the form was closed without running.
type CancelledMsg struct{}

// ConfirmedMsg says the person accepted what Confirm listed.
type ConfirmedMsg struct{ Vars map[string]string }

// BackToFieldsMsg says the person left the confirmation to edit again.
type BackToFieldsMsg struct{}

// Validator checks one value; nil error means valid.
type Validator func(name, value string) error

// Model is the form.
type Model struct {
	common.Common
	vars     []session.Variable
	inputs   []textinput.Model
	errs     []error
	focus    int
	validate Validator
	title    string
	// submit words enter ("run with these values", "apply").
	submit string
	// notes are shown under the fields (which steps a change affects);
	// confirming is set while they wait for enter or esc.
	notes      []string
	confirming bool
}

var _ common.Component = (*Model)(nil)

// New builds a form for vars (their Default is the current value).
func New(c common.Common, title string, vars []session.Variable, validate Validator) *Model {
	m := &Model{Common: c, vars: vars, validate: validate, title: title, submit: "run with these values"}
	for i, v := range vars {
		in := textinput.New()
		in.SetValue(v.Default)
		in.CharLimit = 64
		in.Width = 24
		in.Prompt = ""
		if i == 0 {
			in.Focus()
		}
		m.inputs = append(m.inputs, in)
	}
	m.errs = make([]error, len(vars))
	m.checkAll()
	return m
}

// SetSubmit words what enter does ("apply these values").
func (m *Model) SetSubmit(label string) { m.submit = label }

// Confirm shows what applying vals changes (notes, one per line) and waits:
// enter sends ConfirmedMsg, esc BackToFieldsMsg and the fields again.
func (m *Model) Confirm(notes []string) {
	m.notes, m.confirming = notes, true
	if len(m.inputs) > 0 {
		m.inputs[m.focus].Blur()
	}
}

// Confirming reports whether the form waits for a confirmation.
func (m *Model) Confirming() bool { return m.confirming }

// Notes are the lines the form shows under its fields.
func (m *Model) Notes() []string { return m.notes }

// SetSize implements common.Component.
func (m *Model) SetSize(w, h int) { m.Common.SetSize(w, h) }

// Values returns the current values by name.
func (m *Model) Values() map[string]string {
	out := make(map[string]string, len(m.vars))
	for i, v := range m.vars {
		out[v.Name] = strings.TrimSpace(m.inputs[i].Value())
	}
	return out
}

// Valid reports whether every field passes validation.
func (m *Model) Valid() bool {
	for _, e := range m.errs {
		if e != nil {
			return false
		}
	}
	return true
}

func (m *Model) checkAll() {
	for i := range m.vars {
		m.check(i)
	}
}

func (m *Model) check(i int) {
	m.errs[i] = nil
	if m.validate != nil {
		m.errs[i] = m.validate(m.vars[i].Name, strings.TrimSpace(m.inputs[i].Value()))
	}
}

func (m *Model) move(d int) {
	if len(m.inputs) == 0 {
		return
	}
	m.inputs[m.focus].Blur()
	m.focus = (m.focus + d + len(m.inputs)) % len(m.inputs)
	m.inputs[m.focus].Focus()
}

// Init implements tea.Model.
func (m *Model) Init() tea.Cmd { return textinput.Blink }

// Update edits the focused field; enter submits when all fields are valid.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyMsg); ok && m.confirming {
		switch {
		case key.Matches(k, m.KeyMap.Enter):
			vals := m.Values()
			return m, func() tea.Msg { return ConfirmedMsg{Vars: vals} }
		case key.Matches(k, m.KeyMap.Cancel):
			m.confirming, m.notes = false, nil
			if len(m.inputs) > 0 {
				m.inputs[m.focus].Focus()
			}
			return m, func() tea.Msg { return BackToFieldsMsg{} }
		}
		return m, nil
	}
	if k, ok := msg.(tea.KeyMsg); ok {
		switch {
		case key.Matches(k, m.KeyMap.Cancel):
			return m, func() tea.Msg { return CancelledMsg{} }
		case key.Matches(k, m.KeyMap.Enter):
			if m.Valid() {
				vals := m.Values()
				return m, func() tea.Msg { return SubmittedMsg{Vars: vals} }
			}
			// Jump to the first invalid field so the person sees why.
			for i, e := range m.errs {
				if e != nil {
					m.move(i - m.focus)
					break
				}
			}
			return m, nil
		case key.Matches(k, m.KeyMap.NextField):
			m.move(1)
			return m, nil
		case key.Matches(k, m.KeyMap.PrevField):
			m.move(-1)
			return m, nil
		}
	}
	if len(m.inputs) == 0 {
		return m, nil
	}
	var cmd tea.Cmd
	m.inputs[m.focus], cmd = m.inputs[m.focus].Update(msg)
	m.check(m.focus)
	return m, cmd
}

// View draws the form box.
func (m *Model) View() string {
	st := m.Styles
	var b strings.Builder
	b.WriteString(st.ModalTitle.Render(m.title) + "\n\n")
	nameW := 10
	for _, v := range m.vars {
		nameW = max(nameW, len(v.Name))
	}
	for i, v := range m.vars {
		marker := "  "
		if i == m.focus {
			marker = "› "
		}
		rng := ""
		switch {
		case v.Min != "" && v.Max != "":
			rng = fmt.Sprintf("%s..%s", v.Min, v.Max)
		case v.Min != "":
			rng = "≥ " + v.Min
		case v.Max != "":
			rng = "≤ " + v.Max
		case len(v.Values) > 0:
			rng = strings.Join(v.Values, "|")
		}
		fmt.Fprintf(&b, "%s%s [%s] %s\n", marker, st.FieldLabel.Render(fmt.Sprintf("%-*s", nameW, v.Name)),
			m.inputs[i].View(), st.Muted.Render(rng))
		if m.errs[i] != nil {
			b.WriteString("    " + st.FieldInvalid.Render("✘ "+m.errs[i].Error()) + "\n")
		} else if i == m.focus && v.Description != "" {
			b.WriteString("    " + st.Muted.Render(v.Description) + "\n")
		}
	}
	w := min(max(m.Width-8, 50), 90)
	if len(m.notes) > 0 {
		b.WriteString("\n")
		for _, n := range m.notes {
			// The box's border and padding take 4 columns.
			b.WriteString(ansi.Wrap(n, w-4, " ") + "\n")
		}
	}
	b.WriteString("\n")
	switch {
	case m.confirming:
		b.WriteString(st.Muted.Render("enter " + m.submit + " · esc back to the values"))
	case m.Valid():
		b.WriteString(st.Muted.Render("enter " + m.submit + " · tab next field · esc cancel"))
	default:
		b.WriteString(st.FieldInvalid.Render("fix the fields marked ✘ to continue") + st.Muted.Render(" · esc cancel"))
	}
	return st.Modal.Width(w).Render(b.String())
}

// ShortHelp implements help.KeyMap.
func (m *Model) ShortHelp() []key.Binding {
	if m.confirming {
		return []key.Binding{keymap.Relabel(m.KeyMap.Enter, m.submit), keymap.Relabel(m.KeyMap.Cancel, "back to the values")}
	}
	// Enter and esc first: they stay when a narrow footer drops keys.
	return []key.Binding{keymap.Relabel(m.KeyMap.Enter, m.submit), m.KeyMap.Cancel,
		m.KeyMap.NextField, m.KeyMap.PrevField}
}

// FullHelp implements help.KeyMap.
func (m *Model) FullHelp() [][]key.Binding { return [][]key.Binding{m.ShortHelp()} }
