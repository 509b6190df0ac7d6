package deploy

import (
	"context"
	"fmt"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/steps/kind"
)

// MaxFiles bounds the redis.conf files a plan renders to show; the rest
// are counted.
const MaxFiles = 64

// A deploy step uploads dpulab to the hosts of its roles and starts its
// group's instances of the bundled server (or the distribution's
// redis-server or valkey-server, server.go) there: exactly the resolved
// Plan, stopping whatever of the group ran before.
func init() {
	kind.Register(labs.KindDeploy, kind.Kind{
		AsksVars:    true,
		WritesFiles: true,
		Note:        "uploads dpulab and starts the servers",
		Resolve: func(env kind.Env, st *labs.Step, vars map[string]string) (kind.Plan, error) {
			r, ok := env.(Runner)
			if !ok {
				return nil, fmt.Errorf("step %s: this run cannot start servers (its environment has no deploy.Runner)", st.ID)
			}
			p, err := Resolve(r, st, vars, nil)
			if err != nil {
				return nil, err
			}
			return stepPlan{env: r, step: st.ID, plan: p, vars: vars}, nil
		},
	})
}

// stepPlan is a deploy step's kind.Plan.
type stepPlan struct {
	env  Runner
	step string
	plan Plan
	vars map[string]string
}

var _ kind.Renderer = stepPlan{}

func (s stepPlan) Commands() []kind.PlannedCommand { return Commands(s.env, s.plan) }

func (s stepPlan) Run(ctx context.Context) error { return Run(ctx, s.env, s.step, s.plan, s.vars) }

func (s stepPlan) Rendered() ([]kind.RenderedFile, error) {
	return Files(s.env, s.step, s.plan, s.vars, MaxFiles)
}
