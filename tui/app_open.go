package tui

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/booth"
	"github.com/dpulab/dpulab/tui/pages/lab"
	"github.com/dpulab/dpulab/tui/pages/picker"
	"github.com/dpulab/dpulab/tui/pages/runs"
	"github.com/dpulab/dpulab/tui/session"
)

func (a *App) showPicker() tea.Cmd {
	a.state = StatePicker
	labs, err := a.cfg.Catalog.Labs()
	if err != nil {
		a.setErr(fmt.Errorf("list labs: %w", err))
	}
	a.picker = picker.New(a.page(), labs)
	return a.picker.Init()
}

// runsKey opens the results browser from the picker, and leaves a replay
// opened from it back to it.
func (a *App) runsKey(k tea.KeyMsg) (tea.Cmd, bool) {
	switch {
	case a.state == StatePicker && a.picker != nil && !a.picker.Filtering() && key.Matches(k, a.KeyMap.Runs):
		return a.showRuns(), true
	case a.state == StateReplay && a.replayFromRuns && a.runs != nil && key.Matches(k, a.KeyMap.Back):
		a.replay, a.replayFromRuns = nil, false
		a.state = StateRuns
		return nil, true
	}
	return nil, false
}

// showRuns lists past runs: the results root's and this session's
// --results folders.
func (a *App) showRuns() tea.Cmd {
	root := a.cfg.ResultsRoot
	if root == "" {
		r, err := steps.DefaultResultsRoot()
		if err != nil {
			a.setErr(err)
		}
		root = r
	}
	var roots []string
	if root != "" {
		roots = []string{root}
	}
	a.runs = runs.New(a.page(), session.ScanRuns(roots, a.cfg.ResultsDirs), a.cfg.TCO)
	a.state = StateRuns
	return a.runs.Init()
}

// open opens lab id; booth mode (unattended) opens it from the start
// every time.
func (a *App) open(id string, unattended, restart bool) tea.Cmd {
	a.closeSession()
	g := a.gen.Add(1)
	a.pump.Discard()
	emit := func(ev steps.Event) {
		if a.gen.Load() == g {
			a.pump.Emit(ev)
		}
	}
	sess, err := a.cfg.Catalog.Open(id, session.Options{Emit: emit, Restart: unattended || restart})
	if err != nil {
		a.lab, a.booth = nil, nil
		a.setErr(fmt.Errorf("open lab %s: %w", id, err))
		if unattended {
			// Booth mode never exits on an error: show it, try again.
			a.state = StateLab
			return nil
		}
		return a.showPicker()
	}
	a.sess = sess
	a.cleaned = false
	a.lab = lab.New(a.page(), sess, lab.Options{TCO: a.cfg.TCO, Unattended: unattended})
	a.booth = nil
	a.state = StateLab
	if !unattended {
		return a.lab.Init()
	}
	cfg := a.cfg.Booth
	// Only what the lab allows, never more.
	cfg.AutoConfirm = sess.Info().BoothConfirm
	a.booth = booth.New(a.page(), a.lab, cfg)
	return a.booth.Init()
}

func (a *App) closeSession() {
	if a.sess != nil {
		_ = a.sess.Close()
		a.sess = nil
	}
}

func (a *App) setErr(err error) {
	a.err = err
	a.errAt = time.Now()
}

// Shutdown runs cleanup if the program ends without the lab page having
// done it (a signal, an input error, a closed terminal); the caller bounds
// ctx. Call it after the program has stopped. The running step is stopped
// and open dialogs get their safe answer first: the engine's Cleanup waits
// for a running step, which would otherwise run to its end.
func (a *App) Shutdown(ctx context.Context) error {
	if a.sess == nil {
		return nil
	}
	if a.lab != nil {
		a.lab.Abort()
	}
	var err error
	if !a.cleaned {
		err = a.sess.Cleanup(ctx)
		a.cleaned = true
		// The run ends here: its results say it was interrupted, and by
		// what when a signal or key began the shutdown.
		by := a.stopBy
		if by == "" {
			by = "the TUI ending (its terminal or input went away)"
		}
		_, lerr := a.sess.Leave(ctx, by)
		err = errors.Join(err, lerr)
	}
	a.closeSession()
	return err
}
