package steps

import (
	"context"
	"fmt"

	"github.com/dpulab/dpulab/labs"
	stepkind "github.com/dpulab/dpulab/steps/kind"
)

// Step kinds are registered with package steps/kind (the contract: Env,
// Kind, Plan, Register); each moved kind is a package under steps/kinds/,
// imported for its registration by kinds_list.go, and works through the
// Env the engine gives it (kind_env.go), never *Engine.
//
// The kinds not moved yet (deploy, bench, compare) still
// work on the engine: registerKind puts them in the same registry, and
// their Resolve reaches the engine through the Env it was given.
type kind struct {
	// resolve works the step out with the run's variables.
	resolve func(e *Engine, st *labs.Step, vars map[string]string) (stepPlan, error)
	// view is what the TUI shows while the step runs.
	view View
	// asksVars says to offer the variables form before the step runs.
	asksVars bool
	// note says what the step does when it runs no shell command of the
	// lab's own.
	note string
	// writesFiles says its plans show the files they write (renderer).
	writesFiles bool
}

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

// kinds holds the kinds that still work on the engine. vsphere.go wraps
// two of them in its init; the registered Resolve reads this map when it
// is called, so the wrapping holds.
var kinds = map[labs.Kind]kind{}

// registerKind adds a kind that works on the engine; call it from the
// kind file's init.
func registerKind(k labs.Kind, d kind) {
	if _, dup := kinds[k]; dup {
		panic("steps: step kind " + string(k) + " registered twice")
	}
	kinds[k] = d
	stepkind.Register(k, stepkind.Kind{
		View: d.view, AsksVars: d.asksVars, Note: d.note, WritesFiles: d.writesFiles,
		Resolve: func(env stepkind.Env, st *labs.Step, vars map[string]string) (stepkind.Plan, error) {
			ke, ok := env.(kindEnv)
			if !ok {
				return nil, fmt.Errorf("step %s: the %s kind still runs only inside the engine", st.ID, k)
			}
			p, err := kinds[k].resolve(ke.e, st, vars)
			if err != nil {
				return nil, err
			}
			return enginePlan{p}, nil
		},
	})
}

// enginePlan carries an engine kind's plan through the registry.
type enginePlan struct{ stepPlan }

func (p enginePlan) Commands() []PlannedCommand    { return p.commands() }
func (p enginePlan) Run(ctx context.Context) error { return p.run(ctx) }

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
	if ep, ok := p.(enginePlan); ok {
		return ep.stepPlan, nil
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
