// Package template is the template step kind: it renders a file from a
// template of the lab for each host of its roles and writes it there
// atomically (the engine's WriteFile: uploaded beside it, then renamed
// over it).
package template

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/kind"
)

func init() {
	kind.Register(labs.KindTemplate, kind.Kind{Resolve: resolve, WritesFiles: true})
}

type plan struct {
	env   kind.Env
	st    *labs.Step
	vars  map[string]string
	hosts []kind.Host
	src   []byte
	dests []string // per host, rendered
}

var _ kind.Renderer = (*plan)(nil)

func resolve(env kind.Env, st *labs.Step, vars map[string]string) (kind.Plan, error) {
	spec := st.Template
	if spec == nil {
		return nil, fmt.Errorf("step %s: no template keys", st.ID)
	}
	src, err := env.Lab().ReadFile(spec.Source)
	if err != nil {
		return nil, fmt.Errorf("read template %s: %w", spec.Source, err)
	}
	hosts, err := env.HostsOf(st.On)
	if err != nil {
		return nil, err
	}
	p := &plan{env: env, st: st, vars: vars, hosts: hosts, src: src}
	for _, h := range hosts {
		dest, err := p.dest(h)
		if err != nil {
			return nil, fmt.Errorf("step %s: %w", st.ID, err)
		}
		p.dests = append(p.dests, dest)
	}
	return p, nil
}

// dest is where the file goes on host h.
func (p *plan) dest(h kind.Host) (string, error) {
	dest, err := labs.RenderText(string(p.st.Template.Dest), p.env.CmdData(h, p.vars))
	if err != nil {
		return "", fmt.Errorf("dest: %w", err)
	}
	dest = strings.TrimSpace(dest)
	if dest == "" {
		return "", errors.New("template dest is empty")
	}
	return dest, nil
}

// Commands shows, per host, the file written (no shell command runs).
func (p *plan) Commands() []kind.PlannedCommand {
	out := make([]kind.PlannedCommand, len(p.hosts))
	for i, h := range p.hosts {
		out[i] = kind.PlannedCommand{Host: h.Name, Cmd: fmt.Sprintf("# write %s (rendered from %s)", p.dests[i], p.st.Template.Source), Sudo: p.st.Sudo}
	}
	return out
}

// Run renders and writes the file on every host of the step's roles.
func (p *plan) Run(ctx context.Context) error {
	env, st, spec := p.env, p.st, p.st.Template
	mode := spec.Mode
	if mode == 0 {
		mode = 0o644
	}
	return env.FanOut(ctx, st, func(ctx context.Context, h kind.Host, t runner.Target) error {
		dest, err := p.dest(h)
		if err != nil {
			return err
		}
		body, err := labs.RenderText(string(p.src), env.CmdData(h, p.vars))
		if err != nil {
			return fmt.Errorf("render %s: %w", spec.Source, err)
		}
		if err := env.WriteFile(ctx, h, t, dest, []byte(body), mode, st.Sudo); err != nil {
			return err
		}
		env.Say(st.ID, h.Name, "wrote %s (%d bytes, from %s)", dest, len(body), spec.Source)
		return nil
	})
}

// Rendered is the template rendered for each host, as Run writes it.
func (p *plan) Rendered() ([]kind.RenderedFile, error) {
	var out []kind.RenderedFile
	for k, h := range p.hosts {
		body, err := labs.RenderText(string(p.src), p.env.CmdData(h, p.vars))
		if err != nil {
			return out, fmt.Errorf("render %s: %w", p.st.Template.Source, err)
		}
		out = append(out, kind.RenderedFile{Step: p.st.ID, Host: h.Name, Path: p.dests[k], Source: p.st.Template.Source, Content: body})
	}
	return out, nil
}
