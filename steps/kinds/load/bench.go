package load

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/runner/netpath"
	"github.com/dpulab/dpulab/steps/event"
	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/results"
)

// RunBench runs one job from its client hosts: one host, or several that
// share the load (split.go), started together after their clocks are
// checked; samplers on the server hosts; every host's stream merged into
// one per-second series (ClientMerge: for one host the merge is the
// identity). A host that fails stops the others: the load would no longer
// be the one asked for. Finished repetitions are returned even when a
// later one fails.
func RunBench(ctx context.Context, r Measurer, job BenchJob) ([]results.RunResult, error) {
	// The client hosts the load comes from, each with its share
	// (SplitLoad); one over an emulated path, whose namespaces are on it.
	clients := job.Clients
	if len(clients) == 0 {
		clients = []kind.Host{job.Client}
	}
	if len(clients) > 1 && job.Path != nil {
		r.Say(job.Step, job.Client.Name, "over an emulated path the load comes from %s only", job.Client.Name)
		clients = clients[:1]
	}
	shares, note := SplitLoad(job.Config, clients)
	if note != "" {
		r.Say(job.Step, shares[0].Host.Name, "%s", note)
	}
	if len(shares) == 1 {
		job.Client, job.Config = shares[0].Host, shares[0].Config
	}
	multi := len(shares) > 1
	runs := make([]*ClientRun, len(shares))
	names := make([]string, len(shares))
	targets := make([]runner.Target, len(shares))
	// One host after the other: on hosts that share a filesystem (this
	// machine's sshd in tests, NFS homes) one upload serves the next.
	for i, s := range shares {
		t, err := r.Reached(ctx, s.Host)
		if err != nil {
			return nil, err
		}
		runs[i] = &ClientRun{Share: s, T: t}
		if s.Config.TargetSamples {
			runs[i].Seconds.Want = len(s.Config.Endpoints)
		}
		names[i], targets[i] = s.Host.Name, t
	}
	out := r.Output(job.Step)
	warn := func(text string) {
		out(runner.Line{Host: names[0], Stream: runner.Stderr, Text: text, Time: time.Now()})
	}

	var readings []ClockReading
	var spread time.Duration
	var warning string
	var clocksOK bool
	if multi {
		readings = CheckClocks(ctx, names, targets)
		spread, warning, clocksOK = ClockVerdict(readings)
		for _, rd := range readings {
			if rd.Err != nil {
				r.Say(job.Step, rd.Host, "clock not read: %v", rd.Err)
			}
		}
		switch {
		case warning != "":
			warn("WARNING: " + warning)
		case clocksOK:
			r.Say(job.Step, names[0], "%d client hosts share the load; their clocks agree within %s, as read over SSH (± half of each round trip)", len(shares), Millis(spread))
		}
	}

	latest, stopSamplers := StartSamplers(ctx, r, job.Servers, job.Client, job.Path)
	defer stopSamplers()
	latest.WaitReady(ctx.Done(), SamplerStartTimeout)
	// The hypervisor's figures, when the server hosts name their ESXi
	// hosts: a refused vCenter stops the step.
	hs, err := startHostSampler(ctx, r, job)
	if err != nil {
		return nil, err
	}
	defer hs.stop()

	// Over an emulated path (one client host: its namespaces are on it)
	// the bench runs in the path's client namespace, and the path's
	// counters are read around it.
	at := Placement{CPUs: job.ClientCPUs}
	var before netpath.Counters
	if job.Path != nil {
		at.NS = job.Path.ClientNS
		if before, err = job.Path.Counters(ctx, targets[0]); err != nil {
			return nil, &kind.StepError{Host: job.Client.Name, Err: fmt.Errorf("read the %s path's counters: %w", job.Path.Variant, err)}
		}
	}

	var mu sync.Mutex
	var done []results.RunResult
	// failed is the first host whose bench failed on its own; the others
	// were stopped because of it.
	var failed *ClientRun
	publish := func(run results.RunResult) {
		done = append(done, run)
		out(runner.Line{Host: job.Client.Name, Text: Labelled(r, job, RunSummary(job, run)), Time: time.Now()})
		for _, c := range run.Clients {
			r.Say(job.Step, c.Host, "  %s's share: %s ops/s, p99 %.3f ms%s", c.Host, results.FormatNumber(c.OpsPerSec), c.LatencyMs.P99, ClientCPUNote(c.ClientHostBusyPct, c.ClientBound, job.servedBy(c.Host)))
		}
		if job.OnRun != nil {
			job.OnRun(run)
		}
	}
	total := ExpectedDuration(job.Config)
	start := time.Now()
	hostsNote := ""
	if multi {
		hostsNote = fmt.Sprintf(", %d client hosts", len(shares))
	}
	m := NewClientMerge(names)
	m.TargetHosts = TargetHosts(job.Config, job.Servers, r.Instances())
	m.OnPoint = func(run int, p results.Point, since time.Time, hosts []event.HostSecond, targets []event.TargetSecond) results.Point {
		p = latest.Merge(p, since)
		r.Emit(event.Sample{Step: job.Step, Variant: job.Variant, Figures: Figures(r, job), Sweep: job.Sweep, Run: run, Point: p, Clients: hosts, Targets: targets})
		emitProgress(r, job, start, total, fmt.Sprintf("%s, run %d/%d%s", job.Label, run, job.Config.Runs, hostsNote))
		return p
	}
	m.OnMergeErr = func(err error) { warn("merging the client hosts' samples: " + err.Error()) }
	m.OnRun = func(run results.RunResult, since time.Time) {
		if clocksOK {
			run.ClockSpreadMs, run.ClockWarning = MillisPtr(spread), warning
		}
		for i := range run.Clients {
			if i < len(readings) && readings[i].Err == nil {
				run.Clients[i].ClockOffsetMs, run.Clients[i].ClockUncertaintyMs = MillisPtr(readings[i].Offset), MillisPtr(readings[i].Uncertainty)
			}
		}
		if run.StartSkewMs != nil && *run.StartSkewMs > float64(StartSkewWarn)/1e6 {
			warn(fmt.Sprintf("run %d: the client hosts began measuring %.0f ms apart (seen from here): each merged second mixes that much of neighbouring seconds", run.Run, *run.StartSkewMs))
		}
		run.SummarizeSeries(latest.Cores())
		if hs == nil {
			publish(run)
			return
		}
		// Held until vSphere has published its seconds.
		for _, run := range hs.hold(run, since, latest.Cores()) {
			publish(run)
		}
	}

	var perHost []int64
	if multi {
		var startAt time.Time
		var why string
		startAt, perHost, why = CommonStart(time.Now(), readings)
		if why != "" {
			r.Say(job.Step, names[0], "the client hosts start without a common instant (%s): each begins when its SSH session does", why)
		} else {
			r.Say(job.Step, names[0], "the client hosts connect, then begin together at %s (this machine's clock, %s from now): %s", startAt.UTC().Format("15:04:05.000"), time.Until(startAt).Round(time.Millisecond), StartAtList(names, perHost, readings))
		}
	}
	bctx, stopAll := context.WithCancel(ctx)
	defer stopAll()
	stdin := passwordStdin(job.Password)
	var wg sync.WaitGroup
	for i, cr := range runs {
		cfg := cr.Share.Config
		if perHost != nil {
			cfg.StartAtUnixMs = perHost[i]
		}
		cr.Cmd = BenchCommand(r.Agent(cr.Share.Host), cfg, job.Password != "", at)
		wg.Add(1)
		show := r.Output(job.Step)
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
		r.Say(job.Step, names[0], "%s", StartedNote(runs, perHost))
	}
	if hs != nil {
		for _, run := range hs.drain(ctx, latest.Cores()) {
			publish(run)
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
			*job.Counters = *PathPoint(job.Path, after.Sub(before))
		}
	}
	fail := func(cr *ClientRun, err error) error {
		return &kind.StepError{Host: cr.Share.Host.Name, Cmd: cr.Cmd, Tail: cr.Out.LastLines(), Err: fmt.Errorf("bench %s: %w", job.Label, err)}
	}
	switch {
	case first != nil && first.Err != nil:
		return done, fail(first, first.Err)
	case first != nil:
		return done, fail(first, fmt.Errorf("exit status %d", first.Res.ExitCode))
	}
	for _, cr := range runs {
		if err := cr.Out.Err(); err != nil {
			return done, fail(cr, err)
		}
	}
	if err := m.DroppedErr(); err != nil {
		return done, fail(runs[0], err)
	}
	if len(done) == 0 {
		return done, &kind.StepError{Host: names[0], Cmd: runs[0].Cmd, Tail: runs[0].Out.LastLines(), Err: fmt.Errorf("bench %s finished without reporting a run", job.Label)}
	}
	return done, nil
}

// passwordStdin is what a bench reads its password from: the password
// comes on stdin, never argv.
func passwordStdin(password string) []byte {
	if password == "" {
		return nil
	}
	return []byte(password + "\n")
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
