package steps

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/results"
)

// startSkewWarn is the spread of the client hosts' measured starts from
// which the run says so: a merged second then mixes a quarter second of
// one host's load with another's.
const startSkewWarn = 250 * time.Millisecond

// The common start: every client host's bench connects, then waits for
// one instant (bench --start-at) before its first request. The instant is
// far enough ahead for every host to start its bench over SSH and connect:
// startLeadRTTs of the slowest host's round trip (as its clock reading
// measured it) plus startLead. Each host is given it on its own clock (this
// machine's instant plus the host's measured offset), so every host starts
// at the same true instant, within its offset's uncertainty (half its
// round trip). An offset no larger than its uncertainty is not applied:
// the reading cannot tell it from zero, and it is mostly the SSH session's
// start-up (the remote date runs late in the round trip). Three sshd
// "hosts" on one machine, one clock, read +28 to +52 ms (± 60 ms or so on
// a loaded machine): applied, they would have set apart by up to 24 ms
// hosts whose clocks agree exactly.
const (
	startLeadRTTs = 4
	startLead     = 1500 * time.Millisecond
)

// commonStart is the instant, for a launch at now, and each host's
// --start-at (Unix ms on its own clock). When a host's clock could not be
// read there is no common start: why says which, and the hosts start as
// their SSH sessions do.
func commonStart(now time.Time, rs []clockReading) (at time.Time, perHost []int64, why string) {
	var slowest time.Duration
	for _, r := range rs {
		if r.Err != nil {
			return time.Time{}, nil, fmt.Sprintf("%s's clock was not read, so its offset is unknown", r.Host)
		}
		slowest = max(slowest, 2*r.Uncertainty)
	}
	at = now.Add(startLeadRTTs*slowest + startLead).Truncate(time.Millisecond)
	perHost = make([]int64, len(rs))
	for i, r := range rs {
		perHost[i] = at.Add(appliedOffset(r)).Round(time.Millisecond).UnixMilli()
	}
	return at, perHost, ""
}

// appliedOffset is the part of a host's measured clock offset the common
// start corrects for: all of it when it exceeds the reading's uncertainty,
// none otherwise.
func appliedOffset(r clockReading) time.Duration {
	if r.Offset.Abs() <= r.Uncertainty {
		return 0
	}
	return r.Offset
}

// clientRun is one client host's bench in a multi-client job.
type clientRun struct {
	share clientShare
	t     runner.Target
	cmd   string
	out   benchOutput
	// seconds joins each totals sample with its per-target lines.
	seconds secondJoiner
	// started is the bench's start line: the --start-at it received and
	// how late after it it began.
	started *benchwire.Start
	res     runner.Result
	err     error
}

