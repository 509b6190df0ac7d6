package steps

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/results"
)

// A task step is done by the trainee, by hand, in a real shell on the
// step's host (Engine.Shell; the TUI hands it the terminal), the way
// Killercoda and Instruqt labs teach; then CheckTask runs its verify, which
// decides. RunStep does it for them: its run commands, then verify, as
// "do it for me", booth mode and headless runs do.
func init() {
	registerKind(labs.KindTask, kind{
		note: "yours to do in a shell on the host; verify checks it",
		resolve: func(e *Engine, st *labs.Step, vars map[string]string) (stepPlan, error) {
			p, err := e.resolveCommands(st, vars, false)
			if err != nil {
				return nil, err
			}
			return taskPlan{p}, nil
		},
	})
}

type taskPlan struct{ *commandsPlan }

// byHandKey marks a context whose task step the trainee did by hand.
type byHandKey struct{}

func (p taskPlan) run(ctx context.Context) error {
	if ctx.Value(byHandKey{}) == nil {
		// Said first, so that a headless log or the TUI's output shows
		// that dpulab did the trainee's part (its commands, then verify).
		for _, h := range p.hosts {
			p.e.opts.Emit(Output{Step: p.st.ID, Line: runner.Line{Host: h.Name, Text: "a task step, done for you: its commands, then its check (in the TUI you can do it yourself in a shell)", Time: time.Now()}})
		}
		return p.commandsPlan.run(ctx)
	}
	e, st := p.e, p.st
	return e.fanOut(ctx, st, func(ctx context.Context, h hostRef, t runner.Target) error {
		sc, err := p.script(h)
		if err != nil {
			return err
		}
		return e.verify(ctx, st, h, t, sc.verify, p.timeout)
	})
}

// CheckTask runs only task step i's verify: the trainee did the work by
// hand. It reports like RunStep.
func (e *Engine) CheckTask(ctx context.Context, i int) results.Status {
	if i < 0 || i >= len(e.lab.Steps) || e.lab.Steps[i].Kind != labs.KindTask {
		return results.Failed
	}
	return e.RunStep(context.WithValue(ctx, byHandKey{}, true), i)
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
type TaskSolution struct {
	Host   string
	Sudo   bool
	Run    []string
	Verify string
}

// Solution returns task step i's solution per host, rendered with the
// lab's current variables.
func (e *Engine) Solution(i int) ([]TaskSolution, error) {
	if i < 0 || i >= len(e.lab.Steps) || e.lab.Steps[i].Kind != labs.KindTask {
		return nil, fmt.Errorf("step %d is not a task step", i+1)
	}
	st := &e.lab.Steps[i]
	p, err := e.resolveCommands(st, e.Vars(), false)
	if err != nil {
		return nil, err
	}
	var out []TaskSolution
	for _, h := range p.hosts {
		sc, err := p.script(h)
		if err != nil {
			return out, err
		}
		out = append(out, TaskSolution{Host: h.Name, Sudo: st.Sudo, Run: sc.run, Verify: sc.verify})
	}
	return out, nil
}
