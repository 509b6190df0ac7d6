package steps

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/dpulab/dpulab/runner"
)

// A run leaves things on its hosts in one place: its working directory
// (/tmp/dpulab-LAB-RUN-NONCE: configs, sockets, logs, the uploaded dpulab)
// and the processes started from it, whose group leaders carry that path on
// their command lines from the instant they exist. So the path is recorded
// in saved progress, with every host it is used on, before anything is
// created there; whatever later happens to this process (Ctrl-C, SIGKILL,
// a lost pid), a later cleanup can end every process group carrying the
// path and remove the directory. Recorded pids stay the first means
// (stopProcs); the marker catches what a pid could not.

// StaleRun is an earlier run of the lab whose cleanup did not finish (it
// was killed, or a host was unreachable): its working directory and the
// hosts it may be on. The next run of the lab cleans it up first.
type StaleRun struct {
	Workdir string   `json:"workdir"`
	Hosts   []string `json:"hosts"`
}

// noteHost records, before anything is made there, that this run uses
// host: saved progress then lists it for a later cleanup.
func (e *Engine) noteHost(name string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if slices.Contains(e.state.Hosts, name) {
		return nil
	}
	e.state.Hosts = append(e.state.Hosts, name)
	return e.saveStateLocked()
}

// touched reports whether this run, or an earlier one left to clean up,
// may have left something on host.
func (e *Engine) touchedLocked(host string) bool {
	if slices.Contains(e.state.Hosts, host) {
		return true
	}
	for _, p := range e.state.Procs {
		if p.Host == host {
			return true
		}
	}
	for _, s := range e.state.Stale {
		if slices.Contains(s.Hosts, host) {
			return true
		}
	}
	return false
}

// cleanStaleOnce cleans up after earlier runs that did not, before this
// run's first step: servers they left would hold the ports this run needs.
func (e *Engine) cleanStaleOnce(ctx context.Context, step string) {
	e.mu.Lock()
	if e.staleDone {
		e.mu.Unlock()
		return
	}
	e.staleDone = true
	inherited := e.inherited
	stale := slices.Clone(e.state.Stale)
	paths := len(e.state.Paths)
	e.mu.Unlock()
	if len(inherited) > 0 {
		// Recorded servers of the earlier run: stopped by pid.
		if err := e.stopProcs(ctx, func(p runner.Proc) bool { return inherited[procKey(p)] }, false); err != nil {
			e.say(step, "", "could not stop what an earlier run started: %v", err)
		}
	}
	if paths > 0 {
		// Emulated paths of the earlier run: their servers were stopped
		// above; the namespaces, links and tables go now.
		if err := e.teardownPaths(ctx, step); err != nil {
			e.say(step, "", "could not remove a network path an earlier run made: %v", err)
		}
	}
	for _, s := range stale {
		left := e.sweep(ctx, step, s.Workdir, s.Hosts)
		e.mu.Lock()
		// A launch of that dead run may still be under way (its launcher
		// outlives a SIGKILL of dpulab by a few milliseconds): deploy
		// looks again when a port it needs answers.
		e.swept = append(e.swept, s.Workdir)
		e.state.Stale = slices.DeleteFunc(e.state.Stale, func(x StaleRun) bool { return x.Workdir == s.Workdir })
		if len(left) > 0 {
			e.state.Stale = append(e.state.Stale, StaleRun{Workdir: s.Workdir, Hosts: left})
		}
		_ = e.saveStateLocked()
		e.mu.Unlock()
	}
}

func procKey(p runner.Proc) string { return fmt.Sprintf("%s/%d/%s", p.Host, p.PID, p.LogFile) }

// sweepRun ends every process this run started from its working directory
// (recorded or not) and removes the directory, on every host it used;
// hosts where that failed stay recorded.
func (e *Engine) sweepRun(ctx context.Context, step string) {
	e.mu.Lock()
	hosts := slices.Clone(e.state.Hosts)
	e.mu.Unlock()
	left := e.sweep(ctx, step, e.workdir(), hosts)
	e.mu.Lock()
	e.state.Hosts = left
	e.workdirMade = nil
	e.prepared = nil
	_ = e.saveStateLocked()
	e.mu.Unlock()
}

