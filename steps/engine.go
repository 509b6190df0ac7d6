package steps

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dpulab/dpulab/steps/kinds/load"
	"github.com/dpulab/dpulab/steps/results"

	"github.com/dpulab/dpulab/internal/suggest"
	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/runner/netpath"
	stepkind "github.com/dpulab/dpulab/steps/kind"
)

// Options configure a run of a lab. The zero value runs every role on this
// machine, asks before confirm steps, and saves progress and results in
// their default places.
type Options struct {
	// Inventory maps roles to hosts; nil means every role is this machine.
	Inventory *runner.Inventory
	// Vars are --set overrides, checked against the lab's variables.
	Vars map[string]string
	// Yes answers confirm prompts with yes (headless runs).
	Yes bool
	// DryRun plans every step (commands, hosts, sudo) and runs nothing,
	// saves nothing and writes no results.
	DryRun bool
	// From starts at this step id; Only runs just this step. Both ignore
	// saved progress.
	From, Only string
	// Restart ignores saved progress (what an earlier run deployed is
	// still stopped by cleanup).
	Restart bool
	// Rehearse runs the lab without the hardware it is about: its
	// hardware checks (labs.Step.Hardware) are skipped with a note, no TCO
	// is estimated, and every output says REHEARSAL. A run whose compared
	// roles land on one host is a rehearsal without being asked.
	Rehearse bool
	// ResultsDir is where results go (default DefaultResultsRoot()/LAB/
	// TIMESTAMP, or the folder of the run being resumed).
	ResultsDir string
	// StateDir holds saved progress (default $XDG_STATE_HOME/dpulab).
	StateDir string
	// Emit receives every event, from engine goroutines; it must not block
	// long. A Prompt must be answered by calling its Reply.
	Emit func(Event)
	// AcceptNewHostKeys trusts (and saves) unknown host keys without
	// asking, like OpenSSH's accept-new. A changed key is always refused.
	AcceptNewHostKeys bool
	// Binary is the dpulab executable that runs `dpulab server|bench|
	// sample` on this machine (default: the running executable). Lab
	// hosts get the dpulab agent for their platform instead (Agents);
	// tests that set Binary get it uploaded as it is, for their own
	// platform.
	Binary string
	// Agents finds the dpulab agent for a lab host's platform (default: a
	// runner.AgentFinder looking next to this executable, building from
	// source when run from a checkout, then in the user's cache).
	Agents *runner.AgentFinder
	// CleanupTimeout bounds cleanup after an abort (default 2 minutes).
	CleanupTimeout time.Duration
	// Targets, when set, gives the engine the Target of each host (by
	// inventory name, "local" for this machine) instead of the local and
	// SSH targets it would make: the seam through which a step kind is
	// unit-tested against a fake target. Roles still map to hosts through
	// the inventory.
	Targets func(host string) (runner.Target, error)
	// SysfsRoot is where the software RDMA probe reads sysfs on every host
	// (default /sys; softrdma.go): tests point it at a made-up tree.
	SysfsRoot string

	// warn reports what resolving hosts went past (an ssh config block it
	// could not read); set by New.
	warn func(msg string)
}

