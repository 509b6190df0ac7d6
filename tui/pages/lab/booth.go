package lab

import (
	"fmt"
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
	// AutoConfirm answers the lab's confirmation prompts with yes (only
	// when the lab allows it). Host keys are never accepted, passwords
	// never typed.
	AutoConfirm bool
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
	return c
}

type boothPhase int

const (
	boothCountdown boothPhase = iota
	boothRunning
	boothCompare
	boothError
)

type booth struct {
	cfg    BoothConfig
	phase  boothPhase
	until  time.Time
	paused bool
	left   time.Duration // time left when paused
}

func newBooth(cfg BoothConfig) *booth { return &booth{cfg: cfg.WithDefaults()} }

func (b *booth) schedule(now time.Time, d time.Duration) {
	b.phase, b.until = boothCountdown, now.Add(d)
}

func (b *booth) showCompare(now time.Time) {
	b.phase, b.until = boothCompare, now.Add(b.cfg.CompareHold)
}

// armPrompt gives a dialog its automatic answer: the safe one, except for
// confirmations the lab allows.
func (b *booth) armPrompt(p *prompt.Model, now time.Time) {
	a := safeAnswer(p.Prompt())
	d := b.cfg.PromptTimeout
	if p.Prompt().Type == steps.PromptConfirm && b.cfg.AutoConfirm {
		a = steps.Answer{Choice: "yes"}
		d = min(d, 3*time.Second)
	}
	p.SetDeadline(now.Add(d), a)
}

// boothFailed shows the failure for a while, then cleans up and restarts.
func (m *Model) boothFailed() tea.Cmd {
	m.booth.phase, m.booth.until = boothError, m.now.Add(m.booth.cfg.ErrorHold)
	return nil
}

// clock advances countdowns, dialog deadlines and booth timers.
func (m *Model) clock(t ClockMsg) tea.Cmd {
	now := time.Time(t)
	m.now = now
	var cmds []tea.Cmd
	for _, p := range m.prompts {
		cmds = append(cmds, p.Tick(now))
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
		s = st.Error.Render(fmt.Sprintf("step failed · cleaning up and starting over in %s", left))
	}
	return tag + " " + s + st.Muted.Render(" · any key pauses")
}
