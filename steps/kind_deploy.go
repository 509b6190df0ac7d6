package steps

import (
	"context"
	"fmt"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/steps/kinds/deploy"
)

// A deploy step uploads dpulab to the hosts of its roles and starts its
// group's instances of the bundled server (or the distribution's
// redis-server or valkey-server, deploy_server.go) there (deploy.go): exactly the
// resolved deployPlan, stopping whatever of the group ran before.
func init() {
	registerKind(labs.KindDeploy, kind{
		asksVars:    true,
		writesFiles: true,
		note:        "uploads dpulab and starts the servers",
		resolve: func(e *Engine, st *labs.Step, vars map[string]string) (stepPlan, error) {
			if st.Deploy == nil {
				return nil, fmt.Errorf("step %s: no deploy keys", st.ID)
			}
			p, err := e.planDeploy(st, vars, nil)
			if err != nil {
				return nil, err
			}
			return renderingPlan{
				planFunc: planFunc{
					cmds: func() []PlannedCommand { return deploy.Commands(kindEnv{e}, p) },
					do:   func(ctx context.Context) error { return deploy.Run(ctx, kindEnv{e}, st.ID, p, e.Vars()) },
				},
				files: func() ([]RenderedFile, error) { return deploy.Files(kindEnv{e}, st.ID, p, vars, maxRenderedFiles) },
			}, nil
		},
	})
}
