package steps

import (
	"context"
	"fmt"
	"math"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/dpulab/dpulab/steps/kinds/deploy"
	"github.com/dpulab/dpulab/steps/kinds/load"
	"github.com/dpulab/dpulab/steps/results"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/runner/netpath"
)

// benchJob is one invocation of `dpulab bench` (all repetitions of one
// variant at one sweep point) with the samplers around it.
type benchJob struct {
	Step    string
	Variant string
	Sweep   string
	Label   string
	Client  hostRef
	// Clients are the hosts that share the load (steps/kinds/load/split.go), Client
	// the first of them; none is Client alone.
	Clients []hostRef
	Servers []hostRef
	Config  benchwire.Config
	// Password, when set, reaches the bench on its stdin (never argv).
	Password string
	// Progress maps this job's own 0..1 onto the step's 0..1.
	ProgressBase, ProgressSpan float64
	StepStart                  time.Time
	StepTotal                  time.Duration
	// OnRun is called after every finished repetition.
	OnRun func(results.RunResult)
	// Path, when set, is the emulated path the job runs over: the bench in
	// its client namespace (pinned to ClientCPUs), the sampler in its
	// server namespace, and its counters read around the bench into
	// Counters.
	Path       *netpath.Path
	ClientCPUs string
	Counters   *results.PathCounters
	// Emulation says what Path stands for (VariantResult.Emulation), ""
	// over a real path: with the run's own labels it is what the job's
	// figures are (Engine.figures).
	Emulation string
}

