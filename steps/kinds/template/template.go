// Package template is the template step kind: it renders a file from a
// template of the lab for each host of its roles and writes it there
// atomically (the engine's WriteFile: uploaded beside it, then renamed
// over it). Its keys (template, dest, mode) are read, checked and written
// back here (Spec), registered with labs.
//
//	steps:
//	  - id: conf
//	    title: Write the configuration
//	    kind: template
//	    template: app.conf.tmpl    # a file of the lab, or assets/NAME
//	    dest: "{{.workdir}}/app.conf"
//	    mode: "0600"               # octal; default 0644
package template

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/kind"
)

// Spec is a template step's own keys, kept in labs.Step.Spec.
type Spec struct {
	// Source is the template file: relative to the lab dir, or
	// "assets/NAME" for a file shipped in package assets.
	Source string
	// Dest is where it is written on each host: a text-context template
	// that sees the same data as commands (.workdir, .host, .vars...), so
	// it is rendered with labs.RenderText, not Value.Resolve.
	Dest labs.Value
	// Mode is the file mode (default 0644).
	Mode fs.FileMode
}

func init() {
	labs.RegisterKind(labs.KindTemplate, labs.KindSyntax{
		Keys:    []string{"template", "dest", "mode", "sudo", "skip_if", "verify"},
		OnHosts: true,
		Parse:   parse,
		Encode: func(s *labs.Step, m *labs.StepEncoder) {
			if t, ok := s.Spec.(*Spec); ok {
				m.String("template", t.Source)
				m.String("dest", string(t.Dest))
				m.String("mode", fmt.Sprintf("%04o", uint32(t.Mode)))
			}
		},
	})
	kind.Register(labs.KindTemplate, kind.Kind{Resolve: resolve, WritesFiles: true})
}

// parse reads the keys: the template file is there and parses (lint
// reports its errors at their line in the file), dest is a template of
// the data commands see, mode an octal file mode.
func parse(sp *labs.StepParser, s *labs.Step) {
	sp.Require("template", "dest")
	t := &Spec{Mode: 0o644}
	t.Source = sp.TemplateFile("template")
	t.Dest = sp.TextTemplate("dest")
	if sp.Has("mode") {
		ms := sp.String("mode")
		mode, err := strconv.ParseUint(ms, 8, 32)
		if err != nil || mode > 0o777 {
			sp.Errorf("mode", "mode %q: write an octal file mode such as 0644", ms)
		}
		t.Mode = fs.FileMode(mode)
	}
	s.Spec = t
}

// specOf is st's keys (nil for a step this package did not read).
func specOf(st *labs.Step) *Spec {
	t, _ := st.Spec.(*Spec)
	return t
}

type plan struct {
	env   kind.Env
	st    *labs.Step
	spec  *Spec
	vars  map[string]string
	hosts []kind.Host
	src   []byte
	dests []string // per host, rendered
}

var _ kind.Renderer = (*plan)(nil)

func resolve(env kind.Env, st *labs.Step, vars map[string]string) (kind.Plan, error) {
	spec := specOf(st)
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
	p := &plan{env: env, st: st, spec: spec, vars: vars, hosts: hosts, src: src}
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
	dest, err := labs.RenderText(string(p.spec.Dest), p.env.CmdData(h, p.vars))
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
		out[i] = kind.PlannedCommand{Host: h.Name, Cmd: fmt.Sprintf("# write %s (rendered from %s)", p.dests[i], p.spec.Source), Sudo: p.st.Sudo}
	}
	return out
}

// Run renders and writes the file on every host of the step's roles.
func (p *plan) Run(ctx context.Context) error {
	env, st, spec := p.env, p.st, p.spec
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
			return out, fmt.Errorf("render %s: %w", p.spec.Source, err)
		}
		out = append(out, kind.RenderedFile{Step: p.st.ID, Host: h.Name, Path: p.dests[k], Source: p.spec.Source, Content: body})
	}
	return out, nil
}
