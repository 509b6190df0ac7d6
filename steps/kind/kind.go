// Package kind is the contract between the engine (package steps) and a
// step kind: the narrow environment a kind works through (Env), what a kind
// is (Kind: how a step of it is resolved into a Plan), and the registry
// (Register). A kind lives in its own package under steps/kinds/, imports
// this package and labs, never steps: the engine keeps sequencing, saved
// progress, resume and cleanup, and gives each step an Env.
//
// The events a kind causes are lines of output (Env.Output, Env.Say); the
// engine turns them into its typed events. Passing them as two functions
// rather than moving steps' event types here keeps this package a leaf the
// TUI never needs to know about, and a kind unable to emit anything the
// engine did not mean it to (StepStarted, StepFinished are the engine's).
package kind

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/labs/tco"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/results"
)

// Kind is what the engine does for one labs.Kind.
type Kind struct {
	// Resolve works the step out with the run's variables. The dry run,
	// the TUI's command pane and the run itself all use the Plan it
	// returns, so what is shown is what runs. It runs nothing on hosts.
	Resolve func(env Env, st *labs.Step, vars map[string]string) (Plan, error)
	// View is what the TUI shows while the step runs.
	View View
	// AsksVars says the step's work follows the lab's variables: the TUI
	// offers the variables form before it runs.
	AsksVars bool
	// Note says what the step does when it runs no shell command of the
	// lab's own ("uploads dpulab and starts the servers").
	Note string
	// WritesFiles says its plans show the files they write (Renderer).
	WritesFiles bool
	// ByHand says a person may do the step's work by hand, in a shell on
	// its host, and then have only its check run (kind.WithByHand): the
	// engine's Shell and CheckTask serve it, and its plan is a Solver.
	ByHand bool
}

// RenderedFile is a file a step writes on a host, rendered as the step
// renders it: a template step's dest, a deploy step's redis.conf per
// instance. Front ends show it ("what did this step write?"); the text
// comes from the lab's templates and variables, so it is outside text to
// be filtered before it is drawn.
type RenderedFile struct {
	Step string
	Host string
	// Path is where the step writes it on Host.
	Path string
	// Source is the template it is rendered from ("" for a deploy step
	// without one: dpulab's minimal config).
	Source string
	// Content is the file's text (the engine hides secrets in it before a
	// front end sees it).
	Content string
}

// Renderer is a Plan that can say what the files it writes hold without
// writing them.
type Renderer interface {
	Rendered() ([]RenderedFile, error)
}

// Plan is a step resolved with the run's variables.
type Plan interface {
	// Commands are the exact commands it will run, per host, with sudo
	// marked; work that is not a shell command shows as a "# ..." line.
	Commands() []PlannedCommand
	// Run does the step. It returns ErrSkipped when the step decided not
	// to run, a *StepError (or one wrapped) for a host's failure.
	Run(ctx context.Context) error
}

// PlannedCommand is a command a step will run on a host.
type PlannedCommand struct {
	Host string `json:"host"`
	Cmd  string `json:"cmd"`
	Sudo bool   `json:"sudo,omitempty"`
}

// View is what the TUI shows while a step runs.
type View string

const (
	// ViewLog is the step's output (and, after it, its result).
	ViewLog View = ""
	// ViewDashboard is the live dashboard of a running bench: TPS,
	// latency and CPU per second, then the compare table and charts.
	ViewDashboard View = "dashboard"
)

// Host is a host a step runs on, as the inventory names it.
type Host struct {
	Name string
	Role string
	// Address is how other hosts of the lab reach it (127.0.0.1 for this
	// machine).
	Address string
	// Local is true for this machine (no SSH).
	Local bool
}

// Env is what the engine gives a kind for one run: the small interfaces
// below, each a fake in a kind's tests (package kindtest).
type Env interface {
	Hosts
	Out
	Results
	Clock
	Teardown
	// Lab is the lab being run (its files, its variables' defaults).
	Lab() *labs.Lab
	// Rehearsal says why this run is a rehearsal ("" for a real run).
	Rehearsal() string
}

// Hosts is where a step's work runs.
type Hosts interface {
	// HostsOf lists the hosts playing roles, in inventory order.
	HostsOf(roles []string) ([]Host, error)
	// FanOut runs fn on every host of the step's roles in parallel, each
	// reached and prepared first (its working directory, dpulab there). It
	// returns ErrSkipped when every host skipped, else the first host's
	// error joined with the others.
	FanOut(ctx context.Context, st *labs.Step, fn func(ctx context.Context, h Host, t runner.Target) error) error
	// CmdData is what the lab's command templates see on h.
	CmdData(h Host, vars map[string]string) map[string]any
	// Workdir is the run's working directory on every host.
	Workdir() string
	// WriteFile writes content to dest on h so that a reader sees the old
	// file or the new one, never half of it.
	WriteFile(ctx context.Context, h Host, t runner.Target, dest string, content []byte, mode os.FileMode, sudo bool) error
}

// Out is where a step's output goes: the engine makes events of it.
type Out interface {
	// Output is the sink of the step's command output lines.
	Output(step string) func(runner.Line)
	// Say shows a line of dpulab's own in the step's output.
	Say(step, host, format string, args ...any)
}

