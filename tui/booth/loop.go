package booth

import (
	"fmt"
	"slices"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/components/prompt"
	"github.com/dpulab/dpulab/tui/pages/lab"
)

func (m *Model) schedule(d time.Duration) { m.phase, m.until = phaseCountdown, m.now.Add(d) }

// failed shows a failure for a while, then cleans up and restarts. A loop
// already ending (a refused dialog) keeps its reason and its clock.
func (m *Model) failed() {
	if m.phase == phaseError {
		return
	}
	m.phase, m.until = phaseError, m.now.Add(m.cfg.ErrorHold)
}

func (m *Model) togglePause() {
	m.paused = !m.paused
	if m.paused {
		m.left = max(m.until.Sub(m.now), 0)
		m.pauseCycle()
	} else {
		m.until = m.now.Add(m.left)
	}
}

// stepDone lets the page record the step's end, then goes on: a countdown
// to the next step, the results after the last, or the failure hold.
func (m *Model) stepDone(msg lab.StepDoneMsg) tea.Cmd {
	if msg.Index != m.page.Running() {
		// A step of a run that was stopped and replaced: the page drops it.
		return m.forward(msg)
	}
	ending := m.phase == phaseError
	status := m.page.Status()
	cmd := m.forward(msg)
	if ending {
		// The loop ends (a refused dialog): whatever the step did, the
		// booth cleans up and starts over when the hold ends.
		m.page.Update(lab.StatusMsg(status))
		return cmd
	}
	switch msg.Status {
	case results.Done, results.Skipped:
		if msg.Index+1 >= len(m.page.Steps()) {
			return tea.Batch(cmd, m.forward(lab.FinishMsg{}))
		}
		m.schedule(m.cfg.StepDelay)
	case results.Failed, results.Interrupted:
		m.failed()
	}
	return cmd
}

// clock advances the page's dialog deadlines and booth mode's timers.
func (m *Model) clock(t lab.ClockMsg) tea.Cmd {
	m.now = time.Time(t)
	m.turn()
	open := map[*prompt.Model]bool{}
	for _, p := range m.page.Prompts() {
		open[p] = !p.Done()
	}
	cmds := []tea.Cmd{m.forward(t)}
	for p, was := range open {
		switch {
		case !was || !p.Done():
		case m.allows(p.Prompt()):
			// Said as the reply goes out: the page's run control closes
			// the dialog then, and the step may end before the reply's
			// message comes back.
			cmds = append(cmds, m.forward(lab.StatusMsg(fmt.Sprintf("confirmed step %q (the lab allows it in booth mode)", p.Prompt().Step))))
		default:
			// Decided as the reply goes out, so that the step's end
			// (which the reply may cause) already finds the loop ending.
			m.refused(p.Prompt())
		}
	}
	if m.page.Busy() != "" {
		return tea.Batch(cmds...)
	}
	if m.paused {
		m.until = m.now.Add(m.left)
		return tea.Batch(cmds...)
	}
	if m.phase == phaseRunning || m.now.Before(m.until) {
		return tea.Batch(cmds...)
	}
	switch m.phase {
	case phaseCountdown:
		if m.page.Running() >= 0 || m.page.Prompt() != nil {
			break
		}
		m.phase = phaseRunning
		cmds = append(cmds, m.forward(lab.RunMsg{Index: m.page.Selected()}))
	case phaseCompare, phaseError:
		// Also stops a step still running after a refused dialog.
		m.phase = phaseRunning // until the restart
		if m.finished {
			cmds = append(cmds, m.forward(lab.CleanupMsg{Then: lab.ThenRestart}))
			break
		}
		// A loop that did not complete: cleanup, then its record (which
		// says how it ended), then the restart (recorded).
		m.closing = closeRestart
		cmds = append(cmds, m.forward(lab.CleanupMsg{Then: lab.ThenStay}))
	}
	return tea.Batch(cmds...)
}

// recorded goes on after the record of a loop that did not complete was
// written: it is marked and pruned like every booth folder, then the lab
// starts over, or the program quits.
func (m *Model) recorded(msg lab.FinishedMsg) tea.Cmd {
	// The page opened its compare view on the written results, with its
	// tabs' keys: the steps view, which shows how the loop ended, stays.
	// No path: a visitor has no use for one (the staff find the
	// folders under the booth's results root).
	note := "booth mode: this loop's results say how it ended"
	m.forward(lab.NoteMsg{Text: note, Show: true})
	if m.closing == closeQuit {
		if msg.Err == nil {
			// The program ends now: no time for a background prune.
			_, _ = PruneResults(msg.Dir, m.cfg.KeepResults, time.Now())
		}
		return func() tea.Msg { return lab.QuitMsg{} }
	}
	restart := func() tea.Msg { return lab.RestartMsg{} }
	if msg.Err != nil {
		return restart
	}
	return tea.Batch(pruneResults(msg.Dir, m.cfg.KeepResults), restart)
}

// allows reports whether the lab lets booth mode answer p with yes.
func (m *Model) allows(p steps.Prompt) bool {
	return p.Type == steps.PromptConfirm && slices.Contains(m.cfg.AutoConfirm, p.Step)
}

// arm gives each new dialog its automatic answer: yes after the step
// countdown for confirmations the lab allows, the safe one (refuse, no,
// cancel) after the prompt timeout for everything else.
func (m *Model) arm() {
	for _, p := range m.page.Prompts() {
		if m.armed[p] {
			continue
		}
		m.armed[p] = true
		if m.allows(p.Prompt()) {
			p.SetDeadline(m.now.Add(min(m.cfg.StepDelay, m.cfg.PromptTimeout)), steps.Answer{Choice: "yes"})
			continue
		}
		p.SetDeadline(m.now.Add(m.cfg.PromptTimeout), p.SafeAnswer())
	}
}

// refused ends the loop after a dialog booth mode had to refuse: the
// reason stays on screen for ErrorHold, then cleanup stops whatever runs
// and the lab starts over.
func (m *Model) refused(p steps.Prompt) {
	m.note = refusalNote(p)
	m.page.Update(lab.NoteMsg{Text: "✘ " + m.note, Show: true})
	m.phase, m.until = phaseError, m.now.Add(m.cfg.ErrorHold)
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
