package steps

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/runner/netpath"
	"github.com/dpulab/dpulab/steps/kinds/load"
)

// A compare variant with netpath runs over an emulated network path
// (runner/netpath, issue 13): its servers in one network namespace of the
// load generator's host, the load generator in another, joined directly,
// through a stateful firewall, or through an overlay and the firewall. The
// engine makes the path before the variant's job, deploys the group inside
// it, runs the bench and the sampler there, reads the path's counters
// around the bench, and tears it all down after the job, on failure and on
// cancel too. Each path is recorded in the saved progress before it is
// made, so a run killed mid-job leaves a record that the next run (or the
// cleanup step) tears down; `dpulab cleanup` removes what no record names.

// hostCPUs is the cached CPU count of a host (0: not asked yet).
func (e *Engine) hostCPUs(host string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cpus[host]
}

// learnCPUs asks a host for its CPU count once per run.
func (e *Engine) learnCPUs(ctx context.Context, host string, t runner.Target) int {
	if n := e.hostCPUs(host); n > 0 {
		return n
	}
	n := load.CPUCount(ctx, t)
	e.mu.Lock()
	if e.cpus == nil {
		e.cpus = map[string]int{}
	}
	e.cpus[host] = n
	e.mu.Unlock()
	return n
}

// probePaths says which paths can be made on a host, asked once per run.
func (e *Engine) probePaths(ctx context.Context, host string, t runner.Target) (netpath.Report, error) {
	e.mu.Lock()
	r, ok := e.pathProbe[host]
	e.mu.Unlock()
	if ok {
		return r, nil
	}
	r, err := netpath.Probe(ctx, t, false)
	if err != nil {
		return r, err
	}
	e.mu.Lock()
	if e.pathProbe == nil {
		e.pathProbe = map[string]netpath.Report{}
	}
	e.pathProbe[host] = r
	e.mu.Unlock()
	return r, nil
}

// makePath makes a planned path, recording it in the saved progress
// before anything exists, so a run killed during the make is cleaned up
// after too.
func (e *Engine) makePath(ctx context.Context, step string, h hostRef, t runner.Target, cfg netpath.Config) (*netpath.Path, error) {
	planned, err := netpath.Plan(h.Name, &cfg)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.state.Paths = append(e.state.Paths, planned)
	serr := e.saveStateLocked()
	e.mu.Unlock()
	if serr != nil {
		return nil, serr
	}
	p, err := netpath.Make(ctx, t, cfg)
	if err != nil {
		// Make removed what it had made.
		e.forgetPath(planned)
		return nil, &StepError{Host: h.Name, Err: err}
	}
	e.mu.Lock()
	for i := range e.state.Paths {
		if e.state.Paths[i].Host == p.Host && e.state.Paths[i].RunID == p.RunID {
			e.state.Paths[i] = *p
		}
	}
	serr = e.saveStateLocked()
	e.mu.Unlock()
	msg := fmt.Sprintf("made the %s path (namespaces %s and %s, server at %s)", p.Variant, p.ServerNS, p.ClientNS, p.ServerAddr)
	if p.Encap != "" {
		msg += ", overlay " + string(p.Encap)
		if p.EncapNote != "" {
			msg += " (" + p.EncapNote + ")"
		}
	}
	if p.FirewallRules > 0 {
		msg += fmt.Sprintf(", %d-rule stateful firewall", p.FirewallRules)
	}
	e.say(step, h.Name, "%s", msg)
	return p, serr
}

func (e *Engine) forgetPath(p netpath.Path) {
	e.mu.Lock()
	e.state.Paths = slices.DeleteFunc(e.state.Paths, func(x netpath.Path) bool { return x.Host == p.Host && x.RunID == p.RunID })
	_ = e.saveStateLocked()
	e.mu.Unlock()
}

// teardownPath stops the group's servers that run inside the path (a
// namespace lives on while a process is in it), then removes the path. It
// runs on a context of its own, so a cancelled run still cleans up.
func (e *Engine) teardownPath(ctx context.Context, step, group string, p *netpath.Path) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if group != "" {
		if err := e.stopGroup(ctx, group); err != nil {
			return err
		}
	}
	t, err := e.hosts.target(ctx, p.Host)
	if err != nil {
		return &StepError{Host: p.Host, Err: err}
	}
	if err := p.Teardown(ctx, t); err != nil {
		return &StepError{Host: p.Host, Err: fmt.Errorf("remove the %s path: %w (run `dpulab cleanup`)", p.Variant, err)}
	}
	e.forgetPath(*p)
	e.say(step, p.Host, "removed the %s path", p.Variant)
	return nil
}

// teardownPaths removes every recorded path (cleanup, or an earlier run's
// leftovers), after the processes that may hold them are stopped.
func (e *Engine) teardownPaths(ctx context.Context, step string) error {
	e.mu.Lock()
	paths := slices.Clone(e.state.Paths)
	e.mu.Unlock()
	var first error
	for i := range paths {
		if err := e.teardownPath(ctx, step, "", &paths[i]); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// startPath makes job j's path when the host can, after the CPU count that
// pins the servers and the load generator is known. skip says why the
// variant cannot run here (not root, no nft, no overlay module).
func (e *Engine) startPath(ctx context.Context, step string, client hostRef, j load.Job) (*netpath.Path, string, error) {
	t, err := e.hosts.target(ctx, client.Name)
	if err != nil {
		return nil, "", &StepError{Host: client.Name, Err: err}
	}
	if err := e.ensureHost(ctx, client, t); err != nil {
		return nil, "", err
	}
	rep, err := e.probePaths(ctx, client.Name, t)
	if err != nil {
		return nil, "", &StepError{Host: client.Name, Err: fmt.Errorf("find out which network paths can be made: %w", err)}
	}
	if ok, why := rep.Available(j.PathCfg.Variant); !ok {
		return nil, why, nil
	}
	first := e.hostCPUs(client.Name) == 0
	if n := e.learnCPUs(ctx, client.Name, t); first && n >= 2 {
		s, c := load.SplitCPUs(n)
		e.say(step, client.Name, "servers pinned to CPU %s, the load generator to CPU %s (taskset), so neither takes the other's cores", s, c)
	} else if first {
		e.say(step, client.Name, "not pinned: the host has fewer than two CPUs, so the servers and the load generator share one")
	}
	p, err := e.makePath(ctx, step, client, t, *j.PathCfg)
	return p, "", err
}