// Results is the run's results writer: what a kind keeps goes there, and
// it is written atomically.
type Results interface {
	// Record keeps the figures format's reader finds in a command's
	// standard output lines on host (steps/kinds/command.RecordFormats).
	Record(step, host, format string, stdout []string)
	// Compare is the compare result step recorded in this run (nil for
	// none).
	Compare(step string) *results.Compare
	// SetTCO records a TCO estimate and writes the results.
	SetTCO(t *tco.Estimate) error
}

// Teardown is the engine's end of a run, which a cleanup step asks for
// at its place in the lab.
type Teardown interface {
	// StopStarted stops the servers this run started (by their recorded
	// pids, then every process group started from the working directory).
	StopStarted(ctx context.Context) error
	// RemoveWorkdir removes the run's working directory on every host the
	// run used.
	RemoveWorkdir(ctx context.Context, step string)
}

// Clock is the run's time: a fake in tests, where no test may wait on the
// wall clock.
type Clock interface {
	Now() time.Time
	// After is time.After.
	After(d time.Duration) <-chan time.Time
}

// RealClock is the wall clock.
type RealClock struct{}

// Now is time.Now.
func (RealClock) Now() time.Time { return time.Now() }

// After is time.After.
func (RealClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// StepError is why a step failed: the host and command that failed, and
// the command's last lines of output.
type StepError struct {
	Host string
	Cmd  string
	Tail []string
	Err  error
}

func (e *StepError) Error() string {
	var b strings.Builder
	if e.Host != "" {
		fmt.Fprintf(&b, "on %s: ", e.Host)
	}
	b.WriteString(e.Err.Error())
	if e.Cmd != "" {
		fmt.Fprintf(&b, " (command: %s)", e.Cmd)
	}
	return b.String()
}

func (e *StepError) Unwrap() error { return e.Err }

// ErrSkipped reports that a step decided not to run (skip_if held).
var ErrSkipped = errors.New("skipped")

// byHandKey marks a context whose task step the trainee did by hand.
type byHandKey struct{}

// WithByHand marks ctx: the trainee did the step's work by hand, in a
// shell; only its check is left to run.
func WithByHand(ctx context.Context) context.Context {
	return context.WithValue(ctx, byHandKey{}, true)
}

// ByHand reports whether ctx was marked by WithByHand.
func ByHand(ctx context.Context) bool { return ctx.Value(byHandKey{}) != nil }

// Solution is a task step's answer on one host ("show me"): the commands
// "do it for me" runs there, and the check that decides.
type Solution struct {
	Host   string
	Sudo   bool
	Run    []string
	Verify string
}

// Rehearser is a Plan with something to do in a rehearsal even when it is
// a hardware check the rehearsal skips (vSphere's check still asks vCenter,
// and says its answers as notes).
type Rehearser interface {
	Rehearse(ctx context.Context) error
}

// Solver is a Plan that can show its solution (a task step's).
type Solver interface {
	Solutions() ([]Solution, error)
}

var (
	mu    sync.RWMutex
	kinds = map[labs.Kind]Kind{}
)

// Register adds a step kind; call it from the kind package's init. The
// kind's lab.yaml keys register with labs.RegisterKind beside it.
func Register(k labs.Kind, d Kind) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := kinds[k]; dup {
		panic("steps/kind: step kind " + string(k) + " registered twice")
	}
	if d.Resolve == nil {
		panic("steps/kind: step kind " + string(k) + " has no Resolve")
	}
	kinds[k] = d
}

// Wrap replaces kind k's registration with wrap's result: how one kind
// adds to another's work under the same name (the vSphere check is the
// check kind's vsphere: form, steps/kinds/vspherecheck).
func Wrap(k labs.Kind, wrap func(Kind) Kind) {
	mu.Lock()
	defer mu.Unlock()
	d, ok := kinds[k]
	if !ok {
		panic("steps/kind: wrap of step kind " + string(k) + ", which is not registered")
	}
	kinds[k] = wrap(d)
}

// Lookup returns the kind registered as k.
func Lookup(k labs.Kind) (Kind, bool) {
	mu.RLock()
	defer mu.RUnlock()
	d, ok := kinds[k]
	return d, ok
}

// Names lists the registered kinds, sorted.
func Names() []labs.Kind {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]labs.Kind, 0, len(kinds))
	for k := range kinds {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// PlanFunc adapts two functions to a Plan, for kinds whose plan holds no
// more than the step and the variables.
type PlanFunc struct {
	Cmds func() []PlannedCommand
	Do   func(ctx context.Context) error
}

// Commands returns Cmds' commands (none when Cmds is nil).
func (p PlanFunc) Commands() []PlannedCommand {
	if p.Cmds == nil {
		return nil
	}
	return p.Cmds()
}

// Run calls Do.
func (p PlanFunc) Run(ctx context.Context) error { return p.Do(ctx) }

// TailText is the text of a command's last lines.
func TailText(ls []runner.Line) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Text
	}
	return out
}

// ErrOr is err, or the exit status of res when the command ran and failed.
func ErrOr(err error, res runner.Result) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("exit status %d", res.ExitCode)
}

// DefaultCmdTimeout bounds a lab command whose step sets no timeout, so a
// hung command cannot stall a booth forever.
const DefaultCmdTimeout = 10 * time.Minute
