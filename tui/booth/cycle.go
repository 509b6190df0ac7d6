package booth

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/dpulab/dpulab/steps/results"
	"github.com/dpulab/dpulab/tui/components/compare"
	"github.com/dpulab/dpulab/tui/components/headline"
)

// Screen is one of the screens booth mode cycles through while a loop's
// results are held: what a passer-by reads from three metres first, then
// the views a curious one stays for.
type Screen int

// The screens, in the order they are shown.
const (
	ScreenHeadline Screen = iota
	ScreenDashboard
	ScreenTable
	ScreenCharts
	numScreens
)

var screenNames = [...]string{"headline", "live dashboard", "compare table", "charts"}

// String is the screen's name on the cycle's indicator.
func (s Screen) String() string {
	if s < 0 || s >= numScreens {
		return fmt.Sprintf("screen %d", int(s))
	}
	return screenNames[s]
}

// cycle is the rotation of screens over one loop's results.
type cycle struct {
	res *results.Results
	// on lists the screens these results have (no dashboard when no bench
	// drew one), in order.
	on   []Screen
	at   int       // index into on
	next time.Time // when the next screen comes
	left time.Duration
	hl   *headline.Model
	cmp  *compare.Model
}

// startCycle begins the rotation over res at the headline.
func (m *Model) startCycle(res *results.Results) {
	if res == nil {
		m.cyc = nil
		return
	}
	c := &cycle{res: res, next: m.now.Add(m.cfg.Cycle)}
	c.on = []Screen{ScreenHeadline}
	if m.page.Dashboard().Samples() > 0 {
		c.on = append(c.on, ScreenDashboard)
	}
	if len(res.Benches) > 0 {
		c.on = append(c.on, ScreenTable, ScreenCharts)
	}
	c.hl = headline.New(m.Common, res)
	c.cmp = compare.New(m.Common, res, nil)
	m.cyc = c
}

// Screen is the screen shown while results are held, and false when booth
// mode shows the lab page itself (a loop running, nothing to show).
func (m *Model) Screen() (Screen, bool) {
	if m.cyc == nil || m.phase != phaseCompare {
		return 0, false
	}
	return m.cyc.on[m.cyc.at], true
}

// NextScreen is the screen that follows and how long until it does.
func (m *Model) NextScreen() (Screen, time.Duration) {
	if m.cyc == nil {
		return 0, 0
	}
	c := m.cyc
	left := c.next.Sub(m.now)
	if m.paused {
		left = c.left
	}
	return c.on[(c.at+1)%len(c.on)], max(left, 0)
}

// turn advances the cycle on the clock; paused, it keeps the time left.
func (m *Model) turn() {
	c := m.cyc
	if c == nil || m.phase != phaseCompare {
		return
	}
	if m.paused {
		c.next = m.now.Add(c.left)
		return
	}
	for !m.now.Before(c.next) {
		c.at = (c.at + 1) % len(c.on)
		c.next = c.next.Add(m.cfg.Cycle)
		if c.next.Before(m.now) {
			// A clock that jumped (a suspended laptop): one step, then
			// a whole period again.
			c.next = m.now.Add(m.cfg.Cycle)
		}
	}
}

// pauseCycle keeps the time left on the screen shown.
func (m *Model) pauseCycle() {
	if m.cyc != nil {
		m.cyc.left = max(m.cyc.next.Sub(m.now), 0)
	}
}

// indicator is the cycle's line above each screen: every screen, the one
// shown in brackets (visible without colour), and what comes next when.
func (m *Model) indicator() string {
	st := m.Styles
	cur, _ := m.Screen()
	var tabs []string
	for _, s := range m.cyc.on {
		if s == cur {
			tabs = append(tabs, st.ChoiceActive.UnsetPadding().Render("["+s.String()+"]"))
		} else {
			tabs = append(tabs, " "+s.String()+" ")
		}
	}
	next, left := m.NextScreen()
	when := "in " + left.Round(time.Second).String()
	if m.paused {
		when = "(paused)"
	}
	line := strings.Join(tabs, "") + "  " + st.Countdown.Render(fmt.Sprintf("next: %s %s", next, when))
	return ansi.Truncate(line, m.Width, "…")
}

// screenView draws the screen shown in Width×Height-1 (the page's status
// line is under it): the indicator, then the screen.
func (m *Model) screenView(s Screen) string {
	w, h := m.Width, m.Height-2 // the status line, the indicator
	c := m.cyc
	var body string
	switch s {
	case ScreenHeadline:
		c.hl.SetSize(w, h)
		body = c.hl.View()
	case ScreenDashboard:
		d := m.page.Dashboard()
		d.SetSize(w, h)
		body = d.View()
		d.SetSize(w, m.Height-1) // the page's own size for it
	case ScreenTable, ScreenCharts:
		tab := compare.TabTable
		if s == ScreenCharts {
			tab = compare.TabCharts
		}
		c.cmp.SetTab(tab)
		// The compare view's first line names its tabs and their keys:
		// booth mode's indicator and title stand in for it.
		c.cmp.SetSize(w, h+1)
		// Its first line goes; the warnings under it (a saturated host)
		// stay, or else the blank line after it goes too: cutting a fixed
		// two lines cut a wrapped warning in half. (With warnings, the
		// compare view has no blank line there and is a line shorter.)
		ls := strings.Split(c.cmp.View(), "\n")
		if len(ls) > 2 {
			ls = ls[1:]
			if strings.TrimSpace(ansi.Strip(ls[0])) == "" {
				ls = ls[1:]
			}
		}
		// What the figures are first, as the compare view's own title
		// says it (its series' legends leave it to the title).
		title := m.Styles.Title.Render("Compare: " + compareTitle(c.cmp))
		if k := compareKind(c.cmp); k != "" {
			title = m.Styles.Error.Render(k) + " " + title
		}
		body = ansi.Truncate(title, w, "…") + "\n" + noKeys(strings.Join(ls, "\n"))
	}
	return m.indicator() + "\n" + body
}

// shownBench is the bench the compare view shows: the last with the most
// variants (compare.SetResults); nil when there is none.
func shownBench(c *compare.Model) *results.Compare {
	r := c.Results()
	if r == nil || len(r.Benches) == 0 {
		return nil
	}
	best, at := -1, 0
	for i, b := range r.Benches {
		if len(b.Variants) >= best {
			best, at = len(b.Variants), i
		}
	}
	return &r.Benches[at]
}

// compareKind is what the shown bench's figures are
// (results.CompareFigures): "EMULATION", "" for measured ones.
func compareKind(c *compare.Model) string {
	b := shownBench(c)
	if b == nil {
		return ""
	}
	return results.CompareFigures(c.Results(), b).Title()
}

func compareTitle(c *compare.Model) string {
	b := shownBench(c)
	if b == nil {
		return ""
	}
	if b.Title != "" {
		return b.Title
	}
	return b.Step
}

// keyHint is a key hint the compare view writes beside a sweep point
// ("(↑/↓ sweep point 4/4)", "(↑/↓ to change)"): nobody at a booth is to
// press them.
var keyHint = regexp.MustCompile(`\s*\(↑/↓[^)]*\)`)

func noKeys(s string) string { return keyHint.ReplaceAllString(s, "") }
