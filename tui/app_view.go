package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/x/ansi"
	"github.com/dpulab/dpulab/tui/common"
)

// SetSize resizes every page.
func (a *App) SetSize(w, h int) {
	a.Common.SetSize(w, h)
	a.help.Width = w
	p := a.page()
	for _, c := range a.pages() {
		c.SetSize(p.Width, p.Height)
	}
}

// labPage is the lab page as the app drives it: through booth mode's
// controller in booth mode.
func (a *App) labPage() common.Component {
	switch {
	case a.booth != nil:
		return a.booth
	case a.lab != nil:
		return a.lab
	}
	return nil
}

// current is the page shown (nil while none is open).
func (a *App) current() common.Component {
	switch a.state {
	case StatePicker:
		if a.picker != nil {
			return a.picker
		}
	case StateLab:
		return a.labPage()
	case StateReplay:
		if a.replay != nil {
			return a.replay
		}
	case StateRuns:
		if a.runs != nil {
			return a.runs
		}
	}
	return nil
}

// pages are the pages open, shown or not.
func (a *App) pages() []common.Component {
	var ps []common.Component
	if a.picker != nil {
		ps = append(ps, a.picker)
	}
	if p := a.labPage(); p != nil {
		ps = append(ps, p)
	}
	if a.replay != nil {
		ps = append(ps, a.replay)
	}
	if a.runs != nil {
		ps = append(ps, a.runs)
	}
	return ps
}

// View draws the page, the error (if any) and the footer.
func (a *App) View() string {
	if a.quitting && a.lab == nil {
		return ""
	}
	if a.TooSmall() {
		return a.TooSmallView()
	}
	p := a.page()
	var body string
	var keys help.KeyMap
	if c := a.current(); c != nil {
		body, keys = c.View(), c
	}
	body = common.Fit(body, p.Width, p.Height)
	if a.err != nil {
		body = common.Overlay(body, a.errorBox(), p.Width, p.Height)
	}
	if keys == nil || a.footerHeight() == 0 {
		return body
	}
	foot := a.footer(keys)
	return body + "\n" + common.Fit(foot, a.Width, a.footerHeight())
}

// footer is the help line (or, with ?, the full help). When the short
// help is too wide, the keys before "q quit · ? more keys" give way one by
// one, so those two always show: a first-time trainee must see how to get
// the rest.
func (a *App) footer(keys help.KeyMap) string {
	if a.help.ShowAll {
		return a.help.View(keys)
	}
	b := keys.ShortHelp()
	measure := a.help
	measure.Width = 0 // untruncated
	for len(b) > 3 && b[len(b)-1].Help().Key == a.KeyMap.Help.Help().Key &&
		ansi.StringWidth(measure.ShortHelpView(b)) > a.Width {
		b = append(b[:len(b)-3:len(b)-3], b[len(b)-2:]...)
	}
	return a.help.ShortHelpView(b)
}

func (a *App) errorBox() string {
	st := a.Styles
	msg := a.err.Error()
	w := min(a.Width-6, 90)
	var lines []string
	for _, l := range strings.Split(msg, "\n") {
		lines = append(lines, ansi.Wordwrap(l, w-4, " "))
	}
	tail := "any key closes this"
	if a.cfg.BoothLab != "" {
		tail = "booth mode: starting over shortly"
	}
	return st.ErrorBox.Width(w).Render(st.Error.Render("Error") + "\n\n" + strings.Join(lines, "\n") + "\n\n" + st.Muted.Render(tail))
}
