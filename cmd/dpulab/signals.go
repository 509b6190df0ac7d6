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

	"github.com/dpulab/dpulab/internal/agentcmd"
	"github.com/dpulab/dpulab/internal/termtext"
	"github.com/dpulab/dpulab/steps"
)

// How a headless run ends early, and with which exit status.
//
// SIGINT, SIGTERM and SIGHUP (a closed terminal or SSH session) end a run
// the same way: the running step is stopped, the engine's cleanup runs (it
// stops what the lab started and removes the working directory), results
// are written, and dpulab exits 128+N for signal N: 130 for SIGINT, 143 for
// SIGTERM, 129 for SIGHUP. Output that went away (a write to stdout or
// stderr failing with EPIPE or EIO: `| tee` or `| head` gone, a hung-up
// terminal) counts as SIGPIPE: the run ends the same way, exit status 141,
// and from then on the output is discarded, never fatal.
//
// While cleanup runs, a second signal only says that cleanup is still
// running; a third abandons it and exits at once, saying what may be left.
// Two are not enough because pressing Ctrl-C twice out of impatience is
// common, and abandoning cleanup is exactly what leaves servers running on
// lab hosts. The engine bounds cleanup by itself (Options.CleanupTimeout).
//
// SIGHUP is left alone when dpulab was started with it ignored (nohup):
// catching it would undo what the person asked for.

// exitCodeSignal is the conventional exit status of a process ended by sig.
func exitCodeSignal(sig syscall.Signal) int { return agentcmd.ExitCodeSignal(sig) }

// interrupter turns signals and lost output into one early end of a run,
// and counts what comes after it.
type interrupter struct {
	cancel context.CancelCauseFunc
	// notices is where it says what it does: stderr, guarded.
	notices io.Writer
	// exit ends the process when cleanup is abandoned (os.Exit).
	exit func(code int)

	mu sync.Mutex
	// leftovers says what the run may leave on its hosts when cleanup is
	// abandoned (Engine.Leftovers); nil until the run has an engine.
	leftovers func() []steps.Leftover
	first     syscall.Signal // what ended the run; 0 while it goes on
	n         int            // signals received, the first included
	done      bool           // the run has returned: nothing left to abandon
}

// interruptSignals are the signals that end a run; SIGHUP only when it was
// not ignored at start.
func interruptSignals() []os.Signal { return agentcmd.InterruptSignals() }

// watch returns a context that ends on the first interrupt signal or lost
// output, and a function that stops watching (call it when the run has
// returned).
func (it *interrupter) watch(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	it.mu.Lock()
	it.cancel = cancel
	it.mu.Unlock()
	ignorePipe()
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, interruptSignals()...)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case s := <-ch:
				if sig, ok := s.(syscall.Signal); ok {
					it.signal(sig)
				}
			case <-quit:
				return
			}
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(quit)
		wg.Wait()
		it.mu.Lock()
		it.done = true
		it.mu.Unlock()
		cancel(nil)
	}
}

// ignorePipe makes a write to a closed stdout or stderr fail with EPIPE
// instead of killing the process (the Go runtime's default for fds 1 and
// 2), so cleanup survives `| tee` being interrupted with us. Notify rather
// than signal.Ignore: an ignored signal stays ignored in every child we
// exec (shells, servers, benches), where a caught one is reset to default.
// The channel is never read; signal.Notify drops what does not fit.
func ignorePipe() {
	pipeOnce.Do(func() { signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE) })
}

var pipeOnce sync.Once

// signal handles one interrupt signal.
func (it *interrupter) signal(sig syscall.Signal) {
	it.mu.Lock()
	it.n++
	n, done := it.n, it.done
	if n == 1 {
		it.first = sig
	}
	first, cancel, leftovers := it.first, it.cancel, it.leftovers
	it.mu.Unlock()
	if done {
		return
	}
	switch n {
	case 1:
		fmt.Fprintf(it.notices, "\ndpulab: %s: stopping the step, then cleaning up (stopping what the lab started, removing its working directory) and saving results\n", sigName(sig))
		if cancel != nil {
			// The cause is what results.json records as interrupted_by.
			cancel(steps.Interruption{By: sigLabel(sig)})
		}
	case 2:
		fmt.Fprintf(it.notices, "dpulab: %s: still cleaning up; one more abandons cleanup and may leave servers running\n", sigName(sig))
	default:
		fmt.Fprintf(it.notices, "dpulab: %s: cleanup abandoned: servers the lab started may still be running; the next run of this lab stops the ones saved progress recorded\n", sigName(sig))
		sayLeftovers(it.notices, leftovers)
		it.exit(exitCodeSignal(first))
	}
}