// Engine runs one lab. Its methods are safe to call from the TUI's
// goroutine while a step runs in another, but steps run one at a time.
type Engine struct {
	lab   *labs.Lab
	opts  Options
	vars  map[string]string
	runID string

	// cpus and pathProbe cache, per host, its CPU count and which
	// emulated paths it can make (both asked once per run); under mu.
	cpus      map[string]int
	pathProbe map[string]netpath.Report
	// rdmaDevs caches each host's RDMA devices (softrdma.go), rdmaHosts
	// the hosts of RDMA benches in the order they were probed; under mu.
	rdmaDevs  map[string][]load.RDMADevice
	rdmaHosts []string

	statePath string

	// runMu makes steps run one at a time.
	runMu sync.Mutex

	mu      sync.Mutex
	state   *State
	session []results.Status // status of each step in this process (Pending = not touched)
	// last is each step's last finish in this process (zero: not run here).
	last []StepFinished
	// interrupted is set when a step or the run was stopped by its context
	// (Ctrl-C, a signal, the TUI's quit); interruptedStep names the step.
	interrupted     bool
	interruptedStep string
	// interruptedBy says what stopped the run (a signal's name, "q in the
	// TUI"): the context's cause (Interruption) or Leave's word.
	interruptedBy string
	// left is set when the person or a signal ended the run between
	// steps, before its last one (Leave): it is interrupted, not merely
	// incomplete.
	left bool
	// ranHere is set once a step other than cleanup ran in this process;
	// finalized once Finish wrote the results and no step ran since.
	ranHere, finalized bool
	results            *results.Results
	resDir             string
	hosts              *hostPool
	// prepared maps a host to its dpulab path once its working directory
	// exists (and dpulab is uploaded there).
	prepared map[string]string
	// agents finds the dpulab agent for lab hosts (agentFinder).
	agents *runner.AgentFinder
	// workdirMade marks hosts whose working directory exists.
	workdirMade map[string]bool
	// depChecked marks groups deployed or found answering in this process.
	depChecked map[string]bool
	// inherited are the recorded processes of the earlier run this one
	// replaced (by procKey); staleDone is set once they and the stale runs
	// have been cleaned up (before the first step).
	inherited map[string]bool
	staleDone bool
	// swept are the working directories of earlier runs cleaned up in this
	// process.
	swept []string
	// announced is set once the inventory's warnings were said.
	announced bool
	// rehearsalNotes say which variables a rehearsal set, said once.
	rehearsalNotes []string
	// vc is the run's vCenter session (steps/vsphere.go).
	vc vcenterConn
	// deployWait bounds deploy's wait for its servers (deploy_wait.go);
	// zero for the defaults, shorter in tests.
	deployWait waitLimits
}

// StepError is why a step failed: the host and command that failed, and
// the command's last lines of output.
type StepError = stepkind.StepError

// errSkipped reports that a step decided not to run (skip_if held).
var errSkipped = stepkind.ErrSkipped

