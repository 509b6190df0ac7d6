package steps

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
)

// defaultCmdTimeout bounds a lab command whose step sets no timeout, so a
// hung command cannot stall a booth forever.
const defaultCmdTimeout = 10 * time.Minute

// runKind does the work of one step.
func (e *Engine) runKind(ctx context.Context, i int, st *labs.Step) error {
	question := st.Confirm
	if question == "" && st.Sudo {
		question = fmt.Sprintf("Step %q runs commands as root (sudo) on %s. Go ahead?", st.Title, e.hostList(st.On))
	}
	if question != "" {
		if err := e.confirm(ctx, st.ID, "", question); err != nil {
			return err
		}
	}
	switch st.Kind {
	case labs.KindRead:
		return nil
	case labs.KindRun, labs.KindCheck:
		return e.runCommands(ctx, st, false)
	case labs.KindCleanup:
		return e.runCleanupStep(ctx, st)
	case labs.KindTemplate:
		return e.runTemplate(ctx, st)
	case labs.KindDeploy:
		return e.runDeploy(ctx, st)
	case labs.KindBench:
		return e.runBenchStep(ctx, st)
	case labs.KindCompare:
		return e.runCompare(ctx, st)
	case labs.KindTCO:
		return e.runTCO(ctx, st)
	}
	return fmt.Errorf("step %s: unknown kind %q", st.ID, st.Kind)
}

// hostList names the hosts of roles for a question.
func (e *Engine) hostList(roles []string) string {
	hs, err := e.hosts.hosts(roles)
	if err != nil || len(hs) == 0 {
		return strings.Join(roles, ", ")
	}
	names := make([]string, len(hs))
	for i, h := range hs {
		names[i] = h.Name
	}
	return strings.Join(names, ", ")
}

// fanOut runs fn on every host of the step's roles in parallel. It returns
// errSkipped when every host skipped, else the first host's error (by host
// order) joined with the others. A cleanup step leaves out the hosts that
// no run of this lab reached: nothing was left there, and trying them again
// (an unknown host key, a refused connection) would only report the failure
// a second time, as cleanup's.
func (e *Engine) fanOut(ctx context.Context, st *labs.Step, fn func(context.Context, hostRef, runner.Target) error) error {
	hosts, err := e.hosts.hosts(st.On)
	if err != nil {
		return err
	}
	if len(hosts) == 0 {
		return fmt.Errorf("no host plays role %s (check the inventory)", strings.Join(st.On, ", "))
	}
	if st.Kind == labs.KindCleanup {
		hosts = slices.DeleteFunc(hosts, func(h hostRef) bool {
			e.mu.Lock()
			touched := h.Local || e.touchedLocked(h.Name)
			e.mu.Unlock()
			if !touched {
				e.say(st.ID, h.Name, "not cleaned up: no run of this lab reached it, so nothing was left there")
			}
			return !touched
		})
		if len(hosts) == 0 {
			return errSkipped
		}
	}
	errs := make([]error, len(hosts))
	var wg sync.WaitGroup
	for k, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t, err := e.hosts.target(ctx, h.Name)
			if err != nil {
				errs[k] = &StepError{Host: h.Name, Err: err}
				return
			}
			if err := e.ensureHost(ctx, h, t); err != nil {
				errs[k] = err
				return
			}
			errs[k] = fn(ctx, h, t)
		}()
	}
	wg.Wait()
	skipped := 0
	var real []error
	for _, err := range errs {
		switch {
		case errors.Is(err, errSkipped):
			skipped++
		case err != nil:
			real = append(real, err)
		}
	}
	if len(real) == 1 {
		return real[0]
	}
	if len(real) > 1 {
		// Keep the first StepError reachable for the host and tail.
		return fmt.Errorf("%w (and %d more hosts failed: %v)", real[0], len(real)-1, errors.Join(real[1:]...))
	}
	if skipped == len(hosts) {
		return errSkipped
	}
	return nil
}