// runMultiBench runs one job from several client hosts: their clocks
// checked, samplers on the server hosts, every host's share started at
// once, their streams merged into one series (clientMerge). A host that
// fails stops the others: the load would no longer be the one asked for.
// Finished repetitions are returned even when a later one fails.
func (e *Engine) runMultiBench(ctx context.Context, job benchJob, shares []clientShare) ([]results.RunResult, error) {
	runs := make([]*clientRun, len(shares))
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
		runs[i] = &clientRun{share: s, t: t}
		if s.Config.TargetSamples {
			runs[i].seconds.want = len(s.Config.Endpoints)
		}
		names[i], targets[i] = s.Host.Name, t
	}

	readings := checkClocks(ctx, names, targets)
	spread, warning, clocksOK := clockVerdict(readings)
	for _, r := range readings {
		if r.Err != nil {
			e.say(job.Step, r.Host, "clock not read: %v", r.Err)
		}
	}
	switch {
	case warning != "":
		e.opts.Emit(Output{Step: job.Step, Line: runner.Line{Host: names[0], Stream: runner.Stderr, Text: "WARNING: " + warning, Time: time.Now()}})
	case clocksOK:
		e.say(job.Step, names[0], "%d client hosts share the load; their clocks agree within %s, as read over SSH (± half of each round trip)", len(shares), ms(spread))
	}

	latest, stopSamplers := e.startSamplers(ctx, job)
	defer stopSamplers()
	latest.waitReady(ctx.Done(), samplerStartTimeout)
	vj, err := e.startVSphere(ctx, job)
	if err != nil {
		return nil, err
	}
	defer vj.stop()

	var mu sync.Mutex
	var out []results.RunResult
	// failed is the first host whose bench failed on its own; the others
	// were stopped because of it.
	var failed *clientRun
	publish := func(r results.RunResult) {
		out = append(out, r)
		e.opts.Emit(Output{Step: job.Step, Line: runner.Line{Host: job.Client.Name, Text: e.labelled(job, runSummary(job, r)), Time: time.Now()}})
		for _, c := range r.Clients {
			e.say(job.Step, c.Host, "  %s's share: %s ops/s, p99 %.3f ms%s", c.Host, results.FormatNumber(c.OpsPerSec), c.LatencyMs.P99, clientCPUNote(c.ClientHostBusyPct, c.ClientBound, job.servedBy(c.Host)))
		}
		if job.OnRun != nil {
			job.OnRun(r)
		}
	}
	total := expectedDuration(job.Config)
	start := time.Now()
	m := newClientMerge(names)
	m.targetHosts = e.targetHosts(job.Config, job.Servers)
	m.onPoint = func(run int, p results.Point, since time.Time, hosts []HostSecond, targets []TargetSecond) results.Point {
		p = latest.merge(p, since)
		e.opts.Emit(Sample{Step: job.Step, Variant: job.Variant, Figures: e.figures(job), Sweep: job.Sweep, Run: run, Point: p, Clients: hosts, Targets: targets})
		e.emitProgress(job, start, total, fmt.Sprintf("%s, run %d/%d, %d client hosts", job.Label, run, job.Config.Runs, len(shares)))
		return p
	}
	m.onMergeErr = func(err error) {
		e.opts.Emit(Output{Step: job.Step, Line: runner.Line{Host: names[0], Stream: runner.Stderr, Text: "merging the client hosts' samples: " + err.Error(), Time: time.Now()}})
	}
	m.onRun = func(r results.RunResult, since time.Time) {
		if clocksOK {
			r.ClockSpreadMs, r.ClockWarning = durMs(spread), warning
		}
		for i := range r.Clients {
			if rd := readings[i]; rd.Err == nil {
				r.Clients[i].ClockOffsetMs, r.Clients[i].ClockUncertaintyMs = durMs(rd.Offset), durMs(rd.Uncertainty)
			}
		}
		if r.StartSkewMs != nil && *r.StartSkewMs > float64(startSkewWarn)/1e6 {
			e.opts.Emit(Output{Step: job.Step, Line: runner.Line{Host: names[0], Stream: runner.Stderr, Time: time.Now(),
				Text: fmt.Sprintf("run %d: the client hosts began measuring %.0f ms apart (seen from here): each merged second mixes that much of neighbouring seconds", r.Run, *r.StartSkewMs)}})
		}
		r.SummarizeSeries(latest.cores())
		if vj == nil {
			publish(r)
			return
		}
		for _, r := range vj.hold(r, since, latest.cores()) {
			publish(r)
		}
	}

	startAt, perHost, why := commonStart(time.Now(), readings)
	if why != "" {
		e.say(job.Step, names[0], "the client hosts start without a common instant (%s): each begins when its SSH session does", why)
	} else {
		e.say(job.Step, names[0], "the client hosts connect, then begin together at %s (this machine's clock, %s from now): %s", startAt.UTC().Format("15:04:05.000"), time.Until(startAt).Round(time.Millisecond), startAtList(names, perHost, readings))
	}
	bctx, stopAll := context.WithCancel(ctx)
	defer stopAll()
	var wg sync.WaitGroup
	for i, cr := range runs {
		cfg := cr.share.Config
		if perHost != nil {
			cfg.StartAtUnixMs = perHost[i]
		}
		cr.cmd = e.benchCommand(cr.share.Host, cfg, job.Password != "", placement{})
		var stdin []byte
		if job.Password != "" {
			stdin = []byte(job.Password + "\n")
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cr.res, cr.err = cr.t.Run(bctx, runner.Command{Cmd: cr.cmd, Stdin: stdin, Output: func(l runner.Line) {
				e.multiLine(job, m, &mu, i, cr, l)
			}})
			mu.Lock()
			for _, sec := range cr.seconds.flush() {
				m.sample(i, sec.total, time.Now(), sec.targets...)
			}
			m.hostEnded(i)
			if (cr.err != nil || cr.res.ExitCode != 0) && failed == nil && bctx.Err() == nil {
				failed = cr
			}
			mu.Unlock()
			if cr.err != nil || cr.res.ExitCode != 0 {
				stopAll()
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	m.finish()
	mu.Unlock()
	if perHost != nil {
		e.say(job.Step, names[0], "%s", startedNote(runs, perHost))
	}
	if vj != nil {
		for _, r := range vj.drain(ctx, latest.cores()) {
			publish(r)
		}
	}
	first := failed
	if first == nil {
		// Stopped from outside (ctx): any host's error says so.
		for _, cr := range runs {
			if cr.err != nil && first == nil {
				first = cr
			}
		}
	}
	switch {
	case first != nil && first.err != nil:
		return out, &StepError{Host: first.share.Host.Name, Cmd: first.cmd, Tail: first.out.lastLines(), Err: fmt.Errorf("bench %s: %w", job.Label, first.err)}
	case first != nil:
		return out, &StepError{Host: first.share.Host.Name, Cmd: first.cmd, Tail: first.out.lastLines(), Err: fmt.Errorf("bench %s: exit status %d", job.Label, first.res.ExitCode)}
	}
	if err := m.droppedErr(); err != nil {
		return out, &StepError{Host: names[0], Err: fmt.Errorf("bench %s: %w", job.Label, err)}
	}
	if len(out) == 0 {
		return out, &StepError{Host: names[0], Err: fmt.Errorf("bench %s finished without reporting a run", job.Label)}
	}
	return out, nil
}

// multiLine takes one line of client host i's bench.
func (e *Engine) multiLine(job benchJob, m *clientMerge, mu *sync.Mutex, i int, cr *clientRun, l runner.Line) {
	// A line that does not parse is shown; it does not stop the others'
	// merge.
	ev := cr.out.take(e, job.Step, l)
	if ev == nil {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	switch ev := ev.(type) {
	case *benchwire.Sample:
		for _, sec := range cr.seconds.add(ev) {
			m.sample(i, sec.total, time.Now(), sec.targets...)
		}
	case *benchwire.Start:
		cr.started = ev
	case *benchwire.RunResult:
		for _, sec := range cr.seconds.flush() {
			m.sample(i, sec.total, time.Now(), sec.targets...)
		}
		m.runDone(i, ev)
	}
}

// startAtList is each host's --start-at as the run says it.
func startAtList(names []string, perHost []int64, rs []clockReading) string {
	parts := make([]string, len(names))
	for i, n := range names {
		how := "applied"
		if appliedOffset(rs[i]) == 0 {
			how = "within the reading's uncertainty: not applied"
		}
		parts[i] = fmt.Sprintf("%s --start-at %d (clock %s ± %s, %s)", n, perHost[i], signedMs(rs[i].Offset), ms(rs[i].Uncertainty), how)
	}
	return strings.Join(parts, ", ")
}

// startedNote says how each host's bench began against its --start-at,
// from its start line (its own clock): the latest, and any host that did
// not say (an older bench, or one that failed before connecting).
func startedNote(runs []*clientRun, perHost []int64) string {
	var latest time.Duration
	var who string
	var silent, wrong []string
	for i, cr := range runs {
		st := cr.started
		switch {
		case st == nil || st.StartLateMs == nil:
			silent = append(silent, cr.share.Host.Name)
		case st.Config.StartAtUnixMs != perHost[i]:
			wrong = append(wrong, fmt.Sprintf("%s (asked %d, got %d)", cr.share.Host.Name, perHost[i], st.Config.StartAtUnixMs))
		default:
			if d := time.Duration(*st.StartLateMs * 1e6); who == "" || d > latest {
				latest, who = d, cr.share.Host.Name
			}
		}
	}
	var parts []string
	if who != "" {
		whom := "every client host"
		if len(silent)+len(wrong) > 0 {
			whom = "the other client hosts"
		}
		parts = append(parts, fmt.Sprintf("%s began within %s of the common instant by its own clock (latest: %s)", whom, ms(latest), who))
	}
	if len(silent) > 0 {
		parts = append(parts, "no start reported by "+strings.Join(silent, ", "))
	}
	if len(wrong) > 0 {
		parts = append(parts, "a different --start-at reached "+strings.Join(wrong, ", "))
	}
	return strings.Join(parts, "; ")
}

// clientCPUNote is a client host's CPU as the run summaries say it.
// shared: the host also served the load (the quickstart's one host), so a
// saturated CPU is that host's limit with both on it, not the client's.
func clientCPUNote(busy *float64, bound, shared bool) string {
	s := ""
	if busy != nil {
		s = fmt.Sprintf(", client host CPU %.0f%%", *busy)
	}
	switch {
	case bound && shared:
		s += " (SATURATED SHARED HOST: the load generator and the server shared this host's CPUs, which were the limit; run the client role on another host to measure the server alone)"
	case bound:
		s += " (CLIENT-BOUND: the load generator's host was saturated, so the figures understate the server)"
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