// setLeftovers gives the interrupter what to name when cleanup is
// abandoned.
func (it *interrupter) setLeftovers(f func() []steps.Leftover) {
	it.mu.Lock()
	it.leftovers = f
	it.mu.Unlock()
}

// sayLeftovers names, one line each, the working directories a run whose
// cleanup did not finish may leave, with host, path and the commands that
// remove each by hand (steps.Leftover.String).
func sayLeftovers(w io.Writer, leftovers func() []steps.Leftover) {
	if leftovers == nil {
		return
	}
	for _, l := range leftovers() {
		fmt.Fprintf(w, "dpulab: %s\n", termtext.Line(l.String()))
	}
}

// noteSignal counts a signal that something else acts on (the TUI turns
// it into a key press): it sets the exit status and counts towards
// abandoning a cleanup that follows.
func (it *interrupter) noteSignal(sig syscall.Signal) {
	it.mu.Lock()
	defer it.mu.Unlock()
	it.n++
	if it.first == 0 || it.first == syscall.SIGPIPE {
		it.first = sig
	}
}

// count is how many signals came.
func (it *interrupter) count() int {
	it.mu.Lock()
	defer it.mu.Unlock()
	return it.n
}

// finish marks the work over: later signals have nothing to abandon.
func (it *interrupter) finish() {
	it.mu.Lock()
	it.done = true
	it.mu.Unlock()
}

// outputGone is called once per stream whose reader went away: the run
// ends as on SIGPIPE, unless something else already ended it.
func (it *interrupter) outputGone() {
	it.mu.Lock()
	defer it.mu.Unlock()
	if it.n > 0 || it.done {
		return
	}
	// Nobody reads the notice; the count stays 0 so that a Ctrl-C after
	// the reader left is still a first "cleaning up" and not an abandon.
	it.first = syscall.SIGPIPE
	if it.cancel != nil {
		it.cancel(steps.Interruption{By: sigLabel(syscall.SIGPIPE)})
	}
}

// exitCode is the exit status the run must end with when a signal or lost
// output ended it.
func (it *interrupter) exitCode() (int, bool) {
	it.mu.Lock()
	defer it.mu.Unlock()
	if it.first == 0 {
		return 0, false
	}
	return exitCodeSignal(it.first), true
}

// sigLabel says what a signal means for a run, for results.json's
// interrupted_by and the reports.
func sigLabel(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT (Ctrl-C)"
	case syscall.SIGHUP:
		return "SIGHUP (the terminal or SSH session closed)"
	case syscall.SIGPIPE:
		return "SIGPIPE (its output went away)"
	}
	return sigName(sig)
}

// sigName names a signal as people type it: SIGINT, not "interrupt".
func sigName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	case syscall.SIGKILL:
		return "SIGKILL"
	}
	return sig.String()
}

// bestEffortWriter writes to a terminal, pipe or file until the first
// write fails because the other end went away (EPIPE: the reader of a pipe
// exited; EIO: the terminal hung up); from then on it discards, reports
// success, and calls gone once. A printer must never stop a cleanup
// because nobody reads it any more.
type bestEffortWriter struct {
	mu   sync.Mutex
	w    io.Writer
	lost bool
	gone func()
}

func newBestEffortWriter(w io.Writer, gone func()) *bestEffortWriter {
	return &bestEffortWriter{w: w, gone: gone}
}

func (b *bestEffortWriter) Write(p []byte) (int, error) {
	b.mu.Lock()
	if b.lost {
		b.mu.Unlock()
		return len(p), nil
	}
	n, err := b.w.Write(p)
	if err == nil || !outputLost(err) {
		b.mu.Unlock()
		return n, err
	}
	b.lost = true
	b.mu.Unlock()
	if b.gone != nil {
		b.gone()
	}
	return len(p), nil
}

// outputLost tells a reader or terminal that went away from other write
// errors (a full disk must still be reported).
func outputLost(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.EIO) || errors.Is(err, os.ErrClosed)
}
