package lab

import (
	"strings"

	"github.com/dpulab/dpulab/tui/common"
)

// What booth mode (package booth) needs of the page beyond its driver
// messages (driver.go): a frame for booth mode's own screens, and no key
// hints on a screen nobody types at.

// Frame draws body, a screen of booth mode's own (its headline, its
// cycle of views), where the page draws its views: under the page's
// dialogs and above its status line, which carries booth mode's banner.
func (m *Model) Frame(body string) string {
	status := m.statusLines()
	h := m.Height - len(status)
	body = common.Fit(body, m.Width, h)
	if ov := m.overlay(); ov != "" {
		body = common.Overlay(body, ov, m.Width, h)
	}
	return body + "\n" + strings.Join(status, "\n")
}

// keyHints reports whether the screen may name keys to press: not in an
// unattended lab (booth mode), where a visitor's key only pauses the loop
// and a failed step is retried by the next loop, never by r or s.
func (m *Model) keyHints() bool { return !m.unattended }
