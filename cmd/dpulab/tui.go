package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/dpulab/dpulab/internal/termtext"
	"github.com/dpulab/dpulab/labs/tco"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui"
	"github.com/dpulab/dpulab/tui/booth"
	"github.com/dpulab/dpulab/tui/session"
)

// tuiFlags are the root command's flags: the TUI's.
type tuiFlags struct {
	booth     string
	labDirs   []string
	inventory string
	acceptNew bool
	rehearse  bool
	stateDir  string
	// Booth timing, hidden: the defaults suit a booth; tests shorten them.
	boothStepDelay, boothHold, boothPromptTimeout, boothCycle time.Duration
}

var rootTUIFlags tuiFlags

// addTUIFlags adds the TUI's flags to the root command.
func addTUIFlags(root *cobra.Command) {
	f := &rootTUIFlags
	fl := root.Flags()
	fl.StringVar(&f.booth, "booth", "", "booth mode: play LAB on a loop, unattended (any key pauses, Ctrl+C quits)")
	fl.StringArrayVar(&f.labDirs, "lab-dir", nil, "also look for labs in DIR (repeatable)")
	fl.StringVar(&f.inventory, "inventory", "", "hosts.yaml mapping roles to lab hosts (default: every role is this machine)")
	fl.BoolVar(&f.acceptNew, "accept-new-host-keys", false, "trust and save unknown SSH host keys without asking (never changed ones)")
	fl.BoolVar(&f.rehearse, "rehearse", false, "run labs without their hardware: skip the hardware checks and label every number REHEARSAL")
	fl.StringVar(&f.stateDir, "state-dir", "", "where progress is saved (default $XDG_STATE_HOME/dpulab)")
	fl.DurationVar(&f.boothStepDelay, "booth-step-delay", 0, "booth mode: countdown before each step (default 5s)")
	fl.DurationVar(&f.boothHold, "booth-hold", 0, "booth mode: how long results stay on screen before starting over (default 60s)")
	fl.DurationVar(&f.boothPromptTimeout, "booth-prompt-timeout", 0, "booth mode: how long a prompt waits before its safe answer (default 20s)")
	fl.DurationVar(&f.boothCycle, "booth-cycle", 0, "booth mode: how long each results screen (headline, dashboard, table, charts) stays (default 10s)")
	_ = fl.MarkHidden("booth-step-delay")
	_ = fl.MarkHidden("booth-cycle")
	_ = fl.MarkHidden("booth-hold")
	_ = fl.MarkHidden("booth-prompt-timeout")
}

// noColor honours NO_COLOR (https://no-color.org) and dumb terminals, and
// pins lipgloss to plain text so no component can leak a colour.
func noColor() bool {
	nc := os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb"
	if nc {
		lipgloss.SetColorProfile(termenv.Ascii)
	}
	return nc
}

func needTerminal() error {
	if !term.IsTerminal(int(os.Stdin.Fd())) || !term.IsTerminal(int(os.Stdout.Fd())) {
		return errors.New("the TUI needs a terminal; for scripts and CI use `dpulab run LAB` (see dpulab run --help)")
	}
	return nil
}

// clipboard is where OSC52 copy sequences go: the terminal, on stderr so
// they never interleave with the renderer's frames on stdout.
func clipboard() io.Writer {
	if term.IsTerminal(int(os.Stderr.Fd())) {
		return os.Stderr
	}
	return nil
}

func computeTCO(in map[string]float64) (*tco.Estimate, error) { return tco.Compute(in) }

func runTUI(cmd *cobra.Command, _ []string) error {
	f := rootTUIFlags
	if err := needTerminal(); err != nil {
		return err
	}
	var inv *runner.Inventory
	if f.inventory != "" {
		i, err := loadInventory(f.inventory, labDirs(f.labDirs))
		if err != nil {
			return usageError{Err: err}
		}
		inv = i
	}
	cat := &session.EngineCatalog{LabDirs: labDirs(f.labDirs), Inventory: inv, StateDir: f.stateDir, AcceptNewHostKeys: f.acceptNew, Rehearse: f.rehearse}
	if f.booth != "" {
		// Fail before the screen opens when the lab cannot be found.
		if _, err := cat.Open(f.booth, session.Options{Restart: true, Emit: func(steps.Event) {}}); err != nil {
			return fmt.Errorf("booth: %w", err)
		}
	}
	app := tui.New(tui.Config{
		Catalog:   cat,
		BoothLab:  f.booth,
		Booth:     booth.Config{StepDelay: f.boothStepDelay, CompareHold: f.boothHold, PromptTimeout: f.boothPromptTimeout, Cycle: f.boothCycle},
		NoColor:   noColor(),
		Clipboard: clipboard(),
		TCO:       computeTCO,
	})
	return runProgram(app, cat.Leftovers)
}

// runProgram runs the app full screen and makes sure cleanup ran on every
// way out (q, Ctrl+C, SIGINT, SIGTERM, a terminal that went away).
//
// A signal reaches the program as tui.SignalMsg, which acts as the Ctrl+C
// key does and names the signal in the run's results: the first stops the
// running step and cleans up on screen, then quits; a second quits at once
// and the cleanup goes on after the screen closes (App.Shutdown). Bubble
// Tea's own handler is off because it quits without the model's cleanup,
// and so is killing the program through its context. While App.Shutdown
// runs, one more signal only says so and the next abandons it, as in a
// headless run (signals.go). A run ended by a signal exits 128+N.
//
// leftovers (nil: none) names what the labs' runs may leave on their hosts
// when their cleanup is abandoned or does not finish in time.
func runProgram(app *tui.App, leftovers func() []steps.Leftover) error {
	p := tea.NewProgram(app, tea.WithAltScreen(), tea.WithFPS(10), tea.WithoutSignalHandler())
	it := &interrupter{notices: newBestEffortWriter(os.Stderr, nil), exit: os.Exit, leftovers: leftovers}
	var mu sync.Mutex
	shutting := false
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, interruptSignals()...)
	quit := make(chan struct{})
	defer func() {
		signal.Stop(sigs)
		close(quit)
	}()
	go func() {
		for {
			var s os.Signal
			select {
			case s = <-sigs:
			case <-quit:
				return
			}
			sig, ok := s.(syscall.Signal)
			if !ok {
				continue
			}
			mu.Lock()
			inProgram := !shutting
			mu.Unlock()
			switch {
			case inProgram:
				it.noteSignal(sig)
				// As Ctrl+C, with the signal named in the results.
				p.Send(tui.SignalMsg{By: sigLabel(sig)})
			case it.count() == 0:
				// Quit with q, then a signal while cleanup runs.
				it.noteSignal(sig)
				fmt.Fprintf(it.notices, "dpulab: %s: cleaning up (stopping what the lab started)\n", sigName(sig))
			default:
				it.signal(sig)
			}
		}
	}()
	_, runErr := p.Run()
	mu.Lock()
	shutting = true
	mu.Unlock()
	cctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := app.Shutdown(cctx); err != nil {
		fmt.Fprintln(os.Stderr, "dpulab: cleanup:", termtext.Plain(err.Error()))
	}
	// What cleanup could not remove (a host unreachable, its time up):
	// said after the screen closed, where it stays readable.
	sayLeftovers(it.notices, leftovers)
	it.finish()
	if code, ok := it.exitCode(); ok {
		return exitError{Code: code}
	}
	if runErr != nil && !errors.Is(runErr, tea.ErrProgramKilled) {
		return runErr
	}
	return nil
}