// New prepares a run of lab: it checks the variables, loads saved progress
// (unless Restart) and decides where results go. It connects to nothing.
func New(lab *labs.Lab, opts Options) (*Engine, error) {
	if lab == nil {
		return nil, errors.New("no lab given")
	}
	if len(lab.Steps) == 0 {
		return nil, fmt.Errorf("lab %s has no steps", lab.ID)
	}
	n := len(lab.Steps)
	e := &Engine{lab: lab, opts: opts, session: make([]results.Status, n), last: make([]StepFinished, n)}
	if e.opts.Emit == nil {
		e.opts.Emit = func(Event) {}
	}
	if e.opts.CleanupTimeout <= 0 {
		e.opts.CleanupTimeout = 2 * time.Minute
	}
	for _, id := range []string{opts.From, opts.Only} {
		if id != "" && lab.Step(id) == nil {
			return nil, fmt.Errorf("lab %s has no step %q (steps: %s)", lab.ID, id, strings.Join(stepIDs(lab), ", "))
		}
	}
	if opts.From != "" && opts.Only != "" {
		return nil, errors.New("give --from or --only, not both")
	}
	stateDir := opts.StateDir
	if stateDir == "" {
		d, err := DefaultStateDir()
		if err != nil {
			return nil, err
		}
		stateDir = d
	}
	p, err := StatePath(stateDir, lab.ID)
	if err != nil {
		return nil, err
	}
	e.statePath = p
	if !opts.DryRun {
		if err := lockLab(p); err != nil {
			return nil, err
		}
	}
	old, err := LoadState(p)
	if err != nil && !opts.Restart {
		return nil, err
	}
	fresh := old == nil || opts.Restart || old.Finished() || old.allFinished(lab)
	if fresh {
		e.state = &State{Lab: lab.ID, Started: time.Now().UTC(), Steps: map[string]StepState{}}
		e.state.RunID = newRunID(e.state.Started)
		e.state.Workdir = newWorkdir(lab.ID, e.state.RunID)
		if old != nil {
			// Whatever an earlier run started or left is still ours to
			// stop and remove, before this run needs its ports.
			e.state.Procs = old.Procs
			e.inherited = map[string]bool{}
			for _, p := range old.Procs {
				e.inherited[procKey(p)] = true
			}
			e.state.Stale = old.Stale
			e.state.Paths = old.Paths
			if old.Workdir != "" && len(old.Hosts) > 0 {
				e.state.Stale = append(e.state.Stale, StaleRun{Workdir: old.Workdir, Hosts: old.Hosts})
			}
		}
	} else {
		e.state = old
	}
	e.runID = e.state.RunID

	vars, err := resolveVars(lab, e.state.Vars, opts.Vars)
	if err != nil {
		return nil, err
	}
	if opts.Rehearse {
		e.rehearsalNotes = rehearsalVars(lab, vars, e.state.Vars, opts.Vars)
	}
	e.vars = vars
	e.state.Vars = redactVars(vars, true)

	switch {
	case opts.ResultsDir != "":
		e.resDir = opts.ResultsDir
	case !fresh && e.state.ResultsDir != "":
		e.resDir = e.state.ResultsDir
	default:
		root, err := DefaultResultsRoot()
		if err != nil {
			return nil, err
		}
		e.resDir = filepath.Join(root, lab.ID, e.runID)
	}
	if abs, err := filepath.Abs(e.resDir); err == nil {
		e.resDir = abs
	}
	if !opts.DryRun {
		if err := checkResultsDir(e.resDir); err != nil {
			return nil, err
		}
	}
	e.state.ResultsDir = e.resDir
	if !fresh {
		if r, err := results.LoadResults(e.resDir); err == nil && r.Lab == lab.ID {
			e.results = r
			newAttempt(r, time.Now().UTC())
		}
	} else if old != nil {
		markKilled(old.ResultsDir, e.resDir)
	}
	if e.results == nil {
		e.results = &results.Results{Version: results.ResultsVersion, Lab: lab.ID, Title: lab.Title, RunID: e.runID, Started: e.state.Started}
	}
	e.results.Variables = redactVars(vars, false)
	e.results.References = nil
	for _, r := range lab.References {
		e.results.References = append(e.results.References, results.Reference{Label: r.Label, Value: r.Value, Source: r.Source, Step: r.Step})
	}
	e.opts.warn = func(msg string) {
		e.opts.Emit(Output{Line: runner.Line{Text: "warning: " + msg, Time: time.Now()}})
	}
	hp, err := newHostPool(lab, e.opts, e.prompter())
	if err != nil {
		return nil, err
	}
	e.hosts = hp
	e.results.Hosts = hp.hostInfos()
	e.results.Rehearsal, e.results.RehearsalReason = false, ""
	if why := e.rehearsalReason(); why != "" {
		e.results.Rehearsal, e.results.RehearsalReason = true, why
	}
	return e, nil
}

func stepIDs(lab *labs.Lab) []string {
	ids := make([]string, len(lab.Steps))
	for i, s := range lab.Steps {
		ids[i] = s.ID
	}
	return ids
}

// newRunID names a run by its start time; it also names the results folder.
func newRunID(t time.Time) string { return t.UTC().Format("20060102T150405Z") }

// allFinished reports whether every step of lab is done or skipped: such a
// lab starts over on the next run instead of resuming past its end.
func (s *State) allFinished(lab *labs.Lab) bool {
	for _, st := range lab.Steps {
		ss, ok := s.Steps[st.ID]
		if !ok || (ss.Status != results.Done && ss.Status != results.Skipped) {
			return false
		}
	}
	return true
}

// Lab returns the lab being run.
func (e *Engine) Lab() *labs.Lab { return e.lab }

// Vars returns the run's variables (defaults, saved, then --set).
func (e *Engine) Vars() map[string]string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[string]string, len(e.vars))
	for k, v := range e.vars {
		out[k] = v
	}
	return out
}

// SetVars changes variables between steps (the TUI's variables form); the
// values are checked like --set.
func (e *Engine) SetVars(set map[string]string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	v, err := resolveVars(e.lab, e.vars, set)
	if err != nil {
		return err
	}
	e.vars = v
	e.state.Vars = redactVars(v, true)
	e.results.Variables = redactVars(v, false)
	return e.saveStateLocked()
}

// RunID names this run (also the default results folder's last part).
func (e *Engine) RunID() string { return e.runID }

