package booth

import (
	"fmt"
	"time"
)

// status is booth mode's banner on the page's status line: the phase and
// its countdown, or PAUSED.
func (m *Model) status() string {
	st := m.Styles
	tag := st.Banner.Render("BOOTH")
	if m.paused {
		return tag + " " + st.Countdown.Render("PAUSED") + st.Muted.Render(" · any key resumes · ctrl+c quits")
	}
	left := max(m.until.Sub(m.now).Round(time.Second), 0)
	var s string
	switch {
	case m.page.Busy() != "":
		s = st.Countdown.Render(m.page.Busy() + "…")
	case m.phase == phaseCountdown:
		i := m.page.Selected()
		title := ""
		if ss := m.page.Steps(); i < len(ss) {
			title = ss[i].Title
		}
		s = st.Countdown.Render(fmt.Sprintf("next: step %d %q in %s", i+1, title, left))
	case m.phase == phaseRunning && m.page.Running() >= 0:
		s = st.StepRunning.Render(fmt.Sprintf("running step %d", m.page.Running()+1))
	case m.phase == phaseCompare:
		s = st.Countdown.Render(fmt.Sprintf("results · starting over in %s", left))
	case m.phase == phaseError:
		if m.note != "" {
			s = st.Error.Render(fmt.Sprintf("✘ starting over in %s · %s", left, m.note))
		} else {
			s = st.Error.Render(fmt.Sprintf("✘ step failed · cleaning up and starting over in %s", left))
		}
	}
	return tag + " " + s + st.Muted.Render(" · any key pauses")
}
