// Package common holds what every TUI component shares: styles, key map, the
// terminal size and the one error path. It follows soft-serve's pkg/ui/common:
// one Common struct embedded by value, a small Component contract.
package common

import (
	"io"
	"strconv"

	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/dpulab/dpulab/tui/keymap"
	"github.com/dpulab/dpulab/tui/styles"
)

// MinWidth and MinHeight are the smallest terminal the layouts are designed
// for; below it the TUI shows a message instead of a broken layout.
const (
	MinWidth  = 80
	MinHeight = 24
)

// Common is shared by every component; copy it by value.
type Common struct {
	Styles *styles.Styles
	KeyMap *keymap.KeyMap
	Width  int
	Height int
	// Clipboard receives OSC52 sequences for "copy command" (the terminal's
	// output); nil disables copying to the terminal clipboard.
	Clipboard io.Writer
	// NoAnimation draws spinners as a fixed icon (golden tests).
	NoAnimation bool
}

// NewCommon returns a Common with default styles and key map.
func NewCommon(noColor bool, w, h int) Common {
	return Common{
		Styles: styles.DefaultStyles(noColor),
		KeyMap: keymap.DefaultKeyMap(),
		Width:  w,
		Height: h,
	}
}

// SetSize records the size a component may draw in.
func (c *Common) SetSize(w, h int) {
	c.Width = w
	c.Height = h
}

// Component is the contract of every widget and page: a bubbletea model that
// knows its size and the keys it answers to.
type Component interface {
	tea.Model
	help.KeyMap
	SetSize(width, height int)
}

// ErrorMsg is the one path errors take to the screen: any component returns
// ErrorCmd(err) and the root shows it.
type ErrorMsg error

// ErrorCmd returns a command that reports err.
func ErrorCmd(err error) tea.Cmd {
	return func() tea.Msg { return ErrorMsg(err) }
}

// TooSmall reports whether the terminal is below the designed minimum.
func (c Common) TooSmall() bool { return c.Width < MinWidth || c.Height < MinHeight }

// TooSmallView is shown instead of a layout that cannot fit.
func (c Common) TooSmallView() string {
	return c.Styles.Error.Render("Terminal too small") + "\n\n" +
		"dpulab needs at least 80×24; this one is " + strconv.Itoa(c.Width) + "×" + strconv.Itoa(c.Height) + ".\n" +
		"Enlarge the window (or reduce the font size). Ctrl+C quits."
}
