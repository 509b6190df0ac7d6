package steps

import (
	"context"
	"fmt"

	"github.com/dpulab/dpulab/labs"
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
					cmds: func() []PlannedCommand { return e.planServers(p) },
					do:   func(ctx context.Context) error { return e.deploy(ctx, st.ID, p) },
				},
				files: func() ([]RenderedFile, error) { return e.deployFiles(st.ID, p, vars) },
			}, nil
		},
	})
}

// planServers lists the commands that start a deployment's instances.
func (e *Engine) planServers(p deployPlan) []PlannedCommand {
	var out []PlannedCommand
	for _, h := range p.Hosts {
		out = append(out, planServerInstall(h, p)...)
		for k := 0; k < p.Instances; k++ {
			out = append(out, PlannedCommand{Host: h.Name, Cmd: e.serverCmd(h, p, p.Port+k)})
		}
	}
	return out
}
