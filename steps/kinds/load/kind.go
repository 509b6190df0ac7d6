package load

import (
	"fmt"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/steps/kind"
)

// The bench and compare kinds: both run `dpulab bench --json` from the
// step's client hosts and `dpulab sample` on the server hosts, drive the
// TUI's dashboard, and write the results after every repetition.
func init() {
	for _, k := range []labs.Kind{labs.KindBench, labs.KindCompare} {
		kind.Register(k, kind.Kind{
			View:     kind.ViewDashboard,
			AsksVars: true,
			Note:     "runs dpulab bench and samplers",
			Resolve:  resolveKind,
		})
	}
}

func resolveKind(env kind.Env, st *labs.Step, vars map[string]string) (kind.Plan, error) {
	le, ok := env.(Env)
	if !ok {
		return nil, fmt.Errorf("step %s: the %s kind needs a load.Env, which dpulab's engine gives it", st.ID, st.Kind)
	}
	return Resolve(le, st, vars)
}

// hostMetricsCommands are the vSphere queries of a load step, on the
// server hosts of its first sweep value, where the inventory has a
// vCenter (Env.HostMetricsPlan).
func (p *Plan) hostMetricsCommands() []kind.PlannedCommand {
	var out []kind.PlannedCommand
	seen := map[string]bool{}
	for _, j := range p.Jobs {
		if j.Sweep != p.Jobs[0].Sweep {
			break
		}
		for _, h := range j.Deploy.Hosts {
			if seen[h.Name] {
				continue
			}
			lines := p.Env.HostMetricsPlan(h)
			if len(lines) == 0 {
				continue
			}
			seen[h.Name] = true
			for _, l := range lines {
				out = append(out, kind.PlannedCommand{Host: h.Name, Cmd: l})
			}
		}
	}
	return out
}
