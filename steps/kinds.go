package steps

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
)

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
	bin, agent, err := e.hostBinary(ctx, h, t)
	if err != nil {
		var se *StepError
		if errors.As(err, &se) {
			return se
		}
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
				e.results.Hosts[i].Agent, e.results.Hosts[i].AgentSHA256 = agent.version, agent.sha256
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
	if e.opts.Binary != "" {
		return path.Join(e.workdir(), "dpulab")
	}
	return path.Join(e.workdir(), "dpulab-agent")
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
		labs.DataLabels:  e.hostLabels(h.Name),
	})
}

// hostLabels is a host's inventory labels, never nil (an empty map for
// this machine without an inventory, or a host without labels), so that
// {{index .labels "x"}} is "" rather than an error.
func (e *Engine) hostLabels(name string) map[string]string {
	out := map[string]string{}
	if e.hosts == nil || e.hosts.inv == nil {
		return out
	}
	if host, ok := e.hosts.inv.Host(name); ok {
		for k, v := range host.Labels {
			out[k] = v
		}
	}
	return out
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
