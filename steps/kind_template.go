package steps

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
)

// A template step renders a file from a template of the lab for each host
// of its roles and writes it there atomically (uploaded to a temporary name
// beside it, then renamed over it).
func init() {
	registerKind(labs.KindTemplate, kind{resolve: resolveTemplate})
}

type templatePlan struct {
	e     *Engine
	st    *labs.Step
	vars  map[string]string
	hosts []hostRef
	src   []byte
	dests []string // per host, rendered
}

func resolveTemplate(e *Engine, st *labs.Step, vars map[string]string) (stepPlan, error) {
	spec := st.Template
	if spec == nil {
		return nil, fmt.Errorf("step %s: no template keys", st.ID)
	}
	src, err := e.lab.ReadFile(spec.Source)
	if err != nil {
		return nil, fmt.Errorf("read template %s: %w", spec.Source, err)
	}
	hosts, err := e.hosts.hosts(st.On)
	if err != nil {
		return nil, err
	}
	p := &templatePlan{e: e, st: st, vars: vars, hosts: hosts, src: src}
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
func (p *templatePlan) dest(h hostRef) (string, error) {
	dest, err := labs.RenderText(string(p.st.Template.Dest), p.e.cmdData(h, p.vars))
	if err != nil {
		return "", fmt.Errorf("dest: %w", err)
	}
	dest = strings.TrimSpace(dest)
	if dest == "" {
		return "", errors.New("template dest is empty")
	}
	return dest, nil
}

func (p *templatePlan) commands() []PlannedCommand {
	out := make([]PlannedCommand, len(p.hosts))
	for i, h := range p.hosts {
		out[i] = PlannedCommand{Host: h.Name, Cmd: fmt.Sprintf("# write %s (rendered from %s)", p.dests[i], p.st.Template.Source), Sudo: p.st.Sudo}
	}
	return out
}

func (p *templatePlan) run(ctx context.Context) error {
	e, st, spec := p.e, p.st, p.st.Template
	mode := spec.Mode
	if mode == 0 {
		mode = 0o644
	}
	return e.fanOut(ctx, st, func(ctx context.Context, h hostRef, t runner.Target) error {
		dest, err := p.dest(h)
		if err != nil {
			return err
		}
		body, err := labs.RenderText(string(p.src), e.cmdData(h, p.vars))
		if err != nil {
			return fmt.Errorf("render %s: %w", spec.Source, err)
		}
		if err := e.writeOnHost(ctx, h, t, dest, []byte(body), mode, st.Sudo); err != nil {
			return err
		}
		e.opts.Emit(Output{Step: st.ID, Line: runner.Line{Host: h.Name, Text: fmt.Sprintf("wrote %s (%d bytes, from %s)", dest, len(body), spec.Source), Time: time.Now()}})
		return nil
	})
}