// ResultsDir is where Finish writes.
func (e *Engine) ResultsDir() string { return e.resDir }

// StatePath is the saved progress file.
func (e *Engine) StatePath() string { return e.statePath }

// Steps lists the lab's steps with their status: this session's when the
// step ran here, else the saved one.
func (e *Engine) Steps() []StepInfo {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]StepInfo, len(e.lab.Steps))
	for i := range e.lab.Steps {
		s := &e.lab.Steps[i]
		out[i] = StepInfo{ID: s.ID, Title: s.Title, Kind: string(s.Kind), Status: e.statusLocked(i)}
		if out[i].Status == results.Failed {
			if f := e.last[i]; f.Status == results.Failed {
				out[i].Failure = &Failure{Err: f.Err, Host: f.Host, Cmd: f.Cmd, Hint: f.Hint, Tail: f.Tail}
			} else if ss := e.state.Steps[s.ID]; ss.Err != "" {
				out[i].Failure = &Failure{Err: ss.Err, Host: ss.Host, Cmd: ss.Cmd, Hint: ss.Hint, Tail: ss.Tail, Earlier: true}
			}
		}
	}
	return out
}

func (e *Engine) statusLocked(i int) results.Status {
	if e.session[i] != results.Pending {
		return e.session[i]
	}
	return e.state.Steps[e.lab.Steps[i].ID].Status
}

