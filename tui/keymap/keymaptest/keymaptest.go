// Package keymaptest turns key bindings into the key presses that match
// them, so that tests press what the key map says (km.Run) instead of raw
// strings: a rebinding then changes what a test presses, never silently
// what it exercises (lazygit's integration tests press their keys the
// same way).
package keymaptest

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// named are the key names bindings use, as bubbletea spells them in
// KeyMsg.String.
var named = map[string]tea.KeyType{
	"enter":     tea.KeyEnter,
	"tab":       tea.KeyTab,
	"shift+tab": tea.KeyShiftTab,
	"esc":       tea.KeyEsc,
	"up":        tea.KeyUp,
	"down":      tea.KeyDown,
	"left":      tea.KeyLeft,
	"right":     tea.KeyRight,
	"pgup":      tea.KeyPgUp,
	"pgdown":    tea.KeyPgDown,
	"home":      tea.KeyHome,
	"end":       tea.KeyEnd,
	"backspace": tea.KeyBackspace,
	"ctrl+c":    tea.KeyCtrlC,
	"ctrl+u":    tea.KeyCtrlU,
	"ctrl+d":    tea.KeyCtrlD,
	" ":         tea.KeySpace,
}

// Msg is the key press of name, a key as bindings and KeyMsg.String spell
// it ("enter", "ctrl+c", "q"). It panics on a name it does not know: a
// test helper's misuse, caught by the first run.
func Msg(name string) tea.KeyMsg {
	if t, ok := named[name]; ok {
		m := tea.KeyMsg{Type: t}
		if t == tea.KeySpace {
			m.Runes = []rune{' '}
		}
		return m
	}
	if r := []rune(name); len(r) == 1 {
		return tea.KeyMsg{Type: tea.KeyRunes, Runes: r}
	}
	panic(fmt.Sprintf("keymaptest: no key press for %q; add it to named", name))
}

// Press is the key press of b's first key: what a person reads first in
// the help for that binding.
func Press(b key.Binding) tea.KeyMsg {
	ks := b.Keys()
	if len(ks) == 0 {
		panic(fmt.Sprintf("keymaptest: binding %q has no keys", b.Help().Desc))
	}
	return Msg(ks[0])
}