// ensureHost prepares a host once per run: on a lab host, the lab's
// working directory and the dpulab binary in it. This machine needs
// neither (the working directory is made when something is written there,
// so a lab's own "create the working directory" step still does its job).
func (e *Engine) ensureHost(ctx context.Context, h hostRef, t runner.Target) error {
	e.mu.Lock()
	if e.prepared == nil {
		e.prepared = map[string]string{}
	}
	_, done := e.prepared[h.Name]
	e.mu.Unlock()
	if done {
		return nil
	}
	if err := e.reach(ctx, h, t); err != nil {
		return err
	}
	if !h.Local {
		if err := e.ensureWorkdir(ctx, h, t); err != nil {
			return err
		}
	}
	bin, err := e.hostBinary(ctx, h, t)
	if err != nil {
		return &StepError{Host: h.Name, Err: err}
	}
	plat, perr := t.Platform(ctx)
	e.mu.Lock()
	e.prepared[h.Name] = bin
	if perr == nil {
		// Results say what the run ran on (a replay names it).
		for i := range e.results.Hosts {
			if e.results.Hosts[i].Name == h.Name {
				e.results.Hosts[i].OS, e.results.Hosts[i].Arch = plat.OS, plat.Arch
			}
		}
	}
	e.mu.Unlock()
	return nil
}

// reach connects to a lab host and records it in saved progress as used by
// this run, before anything is made there. A host that cannot be reached
// has nothing of this run on it, and cleanup does not try it again.
func (e *Engine) reach(ctx context.Context, h hostRef, t runner.Target) error {
	if c, ok := t.(runner.Connector); ok && !h.Local {
		if err := c.Connect(ctx); err != nil {
			return &StepError{Host: h.Name, Err: err}
		}
	}
	return e.noteHost(h.Name)
}

// ensureWorkdir creates the lab's working directory on a host, once (until
// a cleanup, whose commands may remove it).
func (e *Engine) ensureWorkdir(ctx context.Context, h hostRef, t runner.Target) error {
	e.mu.Lock()
	if e.workdirMade == nil {
		e.workdirMade = map[string]bool{}
	}
	made := e.workdirMade[h.Name]
	e.mu.Unlock()
	if made {
		return nil
	}
	if err := e.reach(ctx, h, t); err != nil {
		return err
	}
	res, err := t.Run(ctx, runner.Command{Cmd: "mkdir -p -m 700 " + runner.Quote(e.workdir()), Timeout: time.Minute})
	if err != nil || res.ExitCode != 0 {
		return &StepError{Host: h.Name, Cmd: "mkdir " + e.workdir(), Tail: tailText(res.Tail), Err: fmt.Errorf("create the lab's working directory: %v", errOr(err, res))}
	}
	e.mu.Lock()
	e.workdirMade[h.Name] = true
	e.mu.Unlock()
	return nil
}

// dpulabOn is the path of dpulab on a host (a placeholder before upload,
// for plans).
func (e *Engine) dpulabOn(h hostRef) string {
	e.mu.Lock()
	bin, ok := e.prepared[h.Name]
	e.mu.Unlock()
	if ok {
		return bin
	}
	if h.Local || e.hosts.inv == nil {
		if p, err := e.binaryPath(); err == nil {
			return p
		}
	}
	return path.Join(e.workdir(), "dpulab")
}

func errOr(err error, res runner.Result) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("exit status %d", res.ExitCode)
}

func tailText(ls []runner.Line) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Text
	}
	return out
}

// cmdData is what a lab's command templates see on host h.
func (e *Engine) cmdData(h hostRef, vars map[string]string) map[string]any {
	return labs.Data(vars, map[string]any{
		labs.DataLab:     e.lab.ID,
		labs.DataHost:    h.Name,
		labs.DataRole:    h.Role,
		labs.DataWorkdir: e.workdir(),
		labs.DataDpulab:  e.dpulabOn(h),
	})
}

func (e *Engine) stepTimeout(st *labs.Step) (time.Duration, error) {
	d, err := st.Timeout.Duration(e.Vars(), defaultCmdTimeout)
	if err != nil {
		return 0, fmt.Errorf("timeout: %w", err)
	}
	return d, nil
}

