package steps

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/dpulab/dpulab/steps/kinds/deploy"
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

// maxInstances keeps a typo from starting thousands of servers.
const maxInstances = deploy.MaxInstances

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
	cfg, err := e.pathConfig(v, vars)
	if err != nil {
		return err
	}
	path, err := netpath.Plan(p.Hosts[0].Name, &cfg)
	if err != nil {
		return err
	}
	p.NetNS = path.ServerNS
	p.Bind = path.ServerAddr.String()
	p.CPUs, _ = splitCPUs(e.hostCPUs(p.Hosts[0].Name))
	p.Settings = append(p.Settings, [2]string{"protected-mode", "no"})
	return nil
}

// instanceDir is an instance's own directory on its host.
func (e *Engine) instanceDir(group string, port int) string {
	return deploy.InstanceDir(e.workdir(), group, port)
}

// serverCmd is the shell command that starts one instance.
func (e *Engine) serverCmd(h hostRef, p deployPlan, port int) string {
	return p.ServerCmd(e.dpulabOn(h), e.workdir(), port)
}

// deploy makes exactly p run: it stops the group's servers (from this or
// an earlier run), starts p's instances on every host in parallel, and
// waits until each answers PING.
func (e *Engine) deploy(ctx context.Context, step string, p deployPlan) error {
	if err := e.stopGroup(ctx, p.Group); err != nil {
		return err
	}
	var conf []byte
	if p.Config != "" {
		b, err := e.lab.ReadFile(p.Config)
		if err != nil {
			return fmt.Errorf("read config template %s: %w", p.Config, err)
		}
		conf = b
	}
	vars := e.Vars()
	for _, h := range p.Hosts {
		if len(e.instanceDir(p.Group, p.Port+p.Instances-1))+len("/redis.sock") > 100 {
			return fmt.Errorf("deploy on %s: the Unix socket path under %s is too long", h.Name, e.workdir())
		}
	}
	errs := make([]error, len(p.Hosts))
	rec := &procRecorder{e: e}
	var wg sync.WaitGroup
	for k, h := range p.Hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[k] = e.deployHost(ctx, step, p, h, conf, vars, rec)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	dep := Deployment{Step: step, Group: p.Group, Key: p.Key(), Instances: p.ClientSide(e.workdir())}
	if p.Server != "" {
		dep.Server = e.serverRan(ctx, step, p)
	}
	e.mu.Lock()
	if e.state.Deployments == nil {
		e.state.Deployments = map[string]Deployment{}
	}
	e.state.Deployments[p.Group] = dep
	if e.depChecked == nil {
		e.depChecked = map[string]bool{}
	}
	e.depChecked[p.Group] = true
	err := e.saveStateLocked()
	e.mu.Unlock()
	e.opts.Emit(Output{Step: step, Line: runner.Line{Host: p.Hosts[0].Name, Text: fmt.Sprintf("group %s: %d instances on %d host(s) answer PING (ports %d-%d)", p.Group, p.Instances, len(p.Hosts), p.Port, p.Port+p.Instances-1), Time: time.Now()}})
	return err
}

// writeConcurrency bounds how many instance configs of one host are
// written at once, over the host's SFTP session (one channel: the writes
// are requests on it, pipelined, not sessions).
const writeConcurrency = 16

// probeConcurrency bounds how many instances of one host are probed at
// once (deploy.ForEach).
const probeConcurrency = 32

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

// deployHost starts p's instances on one host: the directories in one
// command, each config written over SFTP into its own directory, then
// every instance started by runner.StartAll (a few commands, each starting
// a batch of instances, each instance still its own process group), each
// batch recorded as soon as its pids are known; then it waits until every
// instance answers PING.
func (e *Engine) deployHost(ctx context.Context, step string, p deployPlan, h hostRef, tmpl []byte, vars map[string]string, rec *procRecorder) error {
	t, err := e.hosts.target(ctx, h.Name)
	if err != nil {
		return &StepError{Host: h.Name, Err: err}
	}
	if err := e.ensureHost(ctx, h, t); err != nil {
		return err
	}
	if err := e.ensureWorkdir(ctx, h, t); err != nil {
		return err
	}
	if err := e.ensureServer(ctx, step, p, h, t); err != nil {
		return err
	}
	// Something already answering on an instance's port would be
	// benchmarked instead of our server: look at every port first.
	if err := deploy.ForEach(p.Instances, probeConcurrency, func(k int) error {
		return e.portFree(ctx, step, p, h, t, k)
	}); err != nil {
		return err
	}
	if err := e.makeInstanceDirs(ctx, p, h, t); err != nil {
		return err
	}
	procs, err := e.startInstances(ctx, step, p, h, t, tmpl, vars, rec)
	if err != nil {
		return err
	}
	// Wait until every instance answers, as long as each one's start
	// progresses; one that exits meanwhile fails the step at once, with
	// its log (deploy_wait.go).
	return e.awaitInstances(ctx, h, t, p, procs)
}

// portFree refuses instance k's port when something answers PING there
// (it would be benchmarked instead of our server), unless that is a server
// of this lab that no progress recorded, which it stops.
func (e *Engine) portFree(ctx context.Context, step string, p deployPlan, h hostRef, t runner.Target, k int) error {
	inst := p.HostSide(h, k)
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	perr := e.ping(pctx, h, t, inst, false)
	cancel()
	if perr == nil && e.stopUnrecorded(ctx, step, h, t, inst, e.instanceDir(p.Group, inst.Port)) {
		perr = errors.New("stopped")
	}
	if perr == nil {
		return &StepError{Host: h.Name, Err: fmt.Errorf("instance %s:%d: port %d already answers PING: another server is running there; stop it or choose another port (--set of the lab's port variable)", p.Group, inst.Port, inst.Port)}
	}
	return nil
}

