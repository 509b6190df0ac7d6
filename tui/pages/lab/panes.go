package lab

import (
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/keymap"
)

// docPane is the selected step's rendered markdown, scrollable: a viewport
// as a common.Component, so that the page drives it like its other panes.
type docPane struct {
	viewport.Model
	km *keymap.KeyMap
}

var (
	_ common.Component = (*docPane)(nil)
	_ common.Component = (*Model)(nil)
)

func newDocPane(c common.Common) *docPane {
	return &docPane{Model: viewport.New(c.Width, c.Height), km: c.KeyMap}
}

// Update scrolls the document.
func (d *docPane) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	d.Model, cmd = d.Model.Update(msg)
	return d, cmd
}

// SetSize implements common.Component.
func (d *docPane) SetSize(w, h int) { d.Width, d.Height = w, h }

// ShortHelp implements help.KeyMap.
func (d *docPane) ShortHelp() []key.Binding { return []key.Binding{d.km.Up, d.km.Down} }

// FullHelp implements help.KeyMap.
func (d *docPane) FullHelp() [][]key.Binding {
	return [][]key.Binding{{d.km.Up, d.km.Down, d.km.PageUp, d.km.PageDn}}
}

// parts holds the page's parts as components, by pane (steps, doc,
// output: the focused one takes the keys) and by full-page view
// (dashboard, compare; the steps view is the page's own layout). Size,
// keys and help reach them through common.Component; the page keeps its
// typed fields for what only a part of that kind does (SetSteps, AddSample).
type parts struct {
	panes   [PaneOutput + 1]common.Component
	screens map[View]common.Component
}
