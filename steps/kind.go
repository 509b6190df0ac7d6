package steps

import (
	"context"
	"fmt"

	"github.com/dpulab/dpulab/labs"
)

// A step kind is what the engine does for one labs.Kind. Each kind is one
// file here, kind_<name>.go, whose init registers it: how a step of the
// kind is resolved with the run's variables into a stepPlan, what the TUI
// shows while it runs, and its one-line note. Its lab.yaml keys are read
// by labs (the kind's entry in labs/parse_steps.go's table);
// TestEveryLabKindIsRegistered keeps the two tables in step.
type kind struct {
	// resolve works the step out with the run's variables. The dry run,
	// the TUI's command pane and the run itself all use what it returns,
	// so what is shown is what runs.
	resolve func(e *Engine, st *labs.Step, vars map[string]string) (stepPlan, error)
	// view is what the TUI shows while the step runs.
	view View
	// asksVars says the step's work follows the lab's variables: the TUI
	// offers the variables form before it runs.
	asksVars bool
	// note says what the step does when it runs no shell command of the
	// lab's own ("uploads dpulab and starts the servers").
	note string
}

// stepPlan is a step resolved with the run's variables.
type stepPlan interface {
	// commands are the exact commands it will run, per host, with sudo
	// marked; work that is not a shell command shows as a "# ..." line.
	commands() []PlannedCommand
	// run does the step.
	run(ctx context.Context) error
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

var kinds = map[labs.Kind]kind{}

// registerKind adds a step kind; call it from the kind file's init.
func registerKind(k labs.Kind, d kind) {
	if _, dup := kinds[k]; dup {
		panic("steps: step kind " + string(k) + " registered twice")
	}
	kinds[k] = d
}

// resolve resolves step st with vars through its kind.
func (e *Engine) resolve(st *labs.Step, vars map[string]string) (stepPlan, error) {
	k, ok := kinds[st.Kind]
	if !ok {
		return nil, fmt.Errorf("step %s: kind %q is not one this engine runs", st.ID, st.Kind)
	}
	if why := e.hosts.noHostReason(st.On); why != "" {
		return noHostPlan{e: e, step: st.ID, roles: st.On, reason: why}, nil
	}
	return k.resolve(e, st, vars)
}

// Plan returns the exact commands step i will run, on which host, with
// sudo marked: what the TUI shows and --dry-run prints. It resolves the
// step as RunStep does.
func (e *Engine) Plan(i int) ([]PlannedCommand, error) {
	if i < 0 || i >= len(e.lab.Steps) {
		return nil, fmt.Errorf("no step %d", i)
	}
	p, err := e.resolve(&e.lab.Steps[i], e.Vars())
	if err != nil {
		return nil, err
	}
	return p.commands(), nil
}

// KindInfo is what a step kind tells a front end about its steps.
type KindInfo struct {
	// View is what to show while a step of the kind runs.
	View View
	// AsksVars says to offer the variables form before such a step runs.
	AsksVars bool
	// Note says what such a step does when it runs no shell command of the
	// lab's own.
	Note string
}

// DescribeKind returns what the kind named kind says about its steps (the
// zero KindInfo for a kind this engine does not run).
func DescribeKind(kind string) KindInfo {
	k := kinds[labs.Kind(kind)]
	return KindInfo{View: k.view, AsksVars: k.asksVars, Note: k.note}
}

// planFunc adapts two functions to a stepPlan, for kinds whose plan holds
// no more than the step and the variables.
type planFunc struct {
	cmds func() []PlannedCommand
	do   func(ctx context.Context) error
}

func (p planFunc) commands() []PlannedCommand {
	if p.cmds == nil {
		return nil
	}
	return p.cmds()
}

func (p planFunc) run(ctx context.Context) error { return p.do(ctx) }

// confirmStep asks before a step marked confirm, and before a sudo step.
func (e *Engine) confirmStep(ctx context.Context, st *labs.Step) error {
	question := st.Confirm
	if question == "" && st.Sudo {
		question = fmt.Sprintf("Step %q runs commands as root (sudo) on %s. Go ahead?", st.Title, e.hostList(st.On))
	}
	if question == "" {
		return nil
	}
	return e.confirm(ctx, st.ID, "", question)
}
