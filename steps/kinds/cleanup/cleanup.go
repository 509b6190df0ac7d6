// Package cleanup is the cleanup step kind: it runs at the end of a run
// and on abort, always. It has the engine stop the servers this run
// started (by their recorded pids, then every process group started from
// the run's working directory), runs its commands, all of them even when
// one fails, and has the engine remove the working directory.
package cleanup

import (
	"context"
	"errors"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/kinds/command"
)

func init() {
	kind.Register(labs.KindCleanup, kind.Kind{Resolve: func(env kind.Env, st *labs.Step, vars map[string]string) (kind.Plan, error) {
		p, err := command.Resolve(env, st, vars, true)
		if err != nil {
			return nil, err
		}
		return plan{p}, nil
	}})
}

type plan struct{ *command.Plan }

func (p plan) Commands() []kind.PlannedCommand {
	var out []kind.PlannedCommand
	wd := p.Env.Workdir()
	cmds := p.Plan.Commands()
	for _, h := range p.Hosts {
		out = append(out, kind.PlannedCommand{Host: h.Name, Cmd: "# stop the servers this run started (by their recorded pids, then every process group started from " + wd + ")"})
		for _, c := range cmds {
			if c.Host == h.Name {
				out = append(out, c)
			}
		}
		out = append(out, kind.PlannedCommand{Host: h.Name, Cmd: "rm -rf -- " + runner.Quote(wd)})
	}
	return out
}

func (p plan) Run(ctx context.Context) error {
	var errs []error
	if err := p.Env.StopStarted(ctx); err != nil {
		errs = append(errs, err)
	}
	if len(p.Step.Run) > 0 || p.Step.Verify != nil {
		if err := p.Plan.Run(ctx); err != nil && !errors.Is(err, kind.ErrSkipped) {
			errs = append(errs, err)
		}
	}
	p.Env.RemoveWorkdir(ctx, p.Step.ID)
	return errors.Join(errs...)
}
