package steps

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dpulab/dpulab/steps/kinds/deploy"
	"github.com/dpulab/dpulab/steps/kinds/load"
	"github.com/dpulab/dpulab/steps/results"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/runner/netpath"
)

// stopGrace is how long a server gets between SIGTERM and SIGKILL.
const stopGrace = 3 * time.Second

// deployPlan is a deploy step resolved with the run's variables
// (steps/kinds/deploy).
type deployPlan = deploy.Plan

// deployStepFor finds the deploy step of group.
func (e *Engine) deployStepFor(group string) (*labs.Step, error) {
	for i := range e.lab.Steps {
		st := &e.lab.Steps[i]
		if st.Kind == labs.KindDeploy && st.Deploy != nil && st.Deploy.Group == group {
			return st, nil
		}
	}
	return nil, fmt.Errorf("no deploy step has group %q", group)
}

// planDeploy resolves a deploy step (deploy.Resolve); variant (may be
// nil) overrides keys and adds settings, and puts the deployment on its
// emulated network path.
func (e *Engine) planDeploy(st *labs.Step, vars map[string]string, variant *labs.Variant) (deployPlan, error) {
	p, err := deploy.Resolve(kindEnv{e}, st, vars, variant)
	if err != nil {
		return p, err
	}
	if variant != nil && variant.NetPath != "" {
		if err := e.planOnPath(&p, variant, vars); err != nil {
			return p, fmt.Errorf("deploy %s: %w", st.ID, err)
		}
	}
	return p, nil
}

// planOnPath moves a deployment into an emulated path's server namespace:
// bound to the path's server address (reachable from the path's client
// namespace only, so protected mode is off there), pinned to the host's
// server cores.
func (e *Engine) planOnPath(p *deployPlan, v *labs.Variant, vars map[string]string) error {
	if len(p.Hosts) != 1 {
		return fmt.Errorf("variant %s: an emulated network path joins two namespaces of one host, but group %s runs on %d hosts", v.Label, p.Group, len(p.Hosts))
	}
	cfg, err := load.PathConfig(e.workdir(), v, vars)
	if err != nil {
		return err
	}
	path, err := netpath.Plan(p.Hosts[0].Name, &cfg)
	if err != nil {
		return err
	}
	p.NetNS = path.ServerNS
	p.Bind = path.ServerAddr.String()
	p.CPUs, _ = load.SplitCPUs(e.hostCPUs(p.Hosts[0].Name))
	p.Settings = append(p.Settings, [2]string{"protected-mode", "no"})
	return nil
}

// deploy makes exactly p run (deploy.Run): the compare kind redeploys a
// group through it when a variant needs another deployment.
func (e *Engine) deploy(ctx context.Context, step string, p deployPlan) error {
	return deploy.Run(ctx, kindEnv{e}, step, p, e.Vars())
}

// procRecorder saves started processes in the run's progress for every
// host of one deploy: each Start is recorded before its caller goes on,
// but starts that finish while a save is under way share the next save
// (group commit), instead of one fsynced write per instance queued behind
// the engine's lock.
type procRecorder struct {
	e *Engine
	// saveMu serialises saves; gen counts procs added, saved the gen the
	// last successful save covered (both under e.mu).
	saveMu     sync.Mutex
	gen, saved int
}

// record adds procs to saved progress and returns once a save that holds
// them has been written.
func (r *procRecorder) record(procs ...runner.Proc) error {
	e := r.e
	e.mu.Lock()
	e.state.Procs = append(e.state.Procs, procs...)
	r.gen++
	mine := r.gen
	e.mu.Unlock()
	r.saveMu.Lock()
	defer r.saveMu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if r.saved >= mine {
		return nil // a save since these procs' append holds them
	}
	covers := r.gen
	if err := e.saveStateLocked(); err != nil {
		return err
	}
	r.saved = covers
	return nil
}

// stopGroup stops the recorded servers of one group.
func (e *Engine) stopGroup(ctx context.Context, group string) error {
	return e.stopProcs(ctx, func(p runner.Proc) bool { return strings.HasPrefix(p.Name, "server:"+group+":") }, false)
}

// stopAll stops every recorded process (cleanup). When every other step
// has finished, deploy steps stay done: the run is over and the next one
// starts afresh, so nothing should read as "resume at deploy".
func (e *Engine) stopAll(ctx context.Context) error {
	e.mu.Lock()
	over := true
	for i, st := range e.lab.Steps {
		if s := e.statusLocked(i); st.Kind != labs.KindCleanup && s != results.Done && s != results.Skipped {
			over = false
		}
	}
	e.mu.Unlock()
	err := e.stopProcs(ctx, func(runner.Proc) bool { return true }, !over)
	// The emulated paths go after the servers that ran inside them.
	return errors.Join(err, e.teardownPaths(ctx, ""))
}

// stopProcs stops the recorded processes that match and forgets them; the
// deployments they made up are dropped and, with markPending (cleanup),
// their deploy steps become pending again, so a resumed run deploys before
// it benches.
func (e *Engine) stopProcs(ctx context.Context, match func(runner.Proc) bool, markPending bool) error {
	e.mu.Lock()
	var stop, keep []runner.Proc
	for _, p := range e.state.Procs {
		if match(p) {
			stop = append(stop, p)
		} else {
			keep = append(keep, p)
		}
	}
	e.mu.Unlock()
	if len(stop) == 0 {
		return nil
	}
	// One stop per host for all its processes (runner.StopAll: a few
	// commands, not one session per server), the hosts in parallel.
	byHost := map[string][]runner.Proc{}
	var hosts []string
	for _, p := range stop {
		if _, ok := byHost[p.Host]; !ok {
			hosts = append(hosts, p.Host)
		}
		byHost[p.Host] = append(byHost[p.Host], p)
	}
	var errs []error
	var failed []runner.Proc
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, host := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			herrs, hfailed := e.stopOnHost(ctx, host, byHost[host])
			mu.Lock()
			errs = append(errs, herrs...)
			failed = append(failed, hfailed...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.state.Procs = append(keep, failed...)
	stopped := map[string]bool{}
	for _, p := range stop {
		stopped[p.Name] = true
	}
	for g, d := range e.state.Deployments {
		for _, in := range d.Instances {
			if stopped[deploy.ProcName(g, in.Port)] {
				delete(e.state.Deployments, g)
				if ss, ok := e.state.Steps[d.Step]; ok && ss.Status == results.Done && markPending {
					ss.Status = results.Pending
					ss.Err = "its servers were stopped by cleanup"
					e.state.Steps[d.Step] = ss
				}
				break
			}
		}
	}
	if err := e.saveStateLocked(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