// runBench runs one job from its client hosts: one host, or several that
// share the load (steps/kinds/load/split.go), started together after their clocks are
// checked; samplers on the server hosts; every host's stream merged into
// one per-second series (load.ClientMerge: for one host the merge is the
// identity). A host that fails stops the others: the load would no longer
// be the one asked for. Finished repetitions are returned even when a
// later one fails.
func (e *Engine) runBench(ctx context.Context, job benchJob) ([]results.RunResult, error) {
	// The client hosts the load comes from, each with its share
	// (load.SplitLoad); one over an emulated path, whose namespaces are on it.
	clients := job.Clients
	if len(clients) == 0 {
		clients = []hostRef{job.Client}
	}
	if len(clients) > 1 && job.Path != nil {
		e.say(job.Step, job.Client.Name, "over an emulated path the load comes from %s only", job.Client.Name)
		clients = clients[:1]
	}
	shares, note := load.SplitLoad(job.Config, clients)
	if note != "" {
		e.say(job.Step, shares[0].Host.Name, "%s", note)
	}
	if len(shares) == 1 {
		job.Client, job.Config = shares[0].Host, shares[0].Config
	}
	multi := len(shares) > 1
	runs := make([]*load.ClientRun, len(shares))
	names := make([]string, len(shares))
	targets := make([]runner.Target, len(shares))
	// One host after the other: on hosts that share a filesystem (this
	// machine's sshd in tests, NFS homes) one upload serves the next.
	for i, s := range shares {
		t, err := e.hosts.target(ctx, s.Host.Name)
		if err != nil {
			return nil, &StepError{Host: s.Host.Name, Err: err}
		}
		if err := e.ensureHost(ctx, s.Host, t); err != nil {
			return nil, err
		}
		runs[i] = &load.ClientRun{Share: s, T: t}
		if s.Config.TargetSamples {
			runs[i].Seconds.Want = len(s.Config.Endpoints)
		}
		names[i], targets[i] = s.Host.Name, t
	}

	var readings []load.ClockReading
	var spread time.Duration
	var warning string
	var clocksOK bool
	if multi {
		readings = load.CheckClocks(ctx, names, targets)
		spread, warning, clocksOK = load.ClockVerdict(readings)
		for _, r := range readings {
			if r.Err != nil {
				e.say(job.Step, r.Host, "clock not read: %v", r.Err)
			}
		}
		switch {
		case warning != "":
			e.opts.Emit(Output{Step: job.Step, Line: runner.Line{Host: names[0], Stream: runner.Stderr, Text: "WARNING: " + warning, Time: time.Now()}})
		case clocksOK:
			e.say(job.Step, names[0], "%d client hosts share the load; their clocks agree within %s, as read over SSH (± half of each round trip)", len(shares), load.Millis(spread))
		}
	}

	latest, stopSamplers := load.StartSamplers(ctx, kindEnv{e}, job.Servers, job.Client, job.Path)
	defer stopSamplers()
	latest.WaitReady(ctx.Done(), load.SamplerStartTimeout)
	// The hypervisor's figures (steps/vsphere.go), when the server hosts
	// name their ESXi hosts: a refused vCenter stops the step.
	vj, err := e.startVSphere(ctx, job)
	if err != nil {
		return nil, err
	}
	defer vj.stop()

	// Over an emulated path (one client host: its namespaces are on it)
	// the bench runs in the path's client namespace, and the path's
	// counters are read around it.
	at := load.Placement{CPUs: job.ClientCPUs}
	var before netpath.Counters
	if job.Path != nil {
		at.NS = job.Path.ClientNS
		if before, err = job.Path.Counters(ctx, targets[0]); err != nil {
			return nil, &StepError{Host: job.Client.Name, Err: fmt.Errorf("read the %s path's counters: %w", job.Path.Variant, err)}
		}
	}

	var mu sync.Mutex
	var out []results.RunResult
	// failed is the first host whose bench failed on its own; the others
	// were stopped because of it.
	var failed *load.ClientRun
	publish := func(r results.RunResult) {
		out = append(out, r)
		e.opts.Emit(Output{Step: job.Step, Line: runner.Line{Host: job.Client.Name, Text: e.labelled(job, runSummary(job, r)), Time: time.Now()}})
		for _, c := range r.Clients {
			e.say(job.Step, c.Host, "  %s's share: %s ops/s, p99 %.3f ms%s", c.Host, results.FormatNumber(c.OpsPerSec), c.LatencyMs.P99, load.ClientCPUNote(c.ClientHostBusyPct, c.ClientBound, job.servedBy(c.Host)))
		}
		if job.OnRun != nil {
			job.OnRun(r)
		}
	}
	total := load.ExpectedDuration(job.Config)
	start := time.Now()
	hostsNote := ""
	if multi {
		hostsNote = fmt.Sprintf(", %d client hosts", len(shares))
	}
	m := load.NewClientMerge(names)
	m.TargetHosts = e.targetHosts(job.Config, job.Servers)
	m.OnPoint = func(run int, p results.Point, since time.Time, hosts []HostSecond, targets []TargetSecond) results.Point {
		p = latest.Merge(p, since)
		e.opts.Emit(Sample{Step: job.Step, Variant: job.Variant, Figures: e.figures(job), Sweep: job.Sweep, Run: run, Point: p, Clients: hosts, Targets: targets})
		e.emitProgress(job, start, total, fmt.Sprintf("%s, run %d/%d%s", job.Label, run, job.Config.Runs, hostsNote))
		return p
	}
	m.OnMergeErr = func(err error) {
		e.opts.Emit(Output{Step: job.Step, Line: runner.Line{Host: names[0], Stream: runner.Stderr, Text: "merging the client hosts' samples: " + err.Error(), Time: time.Now()}})
	}
	m.OnRun = func(r results.RunResult, since time.Time) {
		if clocksOK {
			r.ClockSpreadMs, r.ClockWarning = load.MillisPtr(spread), warning
		}
		for i := range r.Clients {
			if i < len(readings) && readings[i].Err == nil {
				r.Clients[i].ClockOffsetMs, r.Clients[i].ClockUncertaintyMs = load.MillisPtr(readings[i].Offset), load.MillisPtr(readings[i].Uncertainty)
			}
		}
		if r.StartSkewMs != nil && *r.StartSkewMs > float64(load.StartSkewWarn)/1e6 {
			e.opts.Emit(Output{Step: job.Step, Line: runner.Line{Host: names[0], Stream: runner.Stderr, Time: time.Now(),
				Text: fmt.Sprintf("run %d: the client hosts began measuring %.0f ms apart (seen from here): each merged second mixes that much of neighbouring seconds", r.Run, *r.StartSkewMs)}})
		}
		r.SummarizeSeries(latest.Cores())
		if vj == nil {
			publish(r)
			return
		}
		// Held until vSphere has published its seconds.
		for _, r := range vj.hold(r, since, latest.Cores()) {
			publish(r)
		}
	}

	var perHost []int64
	if multi {
		var startAt time.Time
		var why string
		startAt, perHost, why = load.CommonStart(time.Now(), readings)
		if why != "" {
			e.say(job.Step, names[0], "the client hosts start without a common instant (%s): each begins when its SSH session does", why)
		} else {
			e.say(job.Step, names[0], "the client hosts connect, then begin together at %s (this machine's clock, %s from now): %s", startAt.UTC().Format("15:04:05.000"), time.Until(startAt).Round(time.Millisecond), load.StartAtList(names, perHost, readings))
		}
	}
	bctx, stopAll := context.WithCancel(ctx)
	defer stopAll()
	var stdin []byte
	if job.Password != "" {
		// The password comes on stdin, never argv.
		stdin = []byte(job.Password + "\n")
	}
	var wg sync.WaitGroup
	for i, cr := range runs {
		cfg := cr.Share.Config
		if perHost != nil {
			cfg.StartAtUnixMs = perHost[i]
		}
		cr.Cmd = load.BenchCommand(e.dpulabOn(cr.Share.Host), cfg, job.Password != "", at)
		wg.Add(1)
		show := e.emitOutput(job.Step)
		go func() {
			defer wg.Done()
			cr.Res, cr.Err = cr.T.Run(bctx, runner.Command{Cmd: cr.Cmd, Stdin: stdin, Output: func(l runner.Line) {
				cr.Line(show, m, &mu, i, l)
			}})
			mu.Lock()
			cr.Ended(m, i)
			m.HostEnded(i)
			if cr.Failed() && failed == nil && bctx.Err() == nil {
				failed = cr
			}
			mu.Unlock()
			if cr.Failed() {
				stopAll()
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	m.Finish()
	mu.Unlock()
	if perHost != nil {
		e.say(job.Step, names[0], "%s", load.StartedNote(runs, perHost))
	}
	if vj != nil {
		for _, r := range vj.drain(ctx, latest.Cores()) {
			publish(r)
		}
	}
	first := failed
	if first == nil {
		// Stopped from outside (ctx): any host's error says so.
		for _, cr := range runs {
			if cr.Failed() {
				first = cr
				break
			}
		}
	}
	if job.Path != nil && first == nil {
		after, cerr := job.Path.Counters(ctx, targets[0])
		if cerr != nil {
			first, runs[0].Err = runs[0], fmt.Errorf("read the %s path's counters: %w", job.Path.Variant, cerr)
		} else if job.Counters != nil {
			*job.Counters = *load.PathPoint(job.Path, after.Sub(before))
		}
	}
	fail := func(cr *load.ClientRun, err error) error {
		return &StepError{Host: cr.Share.Host.Name, Cmd: cr.Cmd, Tail: cr.Out.LastLines(), Err: fmt.Errorf("bench %s: %w", job.Label, err)}
	}
	switch {
	case first != nil && first.Err != nil:
		return out, fail(first, first.Err)
	case first != nil:
		return out, fail(first, fmt.Errorf("exit status %d", first.Res.ExitCode))
	}
	for _, cr := range runs {
		if err := cr.Out.Err(); err != nil {
			return out, fail(cr, err)
		}
	}
	if err := m.DroppedErr(); err != nil {
		return out, fail(runs[0], err)
	}
	if len(out) == 0 {
		return out, &StepError{Host: names[0], Cmd: runs[0].Cmd, Tail: runs[0].Out.LastLines(), Err: fmt.Errorf("bench %s finished without reporting a run", job.Label)}
	}
	return out, nil
}

// runStarts estimates when each run (or capacity probe) of one bench
// began measuring, as seen here: its first sample's arrival minus the
// sample's time into the run, so that the samplers' seconds from before it
// are not merged into it. Safe for concurrent use.
type runStarts struct {
	mu sync.Mutex
	m  map[int]time.Time
}

// of is the start of s's run, estimated from s when it is the run's first
// sample to arrive.
func (r *runStarts) of(s *benchwire.Sample) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t, ok := r.m[s.Run]; ok {
		return t
	}
	if r.m == nil {
		r.m = map[int]time.Time{}
	}
	t := time.Now().Add(-time.Duration(s.T * float64(time.Second)))
	r.m[s.Run] = t
	return t
}

// runSummary is the one line printed after each repetition of job.
func runSummary(job benchJob, r results.RunResult) string {
	s := fmt.Sprintf("%s run %d/%d: %s ops/s, avg %.3f ms, p99 %.3f ms", job.Label, r.Run, job.Config.Runs, results.FormatNumber(r.OpsPerSec), r.LatencyMs.Avg, r.LatencyMs.P99)
	if r.ServerCPU != nil {
		s += fmt.Sprintf(", server CPU %.1f%%", *r.ServerCPU)
	}
	if r.NetworkCPU != nil {
		s += fmt.Sprintf(" (network %.1f%%)", *r.NetworkCPU)
	}
	if r.Errors > 0 {
		s += fmt.Sprintf(", %d errors", r.Errors)
	}
	if r.ClientBound {
		// The busiest client host was saturated: a shared host when any
		// client host (job.Client alone, or each of r.Clients) served too.
		shared := len(r.Clients) == 0 && job.servedBy(job.Client.Name)
		for _, c := range r.Clients {
			shared = shared || (c.ClientBound && job.servedBy(c.Host))
		}
		s += load.ClientCPUNote(r.ClientHostBusyPct, true, shared)
	}
	if r.Err != "" {
		s += ", ended early: " + r.Err
	}
	return s
}

func (e *Engine) emitProgress(job benchJob, start time.Time, total time.Duration, label string) {
	el := time.Since(start)
	f := 0.0
	if total > 0 {
		f = math.Min(1, float64(el)/float64(total))
	}
	overall := job.ProgressBase + f*job.ProgressSpan
	stepEl := time.Since(job.StepStart)
	var remaining time.Duration
	if overall > 0 && job.StepTotal > 0 {
		remaining = time.Duration(float64(job.StepTotal) * (1 - overall))
	}
	e.opts.Emit(Progress{Step: job.Step, Label: e.labelled(job, label), Figures: e.figures(job), Fraction: overall, Elapsed: stepEl, Remaining: remaining})
}

// deploymentFor returns the running deployment of group, deploying it
// (again) when it is missing or differs from what plan wants.
func (e *Engine) deploymentFor(ctx context.Context, step string, group string, vars map[string]string, variant *labs.Variant) (Deployment, error) {
	dst, err := e.deployStepFor(group)
	if err != nil {
		return Deployment{}, err
	}
	plan, err := e.planDeploy(dst, vars, variant)
	if err != nil {
		return Deployment{}, err
	}
	e.mu.Lock()
	dep, ok := e.state.Deployments[group]
	checked := e.depChecked[group]
	e.mu.Unlock()
	if ok && dep.Key == plan.Key() {
		// A deployment recorded by an earlier (killed) run is used only
		// if all its instances still answer; otherwise it is redeployed.
		if checked || e.deploymentAlive(ctx, dep, plan.Hosts) {
			e.mu.Lock()
			if e.depChecked == nil {
				e.depChecked = map[string]bool{}
			}
			e.depChecked[group] = true
			e.mu.Unlock()
			return dep, nil
		}
		e.opts.Emit(Output{Step: step, Line: runner.Line{Host: plan.Hosts[0].Name, Text: fmt.Sprintf("group %s from the earlier run does not answer any more: deploying it again", group), Time: time.Now()}})
	}
	if err := e.deploy(ctx, step, plan); err != nil {
		return Deployment{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.state.Deployments[group], nil
}

// deploymentAlive pings every instance of a deployment once.
func (e *Engine) deploymentAlive(ctx context.Context, dep Deployment, hosts []hostRef) bool {
	for _, in := range dep.Instances {
		h := hostRef{Name: in.Host}
		for _, hh := range hosts {
			if hh.Name == in.Host {
				h = hh
			}
		}
		t, err := e.hosts.target(ctx, h.Name)
		if err != nil {
			return false
		}
		if err := e.ensureHost(ctx, h, t); err != nil {
			return false
		}
		local := Instance{Host: in.Host, Port: in.Port, Address: net.JoinHostPort("127.0.0.1", strconv.Itoa(in.Port))}
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = deploy.Ping(pctx, kindEnv{e}, h, t, local)
		cancel()
		if err != nil {
			return false
		}
	}
	return true
}

// serverHosts lists the distinct hosts of a deployment.
func (e *Engine) serverHosts(dep Deployment, plan []hostRef) []hostRef {
	seen := map[string]bool{}
	var out []hostRef
	for _, in := range dep.Instances {
		if seen[in.Host] {
			continue
		}
		seen[in.Host] = true
		ref := hostRef{Name: in.Host, Role: "server"}
		for _, h := range plan {
			if h.Name == in.Host {
				ref = h
			}
		}
		out = append(out, ref)
	}
	return out
}

// upsertBench puts c into the results, replacing an earlier attempt of the
// same step: the figures are this attempt's (Compare.Attempt).
func (e *Engine) upsertBenchLocked(c results.Compare) {
	c.Attempt = e.results.Attempt()
	for i := range e.results.Benches {
		if e.results.Benches[i].Step == c.Step {
			e.results.Benches[i] = c
			return
		}
	}
	e.results.Benches = append(e.results.Benches, c)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// servedBy says whether host also serves the job's load.
func (j benchJob) servedBy(host string) bool {
	for _, h := range j.Servers {
		if h.Name == host {
			return true
		}
	}
	return false
}
