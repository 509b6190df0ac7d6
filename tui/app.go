// Package tui is dpulab's terminal interface: the lab picker, the lab
// screen (steps, docs, commands, live output), the live dashboard, the
// compare view, modal prompts, booth mode (package booth) and replay. It
// renders what the steps engine emits and never runs a command itself.
//
// The root model here owns the pages, the footer help and the one error
// path; pages and components follow soft-serve's contract (Common, SetSize,
// help.KeyMap), see package common.
package tui

import (
	"io"
	"sync/atomic"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/dpulab/dpulab/tui/booth"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/components/compare"
	"github.com/dpulab/dpulab/tui/pages/lab"
	"github.com/dpulab/dpulab/tui/pages/picker"
	"github.com/dpulab/dpulab/tui/pages/replay"
	"github.com/dpulab/dpulab/tui/pages/runs"
	"github.com/dpulab/dpulab/tui/session"
)

// Config configures the app.
type Config struct {
	// Catalog lists and opens labs (nil only for replay).
	Catalog session.Catalog
	// BoothLab, when set, runs booth mode on that lab.
	BoothLab string
	// Booth is booth mode's timing and how many results folders it
	// keeps; AutoConfirm is not read from here but from the lab's booth:
	// block, so a lab never gets more than it lists.
	Booth booth.Config
	// Replay, when set, plays these recorded results back.
	Replay        *results.Results
	ReplayOptions replay.Options
	// ResultsRoot is where the results browser looks for past runs
	// (ROOT/LAB/RUNID; "" = steps.DefaultResultsRoot()); ResultsDirs are
	// run folders outside it (--results) to list too.
	ResultsRoot string
	ResultsDirs []string
	// NoColor turns colours off (NO_COLOR).
	NoColor bool
	// Clipboard receives OSC52 copy sequences (the terminal); nil disables.
	Clipboard io.Writer
	// TCO computes TCO estimates (tco.Compute).
	TCO compare.TCOFunc
	// NoAnimation freezes spinners (golden tests).
	NoAnimation bool
	// Clock is the interval of the clock that drives countdowns and
	// booth timers (default 1s; tests shorten it).
	Clock time.Duration
}

// State is the page the app shows.
type State int

// The app's pages.
const (
	StatePicker State = iota
	StateLab
	StateReplay
	// StateRuns is the results browser.
	StateRuns
)

// clockMsg is the app's once-a-second clock.
type clockMsg time.Time

// App is the root model.
type App struct {
	common.Common
	cfg    Config
	state  State
	picker *picker.Model
	lab    *lab.Model
	// booth drives lab in booth mode (nil otherwise).
	booth  *booth.Model
	replay *replay.Model
	runs   *runs.Model
	// replayFromRuns: esc in the replay goes back to the browser.
	replayFromRuns bool
	sess           session.Session
	help           help.Model
	pump           *session.Pump
	// gen numbers the sessions opened; a session's events reach the pump
	// only while it is the newest (booth restarts leave an abandoned run
	// finishing its cleanup behind).
	gen      atomic.Int64
	err      error
	errAt    time.Time
	quitting bool
	// stopBy is what began the quit (Ctrl+C, a signal), for Shutdown.
	stopBy  string
	cleaned bool
}

// New builds the app; Init opens the first page.
//
// The catalogue's and the recording's text comes from outside the binary
// (lab files, remote hosts, results folders): it is sanitised here, where it
// enters the TUI, so that nothing from it can write the clipboard, clear the
// screen or move the cursor (see package termtext).
func New(cfg Config) *App {
	cfg.Catalog = session.Sanitize(cfg.Catalog)
	cfg.Replay = session.CleanResults(cfg.Replay)
	c := common.NewCommon(cfg.NoColor, common.MinWidth, common.MinHeight)
	c.Clipboard = cfg.Clipboard
	c.NoAnimation = cfg.NoAnimation
	h := help.New()
	h.ShortSeparator = " · "
	return &App{Common: c, cfg: cfg, help: h, pump: session.NewPump()}
}

// State returns the page shown.
func (a *App) State() State { return a.state }

// Lab returns the lab page (nil when not open).
func (a *App) Lab() *lab.Model { return a.lab }

// Booth returns booth mode's controller (nil outside booth mode).
func (a *App) Booth() *booth.Model { return a.booth }

// Picker returns the picker page.
func (a *App) Picker() *picker.Model { return a.picker }

// Replay returns the replay page.
func (a *App) Replay() *replay.Model { return a.replay }

// Err is the error on screen, if any.
func (a *App) Err() error { return a.err }

func (a *App) tick() tea.Cmd {
	d := a.cfg.Clock
	if d <= 0 {
		d = time.Second
	}
	return tea.Tick(d, func(t time.Time) tea.Msg { return clockMsg(t) })
}

// Init opens the replay, the booth lab or the picker.
func (a *App) Init() tea.Cmd {
	cmds := []tea.Cmd{a.tick(), a.pump.Wait()}
	switch {
	case a.cfg.Replay != nil:
		a.state = StateReplay
		a.replay = replay.New(a.page(), a.cfg.Replay, a.cfg.ReplayOptions)
		cmds = append(cmds, a.replay.Init())
	case a.cfg.BoothLab != "":
		cmds = append(cmds, a.open(a.cfg.BoothLab, true, true))
	default:
		cmds = append(cmds, a.showPicker())
	}
	return tea.Batch(cmds...)
}

