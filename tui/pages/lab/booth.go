package lab

import (
	"fmt"
	"slices"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/components/prompt"
)

// BoothConfig sets booth mode's timing. Zero fields take the defaults.
type BoothConfig struct {
	// StepDelay is the visible countdown before each step.
	StepDelay time.Duration
	// PromptTimeout bounds every dialog: booth mode never waits forever.
	PromptTimeout time.Duration
	// CompareHold is how long the compare view stays before the restart.
	CompareHold time.Duration
	// ErrorHold is how long a failure stays on screen before cleanup and
	// restart.
	ErrorHold time.Duration
	// AutoConfirm lists the steps whose confirmation booth mode answers
	// with yes, after the visible countdown: the lab's booth: auto_confirm.
	// Every other dialog (unlisted confirmations, host keys, passwords)
	// is refused after PromptTimeout, and the loop starts over.
	AutoConfirm []string
	// KeepResults is how many results folders of its own booth mode
	// keeps; older ones it made are deleted (default 20). Folders it did
	// not make are never touched.
	KeepResults int
}

// WithDefaults fills zero fields.
func (c BoothConfig) WithDefaults() BoothConfig {
	if c.StepDelay <= 0 {
		c.StepDelay = 5 * time.Second
	}
	if c.PromptTimeout <= 0 {
		c.PromptTimeout = 20 * time.Second
	}
	if c.CompareHold <= 0 {
		c.CompareHold = 60 * time.Second
	}
	if c.ErrorHold <= 0 {
		c.ErrorHold = 15 * time.Second
	}
	if c.KeepResults <= 0 {
		c.KeepResults = DefaultBoothKeep
	}
	return c
}

type boothPhase int

const (
	boothCountdown boothPhase = iota
	boothRunning
	boothCompare
	boothError
)

// DefaultBoothKeep is how many of its results folders booth mode keeps.
const DefaultBoothKeep = 20

type booth struct {
	cfg    BoothConfig
	phase  boothPhase
	until  time.Time
	paused bool
	left   time.Duration // time left when paused
	// note says why this loop ends early (a refused dialog); shown until
	// the restart.
	note string
}

func newBooth(cfg BoothConfig) *booth { return &booth{cfg: cfg.WithDefaults()} }

func (b *booth) schedule(now time.Time, d time.Duration) {
	b.phase, b.until = boothCountdown, now.Add(d)
}

func (b *booth) showCompare(now time.Time) {
	b.phase, b.until = boothCompare, now.Add(b.cfg.CompareHold)
}

// allows reports whether the lab lets booth mode answer p with yes.
func (b *booth) allows(p steps.Prompt) bool {
	return p.Type == steps.PromptConfirm && slices.Contains(b.cfg.AutoConfirm, p.Step)
}

// armPrompt gives a dialog its automatic answer: yes after the step
// countdown for confirmations the lab allows, the safe one (refuse, no,
// cancel) after the prompt timeout for everything else.
func (b *booth) armPrompt(p *prompt.Model, now time.Time) {
	if b.allows(p.Prompt()) {
		p.SetDeadline(now.Add(min(b.cfg.StepDelay, b.cfg.PromptTimeout)), steps.Answer{Choice: "yes"})
		return
	}
	p.SetDeadline(now.Add(b.cfg.PromptTimeout), safeAnswer(p.Prompt()))
}

// refusalNote says on screen why booth mode refused a dialog and what
// would let the booth go on.
func refusalNote(p steps.Prompt) string {
	switch p.Type {
	case steps.PromptHostKey:
		return fmt.Sprintf("booth mode refused the unknown host key of %s: it never trusts a host key itself (add it to known_hosts, or start with --accept-new-host-keys)", p.Host)
	case steps.PromptSecret:
		return fmt.Sprintf("booth mode cannot type a password for %s: give booth hosts a key (identity:) or an ssh-agent", p.Host)
	}
	return fmt.Sprintf("booth mode refused to confirm step %q: the lab's booth: auto_confirm does not list it", p.Step)
}