// makeInstanceDirs creates every instance's directory on a host, and
// removes sockets an earlier run left there, in one command.
func (e *Engine) makeInstanceDirs(ctx context.Context, p deployPlan, h hostRef, t runner.Target) error {
	// The working directory first, with its own mode (mkdir -p would
	// make it with the umask's).
	if err := e.ensureWorkdir(ctx, h, t); err != nil {
		return err
	}
	dirs := make([]string, p.Instances)
	socks := make([]string, p.Instances)
	for k := range dirs {
		dirs[k] = e.instanceDir(p.Group, p.Port+k)
		socks[k] = path.Join(dirs[k], "redis.sock")
	}
	cmd := "mkdir -p -m 700 " + runner.QuoteAll(dirs...) + " && rm -f " + runner.QuoteAll(socks...)
	res, err := t.Run(ctx, runner.Command{Cmd: cmd, Timeout: time.Minute})
	if err != nil || res.ExitCode != 0 {
		return &StepError{Host: h.Name, Tail: tailText(res.Tail), Err: fmt.Errorf("create the directories of group %s's %d instances under %s: %v", p.Group, p.Instances, e.workdir(), errOr(err, res))}
	}
	return nil
}

// startInstances writes every instance's config, then starts them all,
// recording each batch's processes in saved progress as soon as their pids
// are known (a run killed from then on still stops them later). The error
// names the lowest-numbered instance that failed.
func (e *Engine) startInstances(ctx context.Context, step string, p deployPlan, h hostRef, t runner.Target, tmpl []byte, vars map[string]string, rec *procRecorder) ([]runner.Proc, error) {
	if err := deploy.ForEach(p.Instances, writeConcurrency, func(k int) error {
		return e.writeConfig(ctx, p, h, t, k, tmpl, vars)
	}); err != nil {
		return nil, err
	}
	specs := make([]runner.ProcSpec, p.Instances)
	for k := range specs {
		port := p.Port + k
		specs[k] = runner.ProcSpec{Name: deploy.ProcName(p.Group, port), Cmd: e.serverCmd(h, p, port), LogFile: path.Join(e.instanceDir(p.Group, port), "server.log")}
	}
	var recMu sync.Mutex
	var recErr error
	procs, errs := runner.StartAll(ctx, t, specs, func(ps []runner.Proc) {
		err := rec.record(ps...)
		recMu.Lock()
		recErr = cmp.Or(recErr, err)
		recMu.Unlock()
		for _, proc := range ps {
			e.opts.Emit(Output{Step: step, Line: runner.Line{Host: h.Name, Text: fmt.Sprintf("started %s (pid %d), log %s", proc.Name, proc.PID, proc.LogFile), Time: time.Now()}})
		}
	})
	for k, err := range errs {
		if err != nil {
			port := p.Port + k
			return procs, &StepError{Host: h.Name, Cmd: specs[k].Cmd, Err: fmt.Errorf("start instance %s:%d: %w", p.Group, port, err)}
		}
	}
	return procs, recErr
}

// writeConfig renders instance k's config and writes it into the
// instance's directory.
func (e *Engine) writeConfig(ctx context.Context, p deployPlan, h hostRef, t runner.Target, k int, tmpl []byte, vars map[string]string) error {
	port := p.Port + k
	conf, err := deploy.RenderConfig(kindEnv{e}, p, h, k, tmpl, vars)
	if err != nil {
		return err
	}
	dir := e.instanceDir(p.Group, port)
	// The directory is the run's own (makeInstanceDirs): the config goes
	// straight there, through a temporary file renamed over it.
	if err := runner.WriteFile(ctx, t, path.Join(dir, "redis.conf"), []byte(conf), 0o600); err != nil {
		return &StepError{Host: h.Name, Err: fmt.Errorf("instance %s:%d: write %s: %w", p.Group, port, path.Join(dir, "redis.conf"), err)}
	}
	return nil
}

// stopUnrecorded ends a server that answers at inst but that no saved
// progress records, when it is ours: one of this run whose start was
// interrupted before its pid was saved (found by the instance's log path on
// its command line), or one of an earlier, dead run of this lab whose
// launch was still under way when this run cleaned up after it (found by
// that run's working directory). It reports whether the port is free now.
func (e *Engine) stopUnrecorded(ctx context.Context, step string, h hostRef, t runner.Target, inst Instance, dir string) bool {
	// The log path names this instance alone (a bare directory would also
	// match a-63790 for a-6379).
	markers := []string{path.Join(dir, "server.log")}
	e.mu.Lock()
	markers = append(markers, e.swept...)
	e.mu.Unlock()
	stopped := 0
	for _, m := range markers {
		if n, err := runner.StopMarked(ctx, t, m, stopGrace, false); err == nil {
			stopped += n
		}
	}
	if stopped == 0 {
		return false
	}
	e.say(step, h.Name, "stopped a server left from an interrupted start on port %d", inst.Port)
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return e.ping(pctx, h, t, inst, false) != nil
}

// ping checks that an instance answers PING with PONG, from the host's own
// side (deploy.Ping). With wait it retries until it answers, ctx ends or
// deploy's overall wait limit passes.
func (e *Engine) ping(ctx context.Context, h hostRef, t runner.Target, inst Instance, wait bool) error {
	if wait {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, e.waitLimits().Max)
		defer cancel()
	}
	var last error
	for {
		last = deploy.Ping(ctx, kindEnv{e}, h, t, inst)
		if last == nil || !wait {
			return last
		}
		select {
		case <-ctx.Done():
			return last
		case <-time.After(100 * time.Millisecond):
		}
	}
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