// sweep ends the process groups carrying dir on each host and removes dir
// there, in parallel; it returns the hosts where it could not. A host with
// a recorded server that could not be stopped keeps dir (its log is there).
func (e *Engine) sweep(ctx context.Context, step, dir string, hosts []string) []string {
	e.mu.Lock()
	busy := map[string]bool{}
	for _, p := range e.state.Procs {
		busy[p.Host] = true
	}
	e.mu.Unlock()
	var mu sync.Mutex
	left := map[string]bool{}
	var wg sync.WaitGroup
	for _, n := range hosts {
		if busy[n] {
			e.say(step, n, "kept %s: a server there could not be stopped, and its log is there; %s", dir, e.leftover(n, dir))
			left[n] = true
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := e.sweepHost(ctx, step, n, dir); err != nil {
				e.say(step, n, "could not clean up: %v; %s; the next run of this lab tries again", err, e.leftover(n, dir))
				mu.Lock()
				left[n] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return slices.Sorted(maps.Keys(left))
}

func (e *Engine) sweepHost(ctx context.Context, step, host, dir string) error {
	t, err := e.hosts.target(ctx, host)
	if err != nil {
		return err
	}
	n, err := runner.StopMarked(ctx, t, dir, stopGrace, false)
	if err != nil {
		return fmt.Errorf("stop processes started in %s: %w", dir, err)
	}
	if n > 0 {
		e.say(step, host, "stopped %d process group(s) left running from %s", n, dir)
	}
	res, err := t.Run(ctx, runner.Command{Cmd: "rm -rf -- " + runner.Quote(dir), Timeout: time.Minute})
	if err != nil || res.ExitCode != 0 {
		return fmt.Errorf("remove %s: %v", dir, errOr(err, res))
	}
	return nil
}

// say emits an engine line on step's output.
func (e *Engine) say(step, host, format string, args ...any) {
	e.opts.Emit(Output{Step: step, Line: runner.Line{Host: host, Text: fmt.Sprintf(format, args...), Time: time.Now()}})
}

// Leftover is a run's working directory that may still be on a host,
// with processes started from it, because its cleanup did not finish
// there (the host was unreachable, cleanup timed out or was abandoned).
type Leftover struct {
	// Host is the host's name in the inventory ("local": this machine).
	Host string `json:"host"`
	// Dir is the working directory.
	Dir string `json:"workdir"`
	// Reach is the ssh command that gets a shell on Host, every value
	// quoted; "" for this machine.
	Reach string `json:"reach,omitempty"`
}

// Remove is the shell command that removes l by hand on its host: it ends
// the processes started from the directory (their command lines carry
// its path), then removes it. Every value is shell-quoted. Typed at the
// host's shell, not passed to ssh as one command: pkill -f would match
// that command's own shell too.
func (l Leftover) Remove() string {
	q := runner.Quote(l.Dir)
	return "pkill -f -- " + q + "; rm -rf -- " + q
}

// String says where l is and how to remove it by hand, in one line.
func (l Leftover) String() string {
	if l.Reach == "" {
		return fmt.Sprintf("%s may be left on this machine (%s), with processes started from it; remove it by hand with: %s", l.Dir, l.Host, l.Remove())
	}
	return fmt.Sprintf("%s may be left on %s, with processes started from it; remove it by hand: %s, then: %s", l.Dir, l.Host, l.Reach, l.Remove())
}

// Leftovers lists what this run, and earlier runs of the lab it was to
// clean up after, may have left on their hosts, as saved progress records
// it: every host this run used until its cleanup has swept it, and every
// earlier run's directory not yet swept. Empty once cleanup has finished
// everywhere. Safe to call from another goroutine while cleanup runs (a
// signal abandoning it).
func (e *Engine) Leftovers() []Leftover {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Leftover
	dir := e.workdir()
	for _, h := range e.state.Hosts {
		out = append(out, e.leftover(h, dir))
	}
	for _, s := range e.state.Stale {
		for _, h := range s.Hosts {
			out = append(out, e.leftover(h, s.Workdir))
		}
	}
	return out
}

// leftover is dir on host, with how to reach host from here.
func (e *Engine) leftover(host, dir string) Leftover {
	l := Leftover{Host: host, Dir: dir}
	var inv *runner.Inventory
	if e.hosts != nil {
		inv = e.hosts.inv
	}
	if inv == nil {
		return l
	}
	h, ok := inv.Host(host)
	if !ok || h.IsLocal() {
		return l
	}
	args := []string{"ssh"}
	if h.ProxyJump != "" {
		args = append(args, "-J", h.ProxyJump)
	}
	if h.Port != 0 {
		args = append(args, "-p", fmt.Sprint(h.Port))
	}
	dest := h.Address
	if dest == "" {
		dest = h.Name
	}
	if h.User != "" {
		dest = h.User + "@" + dest
	}
	l.Reach = runner.QuoteAll(append(args, dest)...)
	return l
}
