package lab

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/dpulab/dpulab/tui/pages/lab/runctl"
)

// What a driver (booth mode) sends the page of an unattended lab. A driver
// plays the page with nobody at the keyboard: booth mode, or the app
// stopping everything at shutdown (Abort).
type (
	// RunMsg runs step Index.
	RunMsg struct{ Index int }
	// FinishMsg writes the run's results (FinishedMsg follows).
	FinishMsg struct{}
	// CleanupMsg stops what runs and cleans up, then does Then.
	CleanupMsg struct{ Then AfterCleanup }
	// NoteMsg adds a line to the output pane; Show brings the steps view
	// (where that pane is) to the front.
	NoteMsg struct {
		Text string
		Show bool
	}
	// StatusMsg sets the status line's text.
	StatusMsg string
	// BannerMsg leads the status line (booth mode's countdown); "" none.
	BannerMsg string
)

// drive does what a driver asked.
func (m *Model) drive(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case RunMsg:
		return m.fire(runctl.Event{Kind: runctl.Run, Step: msg.Index})
	case FinishMsg:
		return m.fire(runctl.Event{Kind: runctl.FinishAsked})
	case CleanupMsg:
		return m.fire(runctl.Event{Kind: runctl.CleanupAsked, Then: msg.Then})
	case NoteMsg:
		m.out.AppendText(msg.Text)
		if msg.Show {
			return m.fire(runctl.Event{Kind: runctl.ShowSteps})
		}
	case StatusMsg:
		m.bar.text = string(msg)
	case BannerMsg:
		m.bar.banner = string(msg)
	}
	return nil
}

// Abort stops the running step and gives every open dialog its safe
// answer (refuse, no, cancel), at once and without running cleanup. The
// engine runs one step at a time, so its Cleanup would otherwise wait for a
// running step to end on its own (a bench to its last second, a dialog to its
// timeout). App.Shutdown calls it when the program ended without the page
// cleaning up (an input error, a closed terminal).
func (m *Model) Abort() {
	_ = m.fire(runctl.Event{Kind: runctl.Abort})
	m.abort() // also when the page was already left
}
