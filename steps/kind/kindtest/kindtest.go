// Package kindtest is a fake kind.Env for a step kind's tests: hosts that
// run nothing (they record what a kind asks and answer through a
// function), output and results kept for the test to read, a clock that
// never waits. With it a kind's plan and run are tested in milliseconds,
// with no sshd and no engine; the engine's end-to-end tests stay beside.
package kindtest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/labs/tco"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/event"
	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/results"
)

// Lab parses a lab from lab.yaml text (and other files of the lab dir),
// failing the test on any problem.
func Lab(t testing.TB, labYAML string, files map[string]string) *labs.Lab {
	t.Helper()
	fsys := fstest.MapFS{"lab/lab.yaml": {Data: []byte(labYAML)}}
	for n, body := range files {
		fsys["lab/"+n] = &fstest.MapFile{Data: []byte(body)}
	}
	l, probs := labs.Parse(fsys, "lab", "lab.yaml")
	if len(probs) > 0 {
		t.Fatalf("lab does not parse: %v", probs)
	}
	return l
}

// Line is a line of a step's output: a command's (Said false) or
// dpulab's own.
type Line struct {
	Step, Host, Text string
	Said             bool
}

// Env is a fake kind.Env. Make it with New; the zero Roles map every role
// to one host, "h1".
type Env struct {
	L *labs.Lab
	// Roles maps a role to its hosts.
	Roles map[string][]kind.Host
	// Targets are the hosts' targets, made on first use.
	Targets map[string]*Target
	// Handle answers every target's commands (nil: all succeed silently).
	Handle func(host, cmd string) (out []string, code int)
	// Why makes the run a rehearsal.
	Why string
	// Hold makes After never fire: a step waiting on the clock ends only
	// by its context.
	Hold bool
	// Ticking makes the clock move on by each After's d, when it fires:
	// a kind that waits sees time pass only as fast as it waits, and a
	// test of a minutes-long wait takes no time.
	Ticking bool
	// Compares are the compare results Compare returns.
	Compares map[string]*results.Compare

	mu       sync.Mutex
	lines    []Line
	events   []event.Live
	recorded map[string][]string // step/host/format -> stdout
	tco      *tco.Estimate
	stopped  int
	removed  []string
	waited   []time.Duration
	elapsed  time.Duration
}

var (
	_ kind.Env      = (*Env)(nil)
	_ event.Emitter = (*Env)(nil)
)

// New is an Env for lab l whose every role is played by the named hosts.
func New(l *labs.Lab, hosts ...string) *Env {
	e := &Env{L: l, Roles: map[string][]kind.Host{}, Targets: map[string]*Target{}}
	if len(hosts) == 0 {
		hosts = []string{"h1"}
	}
	for _, r := range l.Roles {
		for _, h := range hosts {
			e.Roles[r.Name] = append(e.Roles[r.Name], kind.Host{Name: h, Role: r.Name, Address: "192.0.2.1"})
		}
	}
	return e
}

// Step is the lab's step id, failing the test if there is none.
func (e *Env) Step(t testing.TB, id string) *labs.Step {
	t.Helper()
	st := e.L.Step(id)
	if st == nil {
		t.Fatalf("no step %s", id)
	}
	return st
}

func (e *Env) Lab() *labs.Lab    { return e.L }
func (e *Env) Rehearsal() string { return e.Why }
func (e *Env) Workdir() string   { return "/tmp/dpulab-test-wd" }

// Now is a fixed instant, plus the waits so far when Ticking.
func (e *Env) Now() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.nowLocked()
}

func (e *Env) nowLocked() time.Time {
	return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(e.elapsed)
}

// After never waits: it records d and fires at once (never, with Hold);
// when Ticking, the clock moves on by d as it fires.
func (e *Env) After(d time.Duration) <-chan time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.waited = append(e.waited, d)
	c := make(chan time.Time, 1)
	if !e.Hold {
		if e.Ticking {
			e.elapsed += d
		}
		c <- e.nowLocked()
	}
	return c
}

// Waited lists the waits asked of the clock.
func (e *Env) Waited() []time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]time.Duration(nil), e.waited...)
}

func (e *Env) HostsOf(roles []string) ([]kind.Host, error) {
	var out []kind.Host
	for _, r := range roles {
		hs, ok := e.Roles[r]
		if !ok {
			return nil, fmt.Errorf("no host plays role %s", r)
		}
		out = append(out, hs...)
	}
	return out, nil
}

// Target is host's fake target.
func (e *Env) Target(host string) *Target {
	e.mu.Lock()
	defer e.mu.Unlock()
	t, ok := e.Targets[host]
	if !ok {
		t = &Target{Host: host, env: e}
		e.Targets[host] = t
	}
	return t
}

