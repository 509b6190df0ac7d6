// Package booth is booth mode's controller: it plays a lab page unattended
// on a loop (a visible countdown before each step, dialogs answered by
// their deadline, the results held, cleanup, start over). It drives the
// lab page only through the page's messages (lab.RunMsg, FinishMsg,
// CleanupMsg, NoteMsg, StatusMsg, BannerMsg) and what it reads back; the
// page knows nothing of booth timing.
//
// While a loop's results are held, booth mode shows screens of its own in
// the page's place (lab.Model.Frame), one after another on a timer
// (Config.Cycle, cycle.go): the headline deltas in big digits for a
// passer-by (package headline), the live dashboard of the last bench, the
// compare table and the charts, with a line saying what comes next. No
// screen names a key to press: a visitor's key only pauses.
//
// Every loop leaves its results folder, marked as the booth's, and the
// oldest are pruned (config.go's PruneResults): a loop that failed or
// ended on a refused dialog is cleaned up and then written too, saying how
// it ended, before the restart; one interrupted by Ctrl+C or a signal is
// written before the program quits. So no loop leaves a folder that pruning
// cannot tell for the booth's.
package booth

import (
	"fmt"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/components/prompt"
	"github.com/dpulab/dpulab/tui/pages/lab"
)

type phase int

const (
	phaseCountdown phase = iota
	phaseRunning
	phaseCompare
	phaseError
)

// Model is booth mode wrapped around a lab page opened with
// lab.Options{Unattended: true}.
type Model struct {
	common.Common
	cfg    Config
	page   *lab.Model
	phase  phase
	until  time.Time
	now    time.Time
	paused bool
	left   time.Duration // time left when paused
	// note says why this loop ends early (a refused dialog); shown until
	// the restart.
	note string
	// armed are the dialogs given their automatic answer.
	armed map[*prompt.Model]bool
	// cyc rotates the screens over the loop's results (nil before them).
	cyc *cycle
	// finished is set once the loop's results were written (or writing
	// them failed): Finish runs once a loop.
	finished bool
	// closing says what follows the record of a loop that did not
	// complete (closeNone while the loop goes on).
	closing closing
}

// closing is how a loop that did not complete ends: its cleanup, its
// record written (Finish), then a restart or the quit.
type closing int

const (
	closeNone closing = iota
	closeRestart
	closeQuit
)

var _ common.Component = (*Model)(nil)

// New drives page in booth mode with cfg (zero fields take the defaults).
func New(c common.Common, page *lab.Model, cfg Config) *Model {
	// Nobody at a booth presses enter to run a step: no key hint.
	page.Output().SetEmptyText("(no output yet)")
	return &Model{Common: c, cfg: cfg.WithDefaults(), page: page, now: time.Now(), armed: map[*prompt.Model]bool{}}
}

// Page is the lab page booth mode drives.
func (m *Model) Page() *lab.Model { return m.page }

// Paused reports whether a visitor paused the loop.
func (m *Model) Paused() bool { return m.paused }

// Init starts the first countdown and the page.
func (m *Model) Init() tea.Cmd {
	m.schedule(m.cfg.StepDelay)
	m.setBanner()
	return m.page.Init()
}

// SetSize implements common.Component.
func (m *Model) SetSize(w, h int) {
	m.Common.SetSize(w, h)
	m.page.SetSize(w, h)
}

// View is the page's, whose status line shows booth mode's banner; while
// the loop's results are held, the screen of the cycle in its place.
func (m *Model) View() string {
	if s, ok := m.Screen(); ok {
		return m.page.Frame(m.screenView(s))
	}
	return m.page.View()
}

// ShortHelp implements help.KeyMap: in booth mode every key pauses.
func (m *Model) ShortHelp() []key.Binding { return []key.Binding{m.KeyMap.AnyKey, m.KeyMap.ForceQuit} }

// FullHelp implements help.KeyMap.
func (m *Model) FullHelp() [][]key.Binding { return [][]key.Binding{m.ShortHelp()} }

// Update watches what passes to the page and, after the page has seen it,
// takes booth mode's next step.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	switch msg := msg.(type) {
	case tea.KeyMsg:
		// A visitor's key only pauses: booth dialogs are answered by their
		// deadline, never by whoever walks by.
		m.togglePause()
	case lab.ClockMsg:
		cmds = append(cmds, m.clock(msg))
	case lab.StepDoneMsg:
		cmds = append(cmds, m.stepDone(msg))
	case lab.FinishedMsg:
		cmds = append(cmds, m.forward(msg))
		m.finished = true
		if m.closing != closeNone {
			cmds = append(cmds, m.recorded(msg))
			break
		}
		if msg.Err != nil {
			m.failed()
			break
		}
		m.phase, m.until = phaseCompare, m.now.Add(m.cfg.CompareHold)
		m.startCycle(m.page.Compare().Results())
		// A booth runs for hours: keep only its newest folders.
		cmds = append(cmds, pruneResults(msg.Dir, m.cfg.KeepResults))
	case lab.CleanupDoneMsg:
		if msg.Then == lab.ThenQuit && !m.finished {
			// Ctrl+C or a signal mid-loop: the loop's record (which
			// says it was interrupted) is written before the quit.
			m.closing, msg.Then = closeQuit, lab.ThenStay
		}
		cmds = append(cmds, m.forward(msg))
		if m.closing != closeNone && msg.Then == lab.ThenStay && !m.finished {
			cmds = append(cmds, m.forward(lab.FinishMsg{}))
		}
	case PrunedMsg:
		if msg.Err != nil {
			cmds = append(cmds, m.forward(lab.NoteMsg{Text: "booth mode: removing old results: " + msg.Err.Error()}))
		}
		if n := len(msg.Removed); n > 0 {
			cmds = append(cmds, m.forward(lab.NoteMsg{Text: fmt.Sprintf("booth mode: removed %d older results folder(s) it had written (keeps the newest %d)", n, m.cfg.KeepResults)}))
		}
	default:
		cmds = append(cmds, m.forward(msg))
	}
	m.arm()
	m.setBanner()
	return m, tea.Batch(cmds...)
}

func (m *Model) forward(msg tea.Msg) tea.Cmd {
	_, cmd := m.page.Update(msg)
	return cmd
}

// setBanner puts booth mode's status on the page's status line.
func (m *Model) setBanner() { m.page.Update(lab.BannerMsg(m.status())) }

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