// boothRefused ends the loop after a dialog booth mode had to refuse: the
// reason stays on screen for ErrorHold, then cleanup stops whatever runs
// and the lab starts over.
func (m *Model) boothRefused(p steps.Prompt) {
	note := refusalNote(p)
	m.out.AppendText("✘ " + note)
	m.booth.note = note
	m.view = ViewSteps // the output pane shows the reason in full
	m.booth.phase, m.booth.until = boothError, m.now.Add(m.booth.cfg.ErrorHold)
}

// boothFailed shows the failure for a while, then cleans up and restarts.
// A loop already ending (a refused dialog) keeps its reason and its clock.
func (m *Model) boothFailed() tea.Cmd {
	if m.booth.phase == boothError {
		return nil
	}
	m.booth.phase, m.booth.until = boothError, m.now.Add(m.booth.cfg.ErrorHold)
	return nil
}

// clock advances countdowns, dialog deadlines and booth timers.
func (m *Model) clock(t ClockMsg) tea.Cmd {
	now := time.Time(t)
	m.now = now
	var cmds []tea.Cmd
	for _, p := range m.prompts {
		was := p.Done()
		cmds = append(cmds, p.Tick(now))
		if m.booth != nil && !was && p.Done() && !m.booth.allows(p.Prompt()) {
			// Decided here, as the reply goes out, so that the step's
			// end (which the reply may cause) already finds the loop
			// ending.
			m.boothRefused(p.Prompt())
		}
	}
	b := m.booth
	if b == nil || m.busy != "" {
		return tea.Batch(cmds...)
	}
	if b.paused {
		b.until = now.Add(b.left)
		return tea.Batch(cmds...)
	}
	if b.phase == boothRunning || now.Before(b.until) {
		return tea.Batch(cmds...)
	}
	switch b.phase {
	case boothCountdown:
		if m.running >= 0 || len(m.prompts) > 0 {
			break
		}
		b.phase = boothRunning
		cmds = append(cmds, m.start(m.list.Selected()))
	case boothCompare, boothError:
		// Also stops a step still running after a refused dialog.
		b.phase = boothRunning // until the restart
		cmds = append(cmds, m.cleanup(ThenRestart))
	}
	return tea.Batch(cmds...)
}

// boothKey: any key pauses or resumes (ctrl+c is the root's).
func (m *Model) boothKey(tea.KeyMsg) tea.Cmd {
	b := m.booth
	b.paused = !b.paused
	if b.paused {
		b.left = max(b.until.Sub(m.now), 0)
	} else {
		b.until = m.now.Add(b.left)
	}
	return nil
}

// BoothPaused reports whether booth mode is paused (for tests).
func (m *Model) BoothPaused() bool { return m.booth != nil && m.booth.paused }

func (m *Model) boothStatus() string {
	st := m.Styles
	b := m.booth
	tag := st.Banner.Render("BOOTH")
	if b.paused {
		return tag + " " + st.Countdown.Render("PAUSED") + st.Muted.Render(" · any key resumes · ctrl+c quits")
	}
	left := max(b.until.Sub(m.now).Round(time.Second), 0)
	var s string
	switch {
	case m.busy != "":
		s = st.Countdown.Render(m.busy + "…")
	case b.phase == boothCountdown:
		i := m.list.Selected()
		title := ""
		if i < len(m.list.Steps()) {
			title = m.list.Steps()[i].Title
		}
		s = st.Countdown.Render(fmt.Sprintf("next: step %d %q in %s", i+1, title, left))
	case b.phase == boothRunning && m.running >= 0:
		s = st.StepRunning.Render(fmt.Sprintf("running step %d", m.running+1))
	case b.phase == boothCompare:
		s = st.Countdown.Render(fmt.Sprintf("results · starting over in %s", left))
	case b.phase == boothError:
		if b.note != "" {
			s = st.Error.Render(fmt.Sprintf("✘ starting over in %s · %s", left, b.note))
		} else {
			s = st.Error.Render(fmt.Sprintf("✘ step failed · cleaning up and starting over in %s", left))
		}
	}
	return tag + " " + s + st.Muted.Render(" · any key pauses")
}
