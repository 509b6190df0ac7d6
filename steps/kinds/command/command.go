// Package command is the run and check step kinds, and the commands plan
// the task and cleanup kinds build on: a step's skip_if, its commands in
// order and its verify, rendered per host and run on every host of its
// roles in parallel.
package command

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/kind"
)

// A run step runs its commands on every host of its roles, in parallel:
// skip_if, the commands in order (stopping at the first failure), then
// verify. A check step is the same with verify alone (a prerequisite).
// The command keys are labs' (several kinds share them); run's record:
// is this package's.
func init() {
	labs.WrapKind(labs.KindRun, func(syn labs.KindSyntax) labs.KindSyntax {
		parse := syn.Parse
		syn.Keys = append(slices.Clone(syn.Keys), "record")
		syn.Parse = func(sp *labs.StepParser, s *labs.Step) {
			if parse != nil {
				parse(sp, s)
			}
			if sp.Has("record") {
				r := sp.String("record")
				if !slices.Contains(RecordFormats, r) {
					sp.Errorf("record", "record %q: want one of %s", r, strings.Join(RecordFormats, ", "))
				}
				s.Spec = &RunSpec{Record: r}
			}
		}
		syn.Encode = func(s *labs.Step, m *labs.StepEncoder) {
			if r := recordOf(s); r != "" {
				m.String("record", r)
			}
		}
		return syn
	})
	for _, k := range []labs.Kind{labs.KindRun, labs.KindCheck} {
		kind.Register(k, kind.Kind{Resolve: func(env kind.Env, st *labs.Step, vars map[string]string) (kind.Plan, error) {
			return Resolve(env, st, vars, false)
		}})
	}
}

// RecordFormats are the outputs a run step's record: can name, each read
// by the engine (steps/record_*.go): "perftest", the result tables of
// perftest's ib_*_lat and ib_*_bw clients (the physical floor an RDMA lab
// sets its Redis figures beside).
var RecordFormats = []string{"perftest"}

// RunSpec is a run step's own key, kept in labs.Step.Spec when it is set.
type RunSpec struct {
	// Record names the format of figures its commands print that the
	// engine keeps beside the lab's benchmarks (results' measured
	// figures, the reports): one of RecordFormats.
	Record string
}

// recordOf is st's record: ("" for none).
func recordOf(st *labs.Step) string {
	if r, ok := st.Spec.(*RunSpec); ok {
		return r.Record
	}
	return ""
}

// Plan is a run, check, task or cleanup step resolved: its hosts, its
// timeout, and the variables its commands are rendered with.
type Plan struct {
	Env     kind.Env
	Step    *labs.Step
	Vars    map[string]string
	Hosts   []kind.Host
	Timeout time.Duration
	// keepGoing runs every command even after a failure (cleanup).
	keepGoing bool
}

// Script is a step's commands rendered for one host.
type Script struct {
	SkipIf string
	Run    []string
	Verify string
}

// Resolve resolves a step of commands; keepGoing runs every command even
// after one failed (cleanup's way).
func Resolve(env kind.Env, st *labs.Step, vars map[string]string, keepGoing bool) (*Plan, error) {
	timeout, err := st.Timeout.Duration(vars, kind.DefaultCmdTimeout)
	if err != nil {
		return nil, fmt.Errorf("timeout: %w", err)
	}
	hosts, err := env.HostsOf(st.On)
	if err != nil {
		return nil, err
	}
	p := &Plan{Env: env, Step: st, Vars: vars, Hosts: hosts, Timeout: timeout, keepGoing: keepGoing}
	for _, h := range hosts {
		if _, err := p.Script(h); err != nil {
			return nil, fmt.Errorf("step %s: %w", st.ID, err)
		}
	}
	return p, nil
}

// Script renders the step's commands for host h. The run renders them
// again once the host is prepared (the dpulab binary's path is known only
// after its upload); everything else is the same.
func (p *Plan) Script(h kind.Host) (Script, error) {
	var sc Script
	data := p.Env.CmdData(h, p.Vars)
	var err error
	if p.Step.SkipIf != "" {
		if sc.SkipIf, err = labs.RenderCommand(p.Step.SkipIf, data); err != nil {
			return sc, fmt.Errorf("skip_if: %w", err)
		}
	}
	for _, r := range p.Step.Run {
		c, err := labs.RenderCommand(r, data)
		if err != nil {
			return sc, fmt.Errorf("render command: %w", err)
		}
		sc.Run = append(sc.Run, c)
	}
	if p.Step.Verify != nil {
		if sc.Verify, err = labs.RenderCommand(p.Step.Verify.Run, data); err != nil {
			return sc, fmt.Errorf("verify: %w", err)
		}
	}
	return sc, nil
}

