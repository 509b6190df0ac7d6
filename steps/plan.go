package steps

import (
	"fmt"
	"strings"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
)

// Plan returns the exact commands step i will run, on which host, with
// sudo marked: what the TUI shows and --dry-run prints. Kinds that run no
// shell command of their own (read, tco) plan nothing; a template step
// shows the file it writes as a comment line.
func (e *Engine) Plan(i int) ([]PlannedCommand, error) {
	if i < 0 || i >= len(e.lab.Steps) {
		return nil, fmt.Errorf("no step %d", i)
	}
	st := &e.lab.Steps[i]
	vars := e.Vars()
	var out []PlannedCommand
	switch st.Kind {
	case labs.KindRun, labs.KindCheck, labs.KindCleanup:
		hosts, err := e.hosts.hosts(st.On)
		if err != nil {
			return nil, err
		}
		for _, h := range hosts {
			data := e.cmdData(h, vars)
			var cmds []string
			if st.SkipIf != "" {
				c, err := labs.RenderCommand(st.SkipIf, data)
				if err != nil {
					return nil, fmt.Errorf("step %s: skip_if: %w", st.ID, err)
				}
				cmds = append(cmds, "# skip if this succeeds: "+c)
			}
			for _, r := range st.Run {
				c, err := labs.RenderCommand(r, data)
				if err != nil {
					return nil, fmt.Errorf("step %s: %w", st.ID, err)
				}
				cmds = append(cmds, c)
			}
			if st.Verify != nil {
				c, err := labs.RenderCommand(st.Verify.Run, data)
				if err != nil {
					return nil, fmt.Errorf("step %s: verify: %w", st.ID, err)
				}
				cmds = append(cmds, c)
			}
			if st.Kind == labs.KindCleanup {
				out = append(out, PlannedCommand{Host: h.Name, Cmd: "# stop the servers this run started (by their recorded pids, then every process group started from " + e.workdir() + ")"})
			}
			for _, c := range cmds {
				out = append(out, PlannedCommand{Host: h.Name, Cmd: c, Sudo: st.Sudo && !strings.HasPrefix(c, "# ")})
			}
			if st.Kind == labs.KindCleanup {
				out = append(out, PlannedCommand{Host: h.Name, Cmd: "rm -rf -- " + runner.Quote(e.workdir())})
			}
		}
	case labs.KindTemplate:
		if st.Template == nil {
			return nil, fmt.Errorf("step %s: no template keys", st.ID)
		}
		hosts, err := e.hosts.hosts(st.On)
		if err != nil {
			return nil, err
		}
		for _, h := range hosts {
			dest, err := labs.RenderText(string(st.Template.Dest), e.cmdData(h, vars))
			if err != nil {
				return nil, fmt.Errorf("step %s: dest: %w", st.ID, err)
			}
			out = append(out, PlannedCommand{Host: h.Name, Cmd: fmt.Sprintf("# write %s (rendered from %s)", strings.TrimSpace(dest), st.Template.Source), Sudo: st.Sudo})
		}
	case labs.KindDeploy:
		if st.Deploy == nil {
			return nil, fmt.Errorf("step %s: no deploy keys", st.ID)
		}
		p, err := e.planDeploy(st, vars, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, e.planServers(p)...)
	case labs.KindBench, labs.KindCompare:
		spec := st.Bench
		if spec == nil {
			return nil, fmt.Errorf("step %s: no bench profile", st.ID)
		}
		variants := []labs.Variant{{Label: spec.Target, Transport: spec.Transport}}
		if st.Kind == labs.KindCompare && st.Compare != nil {
			variants = st.Compare.Variants
		}
		client, err := e.clientHost(st)
		if err != nil {
			return nil, err
		}
		pv := vars
		if st.Compare != nil && st.Compare.Sweep != nil && len(st.Compare.Sweep.Values) > 0 {
			pv = map[string]string{}
			for k, v := range vars {
				pv[k] = v
			}
			pv[st.Compare.Sweep.Var] = st.Compare.Sweep.Values[0]
		}
		for _, v := range variants {
			group := v.Group
			if group == "" {
				group = spec.Target
			}
			dst, err := e.deployStepFor(group)
			if err != nil {
				return nil, fmt.Errorf("step %s: %w", st.ID, err)
			}
			p, err := e.planDeploy(dst, pv, &v)
			if err != nil {
				return nil, err
			}
			transport := ""
			if v.Transport.IsSet() {
				transport, _ = v.Transport.Resolve(pv)
			} else if spec.Transport.IsSet() {
				transport, _ = spec.Transport.Resolve(pv)
			}
			cfg, err := benchConfig(spec, pv, p.instances(e), transport)
			if err != nil {
				return nil, fmt.Errorf("step %s, variant %s: %w", st.ID, v.Label, err)
			}
			note := fmt.Sprintf("# variant %q", v.Label)
			if st.Kind == labs.KindBench {
				note = "# load against group " + group
			}
			out = append(out, PlannedCommand{Host: client.Name, Cmd: note})
			out = append(out, PlannedCommand{Host: client.Name, Cmd: e.benchCommand(client, cfg, benchPassword(pv) != "")})
			for _, h := range p.Hosts {
				out = append(out, PlannedCommand{Host: h.Name, Cmd: e.samplerCommand(h, client)})
			}
		}
	}
	return out, nil
}

// planServers lists the commands that start a deployment's instances.
func (e *Engine) planServers(p deployPlan) []PlannedCommand {
	var out []PlannedCommand
	for _, h := range p.Hosts {
		for k := 0; k < p.Instances; k++ {
			out = append(out, PlannedCommand{Host: h.Name, Cmd: e.serverCmd(h, p, p.Port+k)})
		}
	}
	return out
}