// runCommands runs a run or check step on every host of its roles:
// skip_if, the commands in order (stopping at the first failure), verify.
// keepGoing runs every command even after a failure (cleanup).
func (e *Engine) runCommands(ctx context.Context, st *labs.Step, keepGoing bool) error {
	timeout, err := e.stepTimeout(st)
	if err != nil {
		return err
	}
	vars := e.Vars()
	return e.fanOut(ctx, st, func(ctx context.Context, h hostRef, t runner.Target) error {
		data := e.cmdData(h, vars)
		if st.SkipIf != "" {
			cmd, err := labs.RenderCommand(st.SkipIf, data)
			if err != nil {
				return fmt.Errorf("skip_if: %w", err)
			}
			res, err := t.Run(ctx, runner.Command{Cmd: cmd, Sudo: st.Sudo, Timeout: timeout})
			if err != nil {
				return &StepError{Host: h.Name, Cmd: cmd, Tail: tailText(res.Tail), Err: fmt.Errorf("skip_if: %w", err)}
			}
			if res.ExitCode == 0 {
				e.opts.Emit(Output{Step: st.ID, Line: runner.Line{Host: h.Name, Text: "already done (skip_if held): skipped", Time: time.Now()}})
				return errSkipped
			}
		}
		var errs []error
		for _, c := range st.Run {
			cmd, err := labs.RenderCommand(c, data)
			if err != nil {
				return fmt.Errorf("render command: %w", err)
			}
			res, err := t.Run(ctx, runner.Command{Cmd: cmd, Sudo: st.Sudo, Timeout: timeout, Output: e.emitOutput(st.ID)})
			if err == nil && res.ExitCode != 0 {
				err = fmt.Errorf("exit status %d", res.ExitCode)
			}
			if err != nil {
				serr := &StepError{Host: h.Name, Cmd: cmd, Tail: tailText(res.Tail), Err: err}
				if !keepGoing {
					return serr
				}
				errs = append(errs, serr)
			}
		}
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
		if st.Verify != nil {
			return e.verify(ctx, st, h, t, data, timeout)
		}
		return nil
	})
}

// verify runs a step's check until it passes or its retries run out.
func (e *Engine) verify(ctx context.Context, st *labs.Step, h hostRef, t runner.Target, data map[string]any, timeout time.Duration) error {
	v := st.Verify
	cmd, err := labs.RenderCommand(v.Run, data)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	var re *regexp.Regexp
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

// runCleanupStep stops the servers deployed on the step's roles, then runs
// its commands, all of them even when one fails.
func (e *Engine) runCleanupStep(ctx context.Context, st *labs.Step) error {
	var errs []error
	if err := e.stopAll(ctx); err != nil {
		errs = append(errs, err)
	}
	if len(st.Run) > 0 || st.Verify != nil {
		if err := e.runCommands(ctx, st, true); err != nil && !errors.Is(err, errSkipped) {
			errs = append(errs, err)
		}
	}
	e.sweepRun(ctx, st.ID)
	return errors.Join(errs...)
}

// runTemplate renders a template file per host and writes it there
// atomically (upload to a temp name in the working dir, then mv).
func (e *Engine) runTemplate(ctx context.Context, st *labs.Step) error {
	spec := st.Template
	if spec == nil {
		return errors.New("template step without template keys")
	}
	src, err := e.lab.ReadFile(spec.Source)
	if err != nil {
		return fmt.Errorf("read template %s: %w", spec.Source, err)
	}
	mode := spec.Mode
	if mode == 0 {
		mode = 0o644
	}
	vars := e.Vars()
	return e.fanOut(ctx, st, func(ctx context.Context, h hostRef, t runner.Target) error {
		data := e.cmdData(h, vars)
		dest, err := labs.RenderText(string(spec.Dest), data)
		if err != nil {
			return fmt.Errorf("dest: %w", err)
		}
		dest = strings.TrimSpace(dest)
		if dest == "" {
			return errors.New("template dest is empty")
		}
		body, err := labs.RenderText(string(src), data)
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

// writeOnHost writes content to dest on a host so that a reader sees the
// old file or the new one, never half of it.
func (e *Engine) writeOnHost(ctx context.Context, h hostRef, t runner.Target, dest string, content []byte, mode os.FileMode, sudo bool) error {
	if err := e.ensureWorkdir(ctx, h, t); err != nil {
		return err
	}
	// Staged in the working directory (no temporary file on this machine,
	// none left anywhere cleanup does not remove), then moved into place,
	// with sudo when the destination needs it.
	tmp := path.Join(e.workdir(), fmt.Sprintf(".upload-%d-%s", time.Now().UnixNano(), path.Base(dest)))
	if err := runner.WriteFile(ctx, t, tmp, content, mode); err != nil {
		return &StepError{Host: h.Name, Err: fmt.Errorf("upload %s: %w", dest, err)}
	}
	cmd := "mkdir -p " + runner.Quote(path.Dir(dest)) + " && mv -f " + runner.Quote(tmp) + " " + runner.Quote(dest)
	res, err := t.Run(ctx, runner.Command{Cmd: cmd, Sudo: sudo, Timeout: time.Minute})
	if err != nil || res.ExitCode != 0 {
		_, _ = t.Run(ctx, runner.Command{Cmd: "rm -f " + runner.Quote(tmp), Timeout: time.Minute})
		return &StepError{Host: h.Name, Cmd: cmd, Tail: tailText(res.Tail), Err: fmt.Errorf("write %s: %v", dest, errOr(err, res))}
	}
	return nil
}