// Commands lists, per host, skip_if (as a note), the commands and verify.
func (p *Plan) Commands() []kind.PlannedCommand {
	var out []kind.PlannedCommand
	for _, h := range p.Hosts {
		sc, _ := p.Script(h) // Resolve rendered every host already
		if sc.SkipIf != "" {
			out = append(out, kind.PlannedCommand{Host: h.Name, Cmd: "# skip if this succeeds: " + sc.SkipIf})
		}
		for _, c := range sc.Run {
			out = append(out, kind.PlannedCommand{Host: h.Name, Cmd: c, Sudo: p.Step.Sudo})
		}
		if sc.Verify != "" {
			out = append(out, kind.PlannedCommand{Host: h.Name, Cmd: sc.Verify, Sudo: p.Step.Sudo})
		}
	}
	return out
}

// Run runs the step on every host of its roles.
func (p *Plan) Run(ctx context.Context) error {
	env, st := p.Env, p.Step
	return env.FanOut(ctx, st, func(ctx context.Context, h kind.Host, t runner.Target) error {
		sc, err := p.Script(h)
		if err != nil {
			return err
		}
		if sc.SkipIf != "" {
			res, err := t.Run(ctx, runner.Command{Cmd: sc.SkipIf, Sudo: st.Sudo, Timeout: p.Timeout})
			if err != nil {
				return &kind.StepError{Host: h.Name, Cmd: sc.SkipIf, Tail: kind.TailText(res.Tail), Err: fmt.Errorf("skip_if: %w", err)}
			}
			if res.ExitCode == 0 {
				env.Say(st.ID, h.Name, "skipped here: its skip_if check succeeded (already done, or not needed on this host)")
				return kind.ErrSkipped
			}
		}
		var errs []error
		output := env.Output(st.ID)
		var mu sync.Mutex
		var recorded []string
		record := recordOf(st)
		if record != "" {
			// The figures the step records are read from what its
			// commands print on standard output, as it is shown.
			emit := output
			output = func(l runner.Line) {
				if l.Stream == runner.Stdout {
					mu.Lock()
					recorded = append(recorded, l.Text)
					mu.Unlock()
				}
				emit(l)
			}
		}
		for _, cmd := range sc.Run {
			res, err := t.Run(ctx, runner.Command{Cmd: cmd, Sudo: st.Sudo, Timeout: p.Timeout, Output: output})
			if err == nil && res.ExitCode != 0 {
				err = fmt.Errorf("exit status %d", res.ExitCode)
			}
			if err != nil {
				serr := &kind.StepError{Host: h.Name, Cmd: cmd, Tail: kind.TailText(res.Tail), Err: err}
				if !p.keepGoing {
					return serr
				}
				errs = append(errs, serr)
			}
		}
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
		if record != "" {
			mu.Lock()
			lines := recorded
			mu.Unlock()
			env.Record(st.ID, h.Name, record, lines)
		}
		if st.Verify != nil {
			return Verify(ctx, env, st, h, t, sc.Verify, p.Timeout)
		}
		return nil
	})
}

// Verify runs a step's check on host h until it passes or its retries run
// out.
func Verify(ctx context.Context, env kind.Env, st *labs.Step, h kind.Host, t runner.Target, cmd string, timeout time.Duration) error {
	v := st.Verify
	var re *regexp.Regexp
	var err error
	if v.Expect != "" {
		// Multi-line mode: ^ and $ match at every line of the output,
		// which is what a lab author checking a line means.
		re, err = regexp.Compile("(?m)" + v.Expect)
		if err != nil {
			return fmt.Errorf("verify: expect %q is not a regular expression: %w", v.Expect, err)
		}
	}
	interval := v.Interval
	if interval <= 0 {
		interval = time.Second
	}
	var last error
	var tail []string
	for try := 0; try <= v.Retries; try++ {
		if try > 0 {
			select {
			case <-ctx.Done():
				return &kind.StepError{Host: h.Name, Cmd: cmd, Tail: tail, Err: ctx.Err()}
			case <-env.After(interval):
			}
		}
		var mu sync.Mutex
		var out strings.Builder
		emit := env.Output(st.ID)
		res, err := t.Run(ctx, runner.Command{Cmd: cmd, Sudo: st.Sudo, Timeout: timeout, Output: func(l runner.Line) {
			mu.Lock()
			out.WriteString(l.Text)
			out.WriteByte('\n')
			mu.Unlock()
			emit(l)
		}})
		tail = kind.TailText(res.Tail)
		switch {
		case err != nil:
			last = err
		case res.ExitCode != v.ExpectExit:
			last = fmt.Errorf("check failed: exit status %d (want %d)", res.ExitCode, v.ExpectExit)
		case re != nil && !re.MatchString(out.String()):
			last = fmt.Errorf("check failed: output does not match %q", v.Expect)
		default:
			return nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	if v.Retries > 0 {
		last = fmt.Errorf("%w (after %d tries)", last, v.Retries+1)
	}
	return &kind.StepError{Host: h.Name, Cmd: cmd, Tail: tail, Err: last}
}