// Resume is the index of the first step to run: --only's or --from's step,
// else the first step that has not finished (done or skipped). A cleanup
// step is never a resume point: cleanup runs at the end anyway.
func (e *Engine) Resume() int {
	if id := e.opts.Only; id != "" {
		return e.index(id)
	}
	if id := e.opts.From; id != "" {
		return e.index(id)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, s := range e.lab.Steps {
		if s.Kind == labs.KindCleanup {
			continue
		}
		st := e.statusLocked(i)
		if st != results.Done && st != results.Skipped {
			return i
		}
	}
	return len(e.lab.Steps)
}

func (e *Engine) index(id string) int {
	for i, s := range e.lab.Steps {
		if s.ID == id {
			return i
		}
	}
	return -1
}

// Skip marks step i skipped (the person chose to) and saves progress.
func (e *Engine) Skip(i int) {
	if i < 0 || i >= len(e.lab.Steps) {
		return
	}
	st := &e.lab.Steps[i]
	e.mu.Lock()
	e.session[i] = results.Skipped
	e.state.Steps[st.ID] = StepState{Status: results.Skipped, Finished: time.Now().UTC()}
	err := e.saveStateLocked()
	e.mu.Unlock()
	ev := StepFinished{Step: st.ID, Index: i, Status: results.Skipped}
	if err != nil {
		ev.Err = err.Error()
	}
	e.opts.Emit(ev)
}

// Results returns a snapshot of the results so far, safe to read while a
// step keeps running.
func (e *Engine) Results() *results.Results {
	e.mu.Lock()
	defer e.mu.Unlock()
	r := *e.results
	r.Hosts = append([]results.HostInfo(nil), e.results.Hosts...)
	r.Variables = make(map[string]string, len(e.results.Variables))
	for k, v := range e.results.Variables {
		r.Variables[k] = v
	}
	r.Benches = make([]results.Compare, len(e.results.Benches))
	for i, c := range e.results.Benches {
		r.Benches[i] = load.CloneCompare(c)
	}
	if e.results.TCO != nil {
		t := *e.results.TCO
		r.TCO = &t
	}
	r.References = append([]results.Reference(nil), e.results.References...)
	return &r
}

// saveStateLocked writes progress; dry runs save nothing.
func (e *Engine) saveStateLocked() error {
	if e.opts.DryRun {
		return nil
	}
	return e.state.Save(e.statePath)
}

// writeResultsLocked writes the results folder now (after every finished
// bench run, so a killed run keeps what it measured, marked as running;
// final at Finish).
func (e *Engine) writeResultsLocked(final bool) error {
	if e.opts.DryRun {
		return nil
	}
	e.outcomeLocked(final)
	e.results.MarkWriter()
	e.results.Finished = time.Now().UTC()
	return results.WriteResults(e.resDir, e.results)
}

// RunStep runs step i (again, for a retry) and returns how it ended. It
// emits StepStarted, the step's output, and StepFinished, and saves
// progress. In a dry run it only plans the step.
func (e *Engine) RunStep(ctx context.Context, i int) results.Status {
	if i < 0 || i >= len(e.lab.Steps) {
		return results.Failed
	}
	e.runMu.Lock()
	defer e.runMu.Unlock()
	st := &e.lab.Steps[i]
	// The step is resolved once: the commands announced are the ones run.
	plan, planErr := e.resolve(st, e.Vars())
	var cmds []PlannedCommand
	if planErr == nil {
		cmds = plan.commands()
	}
	e.mu.Lock()
	e.session[i] = results.Running
	if st.Kind != labs.KindCleanup {
		e.ranHere = true
		e.finalized = false
	}
	e.mu.Unlock()
	e.opts.Emit(StepStarted{Step: st.ID, Index: i, Commands: cmds})
	start := time.Now()
	var err error
	switch {
	case planErr != nil:
		err = planErr
	case e.opts.DryRun:
		err = errSkipped
	case st.Hardware && e.opts.Rehearse:
		if r, ok := rehearserOf(plan); ok {
			// vCenter is asked all the same: what it says is a note.
			e.announce()
			err = r.Rehearse(ctx)
			break
		}
		e.say(st.ID, "", "REHEARSAL: hardware check not run (%s)", e.Rehearsal())
		err = errSkipped
	default:
		e.announce()
		e.cleanStaleOnce(ctx, st.ID)
		if err = e.confirmStep(ctx, st); err == nil {
			err = plan.run(ctx)
		}
	}
	status := results.Done
	fin := StepFinished{Step: st.ID, Index: i}
	switch {
	case errors.Is(err, errSkipped):
		status = results.Skipped
	case err != nil:
		status = results.Failed
		aborted := ctx.Err() != nil && !errors.Is(err, context.DeadlineExceeded)
		if aborted {
			status = results.Interrupted
			err = fmt.Errorf("interrupted: %w", err)
		}
		fin.Err = err.Error()
		var se *StepError
		if errors.As(err, &se) && se.Host != "" {
			fin.Host = se.Host
			fin.Cmd = se.Cmd
			fin.Tail = se.Tail
			// The host is its own field: say it once.
			fin.Err = strings.Replace(fin.Err, "on "+se.Host+": ", "", 1)
		}
		// A connection or sudo failure has a cause of its own, and the
		// step's hint (written for the step's commands) would mislead.
		if h := runner.Hint(err); h != "" {
			fin.Hint = h
		} else if h := ownHint(err); h != "" {
			fin.Hint = h
		} else if !aborted {
			fin.Hint = st.Hint
			if st.Hardware {
				fin.Hint = strings.TrimSpace(fin.Hint + " This checks the hardware the lab is about, so the run stops here. To rehearse the lab without it, run it with --rehearse: the hardware checks are skipped and every number is labelled REHEARSAL.")
			}
		}
		if aborted {
			e.mu.Lock()
			e.interrupted, e.interruptedStep = true, st.ID
			if by := interruptedBy(ctx); by != "" {
				e.interruptedBy = by
			}
			e.mu.Unlock()
		}
	}
	fin.Status = status
	fin.Duration = time.Since(start)
	e.mu.Lock()
	e.session[i] = status
	e.last[i] = fin
	if !e.opts.DryRun {
		ss := StepState{Status: status, Finished: time.Now().UTC()}
		if err != nil && status == results.Failed {
			// What the person needs to see the failure again when
			// the lab is reopened (the TUI) or resumed.
			ss.Err, ss.Host, ss.Cmd, ss.Hint, ss.Tail = fin.Err, fin.Host, fin.Cmd, fin.Hint, fin.Tail
		}
		e.state.Steps[st.ID] = ss
		if serr := e.saveStateLocked(); serr != nil && fin.Err == "" {
			fin.Err = "progress not saved: " + serr.Error()
		}
	}
	e.mu.Unlock()
	e.opts.Emit(fin)
	return status
}

// Run runs the lab headless: from Resume to the end (or just --only's
// step), stopping at the first failure, then cleanup (always, on a fresh
// context when ctx was cancelled), then results. The error says which step
// failed and why.
func (e *Engine) Run(ctx context.Context) error {
	start := time.Now()
	resume := e.Resume()
	started := LabStarted{Lab: e.lab.ID, Title: e.lab.Title, RunID: e.runID, Steps: e.Steps(), Resume: resume, DryRun: e.opts.DryRun, Rehearsal: e.Rehearsal(), SoftwareRDMA: e.SoftwareRDMA()}
	if !e.opts.DryRun {
		started.ResultsDir = e.resDir
	}
	e.opts.Emit(started)
	e.announce()
	var runErr error
	if !e.opts.DryRun {
		// Every command is rendered with the run's variables before the
		// first step: a value the lab's quoting refuses (a NUL, a line that
		// would end a here-document) fails the run now, not after a
		// deployment and an hour of benchmarks.
		runErr = e.preflight(resume)
	}
	for i := resume; i < len(e.lab.Steps) && (runErr == nil || e.opts.DryRun); i++ {
		st := &e.lab.Steps[i]
		if e.opts.Only != "" && st.ID != e.opts.Only {
			break
		}
		// Cleanup steps run in Cleanup, at the end, whatever happened.
		if st.Kind == labs.KindCleanup && e.opts.Only == "" {
			continue
		}
		if ctx.Err() != nil {
			e.mu.Lock()
			e.interrupted = true
			if by := interruptedBy(ctx); by != "" {
				e.interruptedBy = by
			}
			e.mu.Unlock()
			runErr = fmt.Errorf("aborted before step %s: %w", st.ID, ctx.Err())
			break
		}
		if got := e.RunStep(ctx, i); got == results.Failed || got == results.Interrupted {
			e.mu.Lock()
			msg, host := e.last[i].Err, e.last[i].Host
			e.mu.Unlock()
			if msg == "" {
				msg = "failed"
			}
			if host != "" {
				msg = "on " + host + ": " + msg
			}
			err := fmt.Errorf("step %s (%s) failed: %s", st.ID, st.Title, msg)
			if got == results.Interrupted {
				err = fmt.Errorf("step %s (%s) was interrupted: %s", st.ID, st.Title, msg)
			}
			if e.opts.DryRun {
				// A dry run shows every step it can plan.
				runErr = errors.Join(runErr, err)
				continue
			}
			runErr = err
			break
		}
	}
	// Cleanup must run even when ctx was cancelled (Ctrl-C): give it a
	// fresh context of its own, bounded so a dead host cannot hang us.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.opts.CleanupTimeout)
	defer cancel()
	var cleanErr error
	var left []Leftover
	if e.opts.Only == "" || runErr != nil {
		cleanErr = e.Cleanup(cctx)
		// What cleanup could not remove, each said with its host, path
		// and how to remove it by hand (a host unreachable, a timeout).
		// A dry run removes nothing: what earlier runs left is the next
		// real run's to sweep and to say.
		if !e.opts.DryRun {
			left = e.Leftovers()
		}
	}
	dir, finErr := e.Finish(cctx)
	e.hosts.close()
	e.closeVCenter(cctx) // also when Cleanup did not run (--only)
	err := errors.Join(runErr, cleanErr, finErr)
	fin := LabFinished{Lab: e.lab.ID, Status: results.Done, ResultsDir: dir, Duration: time.Since(start), Run: e.RunStatus(), Rehearsal: e.Rehearsal(), SoftwareRDMA: e.SoftwareRDMA(),
		Variants: e.variantSummaries(), Leftovers: left}
	if err != nil {
		fin.Status = results.Failed
		fin.Err = err.Error()
	}
	e.opts.Emit(fin)
	return err
}

// announce says, once, what the inventory held that could not be mapped
// (an Ansible inventory's ansible_password, become settings, ...): the
// person should know what dpulab went past.
func (e *Engine) announce() {
	e.mu.Lock()
	done := e.announced
	e.announced = true
	e.mu.Unlock()
	if done {
		return
	}
	for _, n := range e.rehearsalNotes {
		e.opts.Emit(Output{Line: runner.Line{Text: n, Time: time.Now()}})
	}
	if e.opts.Inventory == nil {
		return
	}
	for _, w := range e.opts.Inventory.Warnings {
		e.opts.Emit(Output{Line: runner.Line{Text: "inventory " + e.opts.Inventory.Path + ": " + w, Time: time.Now()}})
	}
}

// preflight plans the steps the run will take, from resume, and returns
// the first that cannot be planned with the run's variables.
func (e *Engine) preflight(resume int) error {
	for i := resume; i < len(e.lab.Steps); i++ {
		st := &e.lab.Steps[i]
		if e.opts.Only != "" && st.ID != e.opts.Only {
			continue
		}
		if _, err := e.Plan(i); err != nil {
			return &VarError{Err: fmt.Errorf("step %s (%s) cannot run with these variables, so nothing was run: %w", st.ID, st.Title, err)}
		}
	}
	return nil
}

// Cleanup runs the lab's cleanup steps that have not run in this process
// and then stops every process a deploy step started (also ones recorded by
// an earlier, killed run). Deploy steps whose servers it stopped become
// pending again, so a resumed run deploys before it benches. Call it with a
// fresh context after an abort.
func (e *Engine) Cleanup(ctx context.Context) error {
	var errs []error
	for i, st := range e.lab.Steps {
		if st.Kind != labs.KindCleanup {
			continue
		}
		e.mu.Lock()
		ran := e.session[i] == results.Done
		e.mu.Unlock()
		if ran {
			continue
		}
		if got := e.RunStep(ctx, i); got == results.Failed || got == results.Interrupted {
			e.mu.Lock()
			errs = append(errs, fmt.Errorf("cleanup step %s: %s", st.ID, e.last[i].Err))
			e.mu.Unlock()
		}
	}
	if !e.opts.DryRun {
		if err := e.stopAll(ctx); err != nil {
			errs = append(errs, err)
		}
		// Whether or not the lab has a cleanup step, nothing the run
		// started or made is left behind: unrecorded processes (a start
		// interrupted before its pid was known) and the working directory.
		e.cleanStaleOnce(ctx, "")
		e.sweepRun(ctx, "")
	}
	// Connections are reopened on demand if anything runs after this.
	e.hosts.close()
	e.closeVCenter(ctx)
	return errors.Join(errs...)
}

// Finish writes results.json, samples.csv and report.md with the run's
// final status and each step's outcome, records the status in saved
// progress (a complete lab starts over next time), and returns the folder.
// A dry run writes nothing and returns "".
func (e *Engine) Finish(ctx context.Context) (string, error) {
	if e.opts.DryRun {
		return "", nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.state.Status = e.outcomeLocked(true)
	serr := e.saveStateLocked()
	if err := e.writeResultsLocked(true); err != nil {
		return "", errors.Join(err, serr)
	}
	e.finalized = true
	return e.resDir, serr
}

// Leave records that the run ends here, before its end, because the person
// or a signal stopped it (by says how, as a person reads it: "q in the
// TUI", "SIGTERM"), and writes the results with that status, as Finish
// does. A run that already wrote its end (Finish, and no step ran since)
// is left as it was, and so is one in which no step ran in this process:
// opening a lab and closing it makes no results folder. Call it after
// Cleanup; the TUI calls it when the person quits or leaves a lab.
func (e *Engine) Leave(ctx context.Context, by string) (string, error) {
	e.mu.Lock()
	skip := e.finalized || !e.ranHere || e.opts.DryRun
	if !skip {
		e.left = true
		if e.interruptedBy == "" {
			e.interruptedBy = by
		}
	}
	e.mu.Unlock()
	if skip {
		return "", nil
	}
	return e.Finish(ctx)
}

// RunStatus is how the run stands: running until Finish, then how it ended.
func (e *Engine) RunStatus() results.RunStatus {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.results.Status == "" {
		return results.RunRunning
	}
	return e.results.Status
}

// outcomeLocked fills the results' status and step outcomes and returns
// the status. Before the end (final false) the status is "running".
func (e *Engine) outcomeLocked(final bool) results.RunStatus {
	r := e.results
	r.Steps = make([]results.StepOutcome, len(e.lab.Steps))
	r.FailedStep, r.Error = "", ""
	complete := true
	for i, st := range e.lab.Steps {
		o := results.StepOutcome{ID: st.ID, Title: st.Title, Kind: string(st.Kind), Status: e.statusLocked(i)}
		if o.Status == results.Failed {
			o.Error, o.Host = e.last[i].Err, e.last[i].Host
			if o.Error == "" {
				saved := e.state.Steps[st.ID]
				o.Error, o.Host = saved.Err, saved.Host
			}
			if r.FailedStep == "" {
				r.FailedStep, r.Error = st.ID, o.Error
				if o.Host != "" {
					r.Error = "on " + o.Host + ": " + r.Error
				}
			}
		}
		if d := e.last[i].Duration; d > 0 {
			o.DurationSeconds = d.Seconds()
		}
		if o.Status != results.Done && o.Status != results.Skipped {
			complete = false
		}
		r.Steps[i] = o
	}
	r.InterruptedBy = ""
	switch {
	case !final:
		r.Status = results.RunRunning
	case e.interrupted:
		r.Status = results.RunInterrupted
		r.FailedStep, r.Error = e.interruptedStep, ""
		r.InterruptedBy = e.interruptedBy
	case r.FailedStep != "":
		r.Status = results.RunFailed
	case complete:
		r.Status = results.RunComplete
	case e.left:
		// Stopped between steps by the person or a signal.
		r.Status = results.RunInterrupted
		r.InterruptedBy = e.interruptedBy
	default:
		r.Status = results.RunIncomplete
	}
	return r.Status
}

// resolveVars merges the lab's defaults, saved values and overrides, and
// checks each override against its variable.
func resolveVars(lab *labs.Lab, saved, set map[string]string) (map[string]string, error) {
	out := map[string]string{}
	for _, v := range lab.Variables {
		out[v.Name] = v.Default
	}
	for k, v := range saved {
		if _, ok := lab.Var(k); ok {
			out[k] = v
		}
	}
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(set)) {
		val := set[k]
		def, ok := lab.Var(k)
		if !ok {
			names := make([]string, len(lab.Variables))
			for i, v := range lab.Variables {
				names[i] = v.Name
			}
			sort.Strings(names)
			hint := ""
			if s := suggest.Closest(k, names); s != "" {
				hint = fmt.Sprintf("did you mean %s? ", s)
			}
			errs = append(errs, fmt.Errorf("--set %s: lab %s has no variable %q (%sit has: %s)", k, lab.ID, k, hint, strings.Join(names, ", ")))
			continue
		}
		if err := def.Check(val); err != nil {
			errs = append(errs, fmt.Errorf("--set: %w", err))
			continue
		}
		out[k] = val
	}
	if len(errs) > 0 {
		return out, &VarError{Err: errors.Join(errs...)}
	}
	return out, nil
}

// VarError is a variable override (--set, the TUI's form) the lab refuses:
// an unknown name or a value its type or range does not take. The command
// line reports it as a usage error (exit status 2).
type VarError struct{ Err error }

func (e *VarError) Error() string { return e.Err.Error() }
func (e *VarError) Unwrap() error { return e.Err }

// workdir is the lab's working directory on every host, stable across a
// resumed run (it holds configs, sockets and server logs).
func (e *Engine) workdir() string {
	if e.state.Workdir != "" {
		return e.state.Workdir
	}
	// Progress saved before the directory had a nonce.
	return "/tmp/dpulab-" + e.lab.ID + "-" + strings.ToLower(e.runID)
}

// newWorkdir names a run's working directory: lab, run and a random
// nonce, short enough that Unix socket paths under it stay within the
// 107 bytes Linux allows.
func newWorkdir(lab, runID string) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return "/tmp/dpulab-" + lab + "-" + strings.ToLower(runID) + "-" + hex.EncodeToString(b[:])
}

// emitOutput forwards a command's output line as an event.
func (e *Engine) emitOutput(step string) func(runner.Line) {
	return func(l runner.Line) { e.opts.Emit(Output{Step: step, Line: l}) }
}

// binaryPath is the local dpulab executable.
func (e *Engine) binaryPath() (string, error) {
	if e.opts.Binary != "" {
		return e.opts.Binary, nil
	}
	p, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the dpulab executable: %w", err)
	}
	return p, nil
}
