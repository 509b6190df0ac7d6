package lab

import "github.com/charmbracelet/bubbles/key"

// ShortHelp implements help.KeyMap: the keys that matter right now.
func (m *Model) ShortHelp() []key.Binding {
	km := m.KeyMap
	switch {
	case m.Prompt() != nil:
		return m.Prompt().ShortHelp()
	case m.form != nil:
		return m.form.ShortHelp()
	case m.view == ViewCompare && m.review:
		return append(m.screen(m.view).ShortHelp(), km.Back, km.Restart, km.Quit, km.Help)
	case m.view == ViewCompare:
		return append(m.screen(m.view).ShortHelp(), km.Back, km.Quit, km.Help)
	case m.view == ViewDashboard:
		return []key.Binding{km.Back, km.Compare, km.Quit, km.Help}
	}
	if m.review {
		return []key.Binding{km.Restart, km.Compare, km.NextPrev, km.SwitchPane, km.Copy, km.Quit, km.Help}
	}
	sel := m.list.Selected()
	if f, ok := m.failures[sel]; ok && f.Status != 0 {
		return []key.Binding{km.Retry, km.Skip, km.NextPrev, km.SwitchPane, km.Copy, km.Quit, km.Help}
	}
	return []key.Binding{km.Run, km.RunAll, km.Skip, km.NextPrev, km.SwitchPane, km.Copy, km.Quit, km.Help}
}

// FullHelp implements help.KeyMap: everything, in columns.
func (m *Model) FullHelp() [][]key.Binding {
	km := m.KeyMap
	run := []key.Binding{km.Run, km.RunAll, km.Retry, km.Skip}
	if m.review {
		run = []key.Binding{km.Restart}
	}
	return [][]key.Binding{
		run,
		{km.Next, km.Prev, km.Up, km.Down},
		{km.SwitchPane, km.Copy, km.Bottom, km.Top},
		{km.Dashboard, km.Compare, km.Tab1, km.Tab2},
		{km.Back, km.Quit, km.ForceQuit, km.Help},
	}
}
