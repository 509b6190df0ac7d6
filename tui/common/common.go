// Package common holds what every TUI component shares: styles, key map, the
// terminal size and the one error path. It follows soft-serve's pkg/ui/common:
// one Common struct embedded by value, a small Component contract.
package common

import (
	"io"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
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

// Fit makes s exactly h lines of at most w columns, each padded to w so
// that blocks joined side by side line up.
func Fit(s string, w, h int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:max(h, 0)]
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	for i, l := range lines {
		l = ansi.Truncate(l, w, "…")
		lines[i] = l + strings.Repeat(" ", max(w-ansi.StringWidth(l), 0))
	}
	return strings.Join(lines, "\n")
}

// Overlay draws box centred over body, replacing the lines it covers.
func Overlay(body, box string, w, h int) string {
	lines := strings.Split(body, "\n")
	bl := strings.Split(box, "\n")
	bw := 0
	for _, l := range bl {
		bw = max(bw, ansi.StringWidth(l))
	}
	top := max((h-len(bl))/2, 0)
	left := max((w-bw)/2, 0)
	for k, l := range bl {
		y := top + k
		if y >= len(lines) {
			break
		}
		under := lines[y]
		pre := ansi.Truncate(under, left, "")
		pre += strings.Repeat(" ", max(left-ansi.StringWidth(pre), 0))
		post := ansi.TruncateLeft(under, left+ansi.StringWidth(l), "")
		lines[y] = ansi.Truncate(pre+l+post, w, "")
	}
	return strings.Join(lines, "\n")
}