// page is the Common a page gets: the screen minus the footer.
func (a *App) page() common.Common {
	c := a.Common
	c.Height = max(a.Height-a.footerHeight(), 1)
	return c
}

func (a *App) footerHeight() int {
	if a.state == StateReplay {
		return 0 // the replay draws its own help line
	}
	if a.help.ShowAll {
		return 7
	}
	return 1
}

// Update routes messages: global keys, the pump, the clock, page messages.
func (a *App) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		a.SetSize(msg.Width, msg.Height)
		return a, nil
	case SignalMsg:
		return a, a.forceQuit(msg.By)
	case session.EventsMsg:
		if p := a.labPage(); p != nil {
			_, cmd := p.Update(msg)
			cmds = append(cmds, cmd)
		}
		cmds = append(cmds, a.pump.Wait())
		return a, tea.Batch(cmds...)
	case clockMsg:
		cmds = append(cmds, a.tick())
		if a.err != nil && a.cfg.BoothLab != "" && time.Since(a.errAt) > a.cfg.Booth.WithDefaults().ErrorHold {
			// Booth: an error stays on screen for a while, then we start over.
			a.err = nil
			if a.lab == nil || a.sess == nil {
				cmds = append(cmds, a.open(a.cfg.BoothLab, true, true))
			}
		}
		if p := a.labPage(); p != nil && a.state == StateLab {
			_, cmd := p.Update(lab.ClockMsg(msg))
			cmds = append(cmds, cmd)
		}
		return a, tea.Batch(cmds...)
	case common.ErrorMsg:
		a.setErr(msg)
		return a, nil
	case picker.OpenLabMsg:
		return a, a.open(msg.ID, false, msg.Restart)
	case lab.BackMsg:
		a.cleaned = true
		a.closeSession()
		a.lab, a.booth = nil, nil
		return a, a.showPicker()
	case lab.QuitMsg:
		a.cleaned = true
		a.quitting = true
		a.closeSession()
		return a, tea.Quit
	case lab.StartOverMsg:
		// A finished run shown for review: nothing runs, so nothing to
		// clean up before the lab opens again from its first step.
		return a, a.open(msg.ID, false, true)
	case lab.RestartMsg:
		a.cleaned = true
		if a.cfg.BoothLab != "" {
			return a, a.open(a.cfg.BoothLab, true, true)
		}
		return a, nil
	case runs.BackMsg:
		a.runs = nil
		return a, a.showPicker()
	case runs.ReplayMsg:
		a.state = StateReplay
		a.replayFromRuns = true
		opts := a.cfg.ReplayOptions
		opts.Back = true
		a.replay = replay.New(a.page(), msg.Results, opts)
		return a, a.replay.Init()
	case tea.KeyMsg:
		if cmd, done := a.globalKey(msg); done {
			return a, cmd
		}
		if cmd, done := a.runsKey(msg); done {
			return a, cmd
		}
	}
	if p := a.current(); p != nil {
		_, cmd := p.Update(msg)
		cmds = append(cmds, cmd)
	}
	return a, tea.Batch(cmds...)
}

// SignalMsg is a signal that ends the program (SIGINT, SIGTERM, SIGHUP),
// sent by the command that runs the app: it acts as Ctrl+C does, and By
// (the signal, as a person reads it) is what the run's results record as
// having interrupted it.
type SignalMsg struct{ By string }

// forceQuit is Ctrl+C's (and a signal's) way out: the first stops the
// running step and cleans up, a second quits at once.
func (a *App) forceQuit(by string) tea.Cmd {
	if a.stopBy == "" {
		a.stopBy = by
	}
	if a.quitting || a.lab == nil {
		a.quitting = true
		return tea.Quit
	}
	a.quitting = true
	return a.lab.ShutdownBy(by)
}

// globalKey handles Ctrl+C, help, dismissing errors and quitting pages
// without a session. done says the key was used.
func (a *App) globalKey(k tea.KeyMsg) (tea.Cmd, bool) {
	km := a.KeyMap
	if key.Matches(k, km.ForceQuit) {
		return a.forceQuit("Ctrl+C in the TUI"), true
	}
	if a.err != nil && a.cfg.BoothLab == "" {
		// Any key dismisses the error; esc and enter are consumed.
		a.err = nil
		if key.Matches(k, km.Back) || key.Matches(k, km.Enter) {
			return nil, true
		}
	}
	typing := (a.lab != nil && a.state == StateLab && a.lab.Typing()) ||
		(a.state == StatePicker && a.picker != nil && a.picker.Filtering()) ||
		(a.state == StateRuns && a.runs != nil && a.runs.Filtering())
	if typing || a.cfg.BoothLab != "" {
		return nil, false
	}
	switch {
	case key.Matches(k, km.Help):
		a.help.ShowAll = !a.help.ShowAll
		a.SetSize(a.Width, a.Height)
		return nil, true
	case key.Matches(k, km.Quit) && a.state != StateLab:
		a.quitting = true
		return tea.Quit, true
	}
	return nil, false
}
