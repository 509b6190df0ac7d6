package steps

import (
	"context"
	"errors"
	"fmt"

	"github.com/dpulab/dpulab/runner"
	stepkind "github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/results"
)

// A task step (steps/kinds/task) is done by the trainee, by hand, in a
// real shell on the step's host: the engine's part is the shell (Shell),
// running only the step's verify when the trainee did the work
// (CheckTask), and the step's answer (Solution).

// byHand says step i is of a kind a person may do by hand (a task step).
func (e *Engine) byHand(i int) bool {
	k, _ := stepkind.Lookup(e.lab.Steps[i].Kind)
	return k.ByHand
}

// CheckTask runs only task step i's verify: the trainee did the work by
// hand. It reports like RunStep.
func (e *Engine) CheckTask(ctx context.Context, i int) results.Status {
	if i < 0 || i >= len(e.lab.Steps) || !e.byHand(i) {
		return results.Failed
	}
	return e.RunStep(stepkind.WithByHand(ctx), i)
}

// Shell is the interactive shell on step i's host (the first of its
// roles), in the lab's working directory there: what the TUI hands the
// terminal to for a task step.
func (e *Engine) Shell(i int) (runner.Shell, error) {
	if i < 0 || i >= len(e.lab.Steps) {
		return runner.Shell{}, fmt.Errorf("no step %d", i)
	}
	hosts, err := e.hosts.hosts(e.lab.Steps[i].On)
	if err != nil {
		return runner.Shell{}, err
	}
	if len(hosts) == 0 {
		return runner.Shell{}, errors.New("no host plays the step's role (check the inventory)")
	}
	if e.hosts.newTarget != nil {
		return runner.Shell{}, errors.New("this run reaches its hosts through Options.Targets: no shell")
	}
	pool := e.hosts.pool
	if pool == nil {
		pool = runner.NewPool(nil, runner.SSHOptions{}) // every role is this machine
	}
	return pool.Shell(hosts[0].Name, e.workdir())
}

// TaskSolution is a task step's answer on one host ("show me"): the
// commands "do it for me" runs there, and the check that decides.
type TaskSolution = stepkind.Solution

// Solution returns task step i's solution per host, rendered with the
// lab's current variables.
func (e *Engine) Solution(i int) ([]TaskSolution, error) {
	if i < 0 || i >= len(e.lab.Steps) || !e.byHand(i) {
		return nil, fmt.Errorf("step %d is not a task step", i+1)
	}
	p, err := e.resolve(&e.lab.Steps[i], e.Vars())
	if err != nil {
		return nil, err
	}
	kp, ok := p.(kindPlan)
	if !ok {
		return nil, fmt.Errorf("step %d: no host plays its role", i+1)
	}
	s, ok := kp.Plan.(stepkind.Solver)
	if !ok {
		return nil, fmt.Errorf("step %d: its kind shows no solution", i+1)
	}
	return s.Solutions()
}
