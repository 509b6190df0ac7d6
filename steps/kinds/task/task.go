// Package task is the task step kind: a step the trainee does by hand, in
// a real shell on the step's host (the engine's Shell; the TUI hands it the
// terminal), the way Killercoda and Instruqt labs teach; then its verify
// decides. Run without kind.ByHand does it for them: its commands, then
// verify, as "do it for me", booth mode and headless runs do.
package task

import (
	"context"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/kinds/command"
)

func init() {
	kind.Register(labs.KindTask, kind.Kind{
		Note:   "yours to do in a shell on the host; verify checks it",
		ByHand: true,
		Resolve: func(env kind.Env, st *labs.Step, vars map[string]string) (kind.Plan, error) {
			p, err := command.Resolve(env, st, vars, false)
			if err != nil {
				return nil, err
			}
			return plan{p}, nil
		},
	})
}

type plan struct{ *command.Plan }

var _ kind.Solver = plan{}

func (p plan) Run(ctx context.Context) error {
	if !kind.ByHand(ctx) {
		// Said first, so that a headless log or the TUI's output shows
		// that dpulab did the trainee's part (its commands, then verify).
		for _, h := range p.Hosts {
			p.Env.Say(p.Step.ID, h.Name, "a task step, done for you: its commands, then its check (in the TUI you can do it yourself in a shell)")
		}
		return p.Plan.Run(ctx)
	}
	return p.Env.FanOut(ctx, p.Step, func(ctx context.Context, h kind.Host, t runner.Target) error {
		sc, err := p.Script(h)
		if err != nil {
			return err
		}
		return command.Verify(ctx, p.Env, p.Step, h, t, sc.Verify, p.Timeout)
	})
}

// Solutions is the step's answer per host, rendered with the variables
// it was resolved with.
func (p plan) Solutions() ([]kind.Solution, error) {
	var out []kind.Solution
	for _, h := range p.Hosts {
		sc, err := p.Script(h)
		if err != nil {
			return out, err
		}
		out = append(out, kind.Solution{Host: h.Name, Sudo: p.Step.Sudo, Run: sc.Run, Verify: sc.Verify})
	}
	return out, nil
}
