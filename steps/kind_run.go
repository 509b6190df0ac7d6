package steps

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
)

// A run step runs its commands on every host of its roles, in parallel:
// skip_if, the commands in order (stopping at the first failure), then
// verify. A check step is the same with verify alone (a prerequisite).
func init() {
	for _, k := range []labs.Kind{labs.KindRun, labs.KindCheck} {
		registerKind(k, kind{resolve: func(e *Engine, st *labs.Step, vars map[string]string) (stepPlan, error) {
			return e.resolveCommands(st, vars, false)
		}})
	}
}

// commandsPlan is a run, check or cleanup step resolved: its hosts, its
// timeout, and the variables its commands are rendered with.
type commandsPlan struct {
	e       *Engine
	st      *labs.Step
	vars    map[string]string
	hosts   []hostRef
	timeout time.Duration
	// keepGoing runs every command even after a failure (cleanup).
	keepGoing bool
}

// hostScript is a step's commands rendered for one host.
type hostScript struct {
	skipIf string
	run    []string
	verify string
}

func (e *Engine) resolveCommands(st *labs.Step, vars map[string]string, keepGoing bool) (*commandsPlan, error) {
	timeout, err := st.Timeout.Duration(vars, defaultCmdTimeout)
	if err != nil {
		return nil, fmt.Errorf("timeout: %w", err)
	}
	hosts, err := e.hosts.hosts(st.On)
	if err != nil {
		return nil, err
	}
	p := &commandsPlan{e: e, st: st, vars: vars, hosts: hosts, timeout: timeout, keepGoing: keepGoing}
	for _, h := range hosts {
		if _, err := p.script(h); err != nil {
			return nil, fmt.Errorf("step %s: %w", st.ID, err)
		}
	}
	return p, nil
}

// script renders the step's commands for host h. The run renders them
// again once the host is prepared (the dpulab binary's path is known only
// after its upload); everything else is the same.
func (p *commandsPlan) script(h hostRef) (hostScript, error) {
	var sc hostScript
	data := p.e.cmdData(h, p.vars)
	var err error
	if p.st.SkipIf != "" {
		if sc.skipIf, err = labs.RenderCommand(p.st.SkipIf, data); err != nil {
			return sc, fmt.Errorf("skip_if: %w", err)
		}
	}
	for _, r := range p.st.Run {
		c, err := labs.RenderCommand(r, data)
		if err != nil {
			return sc, fmt.Errorf("render command: %w", err)
		}
		sc.run = append(sc.run, c)
	}
	if p.st.Verify != nil {
		if sc.verify, err = labs.RenderCommand(p.st.Verify.Run, data); err != nil {
			return sc, fmt.Errorf("verify: %w", err)
		}
	}
	return sc, nil
}

func (p *commandsPlan) commands() []PlannedCommand {
	var out []PlannedCommand
	for _, h := range p.hosts {
		sc, _ := p.script(h) // resolveCommands rendered every host already
		if sc.skipIf != "" {
			out = append(out, PlannedCommand{Host: h.Name, Cmd: "# skip if this succeeds: " + sc.skipIf})
		}
		for _, c := range sc.run {
			out = append(out, PlannedCommand{Host: h.Name, Cmd: c, Sudo: p.st.Sudo})
		}
		if sc.verify != "" {
			out = append(out, PlannedCommand{Host: h.Name, Cmd: sc.verify, Sudo: p.st.Sudo})
		}
	}
	return out
}

func (p *commandsPlan) run(ctx context.Context) error {
	e, st := p.e, p.st
	return e.fanOut(ctx, st, func(ctx context.Context, h hostRef, t runner.Target) error {
		sc, err := p.script(h)
		if err != nil {
			return err
		}
		if sc.skipIf != "" {
			res, err := t.Run(ctx, runner.Command{Cmd: sc.skipIf, Sudo: st.Sudo, Timeout: p.timeout})
			if err != nil {
				return &StepError{Host: h.Name, Cmd: sc.skipIf, Tail: tailText(res.Tail), Err: fmt.Errorf("skip_if: %w", err)}
			}
			if res.ExitCode == 0 {
				e.opts.Emit(Output{Step: st.ID, Line: runner.Line{Host: h.Name, Text: "skipped here: its skip_if check succeeded (already done, or not needed on this host)", Time: time.Now()}})
				return errSkipped
			}
		}
		var errs []error
		output := e.emitOutput(st.ID)
		var mu sync.Mutex
		var recorded []string
		if st.Record != "" {
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
		for _, cmd := range sc.run {
			res, err := t.Run(ctx, runner.Command{Cmd: cmd, Sudo: st.Sudo, Timeout: p.timeout, Output: output})
			if err == nil && res.ExitCode != 0 {
				err = fmt.Errorf("exit status %d", res.ExitCode)
			}
			if err != nil {
				serr := &StepError{Host: h.Name, Cmd: cmd, Tail: tailText(res.Tail), Err: err}
				if !p.keepGoing {
					return serr
				}
				errs = append(errs, serr)
			}
		}
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
		if read := recorders[st.Record]; read != nil {
			mu.Lock()
			figs := read(recorded)
			mu.Unlock()
			e.keepHostFigures(st.ID, h.Name, figs)
		}
		if st.Verify != nil {
			return e.verify(ctx, st, h, t, sc.verify, p.timeout)
		}
		return nil
	})
}

// verify runs a step's check until it passes or its retries run out.
func (e *Engine) verify(ctx context.Context, st *labs.Step, h hostRef, t runner.Target, cmd string, timeout time.Duration) error {
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
				return &StepError{Host: h.Name, Cmd: cmd, Tail: tail, Err: ctx.Err()}
			case <-time.After(interval):
			}
		}
		var mu sync.Mutex
		var out strings.Builder
		emit := e.emitOutput(st.ID)
		res, err := t.Run(ctx, runner.Command{Cmd: cmd, Sudo: st.Sudo, Timeout: timeout, Output: func(l runner.Line) {
			mu.Lock()
			out.WriteString(l.Text)
			out.WriteByte('\n')
			mu.Unlock()
			emit(l)
		}})
		tail = tailText(res.Tail)
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
	return &StepError{Host: h.Name, Cmd: cmd, Tail: tail, Err: last}
}