// FanOut runs fn on each host of the step's roles, one after another (in
// host order, so tests read a fixed order), with the engine's rules for
// skipped hosts and errors.
func (e *Env) FanOut(ctx context.Context, st *labs.Step, fn func(context.Context, kind.Host, runner.Target) error) error {
	hosts, err := e.HostsOf(st.On)
	if err != nil {
		return err
	}
	if len(hosts) == 0 {
		return errors.New("no host")
	}
	skipped := 0
	var errs []error
	for _, h := range hosts {
		switch err := fn(ctx, h, e.Target(h.Name)); {
		case errors.Is(err, kind.ErrSkipped):
			skipped++
		case err != nil:
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if skipped == len(hosts) {
		return kind.ErrSkipped
	}
	return nil
}

func (e *Env) CmdData(h kind.Host, vars map[string]string) map[string]any {
	return labs.Data(vars, map[string]any{
		labs.DataLab: e.L.ID, labs.DataHost: h.Name, labs.DataRole: h.Role,
		labs.DataWorkdir: e.Workdir(), labs.DataDpulab: e.Workdir() + "/dpulab",
		labs.DataLabels: map[string]string{},
	})
}

func (e *Env) WriteFile(_ context.Context, h kind.Host, _ runner.Target, dest string, content []byte, mode os.FileMode, _ bool) error {
	t := e.Target(h.Name)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.Files == nil {
		t.Files = map[string]fstest.MapFile{}
	}
	t.Files[dest] = fstest.MapFile{Data: content, Mode: mode}
	return nil
}

func (e *Env) Output(step string) func(runner.Line) {
	return func(l runner.Line) {
		e.mu.Lock()
		e.lines = append(e.lines, Line{Step: step, Host: l.Host, Text: l.Text})
		e.mu.Unlock()
	}
}

func (e *Env) Say(step, host, format string, args ...any) {
	e.mu.Lock()
	e.lines = append(e.lines, Line{Step: step, Host: host, Text: fmt.Sprintf(format, args...), Said: true})
	e.mu.Unlock()
}

// Lines is what the steps showed, in order.
func (e *Env) Lines() []Line {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Line(nil), e.lines...)
}

// Emit keeps a live event (event.Emitter), for Events.
func (e *Env) Emit(ev event.Live) {
	e.mu.Lock()
	e.events = append(e.events, ev)
	e.mu.Unlock()
}

// Events is the live events the steps sent, in order.
func (e *Env) Events() []event.Live {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]event.Live(nil), e.events...)
}

func (e *Env) Record(step, host, format string, stdout []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.recorded == nil {
		e.recorded = map[string][]string{}
	}
	e.recorded[step+"/"+host+"/"+format] = stdout
}

// Recorded is what Record kept for step on host in format.
func (e *Env) Recorded(step, host, format string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.recorded[step+"/"+host+"/"+format]
}

func (e *Env) Compare(step string) *results.Compare { return e.Compares[step] }

func (e *Env) SetTCO(t *tco.Estimate) error {
	e.mu.Lock()
	e.tco = t
	e.mu.Unlock()
	return nil
}

// TCO is the estimate SetTCO kept.
func (e *Env) TCO() *tco.Estimate {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.tco
}

func (e *Env) StopStarted(context.Context) error {
	e.mu.Lock()
	e.stopped++
	e.mu.Unlock()
	return nil
}

func (e *Env) RemoveWorkdir(_ context.Context, step string) {
	e.mu.Lock()
	e.removed = append(e.removed, step)
	e.mu.Unlock()
}

// Teardowns says how many times the servers were stopped and by which
// steps the working directory was removed.
func (e *Env) Teardowns() (stopped int, removedBy []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stopped, append([]string(nil), e.removed...)
}

// Target is a host that runs nothing: it records the commands asked of it
// and answers them through its Env's Handle.
type Target struct {
	Host  string
	Files map[string]fstest.MapFile
	env   *Env

	mu      sync.Mutex
	runs    []runner.Command
	started []runner.ProcSpec
}

var _ runner.Target = (*Target)(nil)

func (t *Target) Name() string { return t.Host }

func (t *Target) Run(ctx context.Context, c runner.Command) (runner.Result, error) {
	t.mu.Lock()
	t.runs = append(t.runs, runner.Command{Cmd: c.Cmd, Sudo: c.Sudo, Timeout: c.Timeout})
	t.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return runner.Result{}, err
	}
	var out []string
	code := 0
	if t.env.Handle != nil {
		out, code = t.env.Handle(t.Host, c.Cmd)
	}
	var res runner.Result
	for _, l := range out {
		line := runner.Line{Host: t.Host, Stream: runner.Stdout, Text: l, Time: t.env.Now()}
		if c.Output != nil {
			c.Output(line)
		}
		res.Tail = append(res.Tail, line)
	}
	res.ExitCode = code
	return res, nil
}

// Commands are the commands run, in order.
func (t *Target) Commands() []runner.Command {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]runner.Command(nil), t.runs...)
}

// Start records spec and says it started, as the process group 100, 101,
// ... in the order of the starts (it runs nothing: what the process then
// does is what Handle answers the kind's status commands with).
func (t *Target) Start(ctx context.Context, spec runner.ProcSpec) (runner.Proc, error) {
	if err := ctx.Err(); err != nil {
		return runner.Proc{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.started = append(t.started, spec)
	return runner.Proc{Host: t.Host, Name: spec.Name, PID: 99 + len(t.started), LogFile: spec.LogFile, Sudo: spec.Sudo}, nil
}

// Started are the processes started, in order.
func (t *Target) Started() []runner.ProcSpec {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]runner.ProcSpec(nil), t.started...)
}

func (t *Target) Stop(context.Context, runner.Proc, time.Duration) error { return nil }

// Upload keeps the local file's content as the host's file remote (what
// ReadFile then reads).
func (t *Target) Upload(_ context.Context, local, remote string, mode fs.FileMode) error {
	b, err := os.ReadFile(local)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.Files == nil {
		t.Files = map[string]fstest.MapFile{}
	}
	t.Files[remote] = fstest.MapFile{Data: b, Mode: mode}
	return nil
}

func (t *Target) ReadFile(_ context.Context, p string) ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f, ok := t.Files[p]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return f.Data, nil
}

func (t *Target) Platform(context.Context) (runner.Platform, error) {
	return runner.Platform{OS: "linux", Arch: "amd64"}, nil
}

func (t *Target) Close() error { return nil }
