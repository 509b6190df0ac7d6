package steps

import (
	"context"
	"errors"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
)

// A cleanup step runs at the end of a run and on abort, always: it stops
// the servers this run started (by their recorded pids, then every process
// group started from the run's working directory), runs its commands, all
// of them even when one fails, and removes the working directory.
func init() {
	registerKind(labs.KindCleanup, kind{resolve: func(e *Engine, st *labs.Step, vars map[string]string) (stepPlan, error) {
		p, err := e.resolveCommands(st, vars, true)
		if err != nil {
			return nil, err
		}
		return cleanupPlan{p}, nil
	}})
}

type cleanupPlan struct{ *commandsPlan }

func (p cleanupPlan) commands() []PlannedCommand {
	var out []PlannedCommand
	wd := p.e.workdir()
	for _, h := range p.hosts {
		out = append(out, PlannedCommand{Host: h.Name, Cmd: "# stop the servers this run started (by their recorded pids, then every process group started from " + wd + ")"})
		for _, c := range p.commandsPlan.commands() {
			if c.Host == h.Name {
				out = append(out, c)
			}
		}
		out = append(out, PlannedCommand{Host: h.Name, Cmd: "rm -rf -- " + runner.Quote(wd)})
	}
	return out
}

func (p cleanupPlan) run(ctx context.Context) error {
	e, st := p.e, p.st
	var errs []error
	if err := e.stopAll(ctx); err != nil {
		errs = append(errs, err)
	}
	if len(st.Run) > 0 || st.Verify != nil {
		if err := p.commandsPlan.run(ctx); err != nil && !errors.Is(err, errSkipped) {
			errs = append(errs, err)
		}
	}
	e.sweepRun(ctx, st.ID)
	return errors.Join(errs...)
}
