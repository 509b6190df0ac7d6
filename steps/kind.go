package steps

import (
	"context"
	"fmt"

	"github.com/dpulab/dpulab/labs"
	stepkind "github.com/dpulab/dpulab/steps/kind"
)

// Step kinds are registered with package steps/kind (the contract: Env,
// Kind, Plan, Register); each kind is a package under steps/kinds/,
// imported for its registration by kinds_list.go, and works through the
// Env the engine gives it (kind_env.go, kind_env_load.go), never *Engine.

// stepPlan is a step resolved with the run's variables, as the engine
// holds it: a registered kind's Plan (kindPlan), or one of the engine's
// own kinds' plans.
type stepPlan interface {
	// commands are the exact commands it will run, per host, with sudo
	// marked; work that is not a shell command shows as a "# ..." line.
	commands() []PlannedCommand
	// run does the step.
	run(ctx context.Context) error
}

// View is what the TUI shows while a step runs.
type View = stepkind.View

const (
	// ViewLog is the step's output (and, after it, its result).
	ViewLog = stepkind.ViewLog
	// ViewDashboard is the live dashboard of a running bench.
	ViewDashboard = stepkind.ViewDashboard
)

// kindPlan is a registered kind's Plan as the engine holds it.
type kindPlan struct{ stepkind.Plan }

func (p kindPlan) commands() []PlannedCommand    { return p.Commands() }
func (p kindPlan) run(ctx context.Context) error { return p.Run(ctx) }

// rehearserOf is what plan does in a rehearsal that skips hardware
// checks, if it does anything.
func rehearserOf(plan stepPlan) (stepkind.Rehearser, bool) {
	switch p := plan.(type) {
	case kindPlan:
		r, ok := p.Plan.(stepkind.Rehearser)
		return r, ok
	case stepkind.Rehearser:
		return p, true
	}
	return nil, false
}

// resolve resolves step st with vars through its kind.
func (e *Engine) resolve(st *labs.Step, vars map[string]string) (stepPlan, error) {
	k, ok := stepkind.Lookup(st.Kind)
	if !ok {
		return nil, fmt.Errorf("step %s: kind %q is not one this engine runs", st.ID, st.Kind)
	}
	if why := e.hosts.noHostReason(st.On); why != "" {
		return noHostPlan{e: e, step: st.ID, roles: st.On, reason: why}, nil
	}
	p, err := k.Resolve(kindEnv{e}, st, vars)
	if err != nil {
		return nil, err
	}
	return kindPlan{p}, nil
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
	// ByHand says a person may do such a step by hand in a shell (Shell),
	// then have only its check run (CheckTask).
	ByHand bool
}

// DescribeKind returns what the kind named kind says about its steps (the
// zero KindInfo for a kind this engine does not run).
func DescribeKind(kind string) KindInfo {
	k, _ := stepkind.Lookup(labs.Kind(kind))
	return KindInfo{View: k.View, AsksVars: k.AsksVars, Note: k.Note, ByHand: k.ByHand}
}

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
