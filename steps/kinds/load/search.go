package load

// The capacity search of a bench or compare step (labs' capacity: key): at
// each variant and sweep point, after the flat-out runs or instead of them,
// the highest rate at which a latency percentile stays under a cap
// (benchwire.Search; internal/wire/benchwire/capacity.go has the method),
// recorded beside the flat-out TPS (results.Capacity, the "TPS at latency
// cap" column, report.md's and report.html's capacity table and chart).
//
// Why a key and not a kind of its own: the search shares everything with
// the compare around it (variants, sweep, deployments, emulated paths, the
// table and its deltas); only the bench's invocation differs. As a key it
// is one more measurement per job, and the capped figure lands in the same
// table as the flat-out one, where it is read against it.
//
// One search, benchwire.Search, from n client hosts. Where it runs
// follows n: with one host (or over an emulated path, whose namespaces
// are on one host) the bench runs it itself (`dpulab bench --capacity`,
// byBench), its probes being the search's: one command, its connections
// kept from probe to probe. With several this kind runs it (byKind) over
// probes that every client host runs at once: a probe at a total rate R
// gives each host its share of R (the proportion SplitLoad gives a rate:
// its share of the connections, or of the instances); each host runs
// `dpulab bench --capacity` with its share as both start and highest
// rate, so its first probe is exactly that probe (the bench's own probe,
// cut when it falls behind, with its histogram), and is stopped after it.
// The hosts' probes are merged (benchhdr.MergeProbes: rates summed, the
// percentile from the union of their histograms, never averaged
// percentiles) and judged as one; their seconds are merged for the
// dashboard as a multi-client run's are (ClientMerge). Every host's probe
// lasts as long as the longest any host needs for its replies, so they
// end together. Either way the clocks, samplers, probes' records, lines
// and answer are the same code (runCapacity, capacitySearch.probe): the
// server hosts' samplers run during the search, so each probe has the
// servers' CPU, and the answer the CPU at the probe that found it.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dpulab/dpulab/internal/benchhdr"
	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/event"
	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/results"
)

// runCapacity runs the search of one job (also when it ended early: what
// it found is returned, with why it ended) and returns its answer and the
// host that says it. It is one search for one client host or several: the
// bench runs it for one (byBench), this kind for several (byKind).
func runCapacity(ctx context.Context, r Measurer, capSpec *labs.CapacitySpec, vars map[string]string, job BenchJob) (*results.Capacity, string, error) {
	cfg, err := CapacityConfig(capSpec, vars, job.Config)
	if err != nil {
		return nil, "", err
	}
	shares, weights := []ClientShare{{Host: job.Client, Config: cfg}}, []float64{1}
	if len(job.Clients) > 1 && job.Path == nil {
		var note string
		shares, weights, note = CapacityShares(cfg, job.Clients)
		if note != "" {
			r.Say(job.Step, shares[0].Host.Name, "%s", note)
		}
		job.Client = shares[0].Host
	} else if len(job.Clients) > 1 {
		// The emulated path's namespaces are on one host.
		r.Say(job.Step, job.Client.Name, "over an emulated path the capacity search runs from %s only", job.Client.Name)
	}
	names := make([]string, len(shares))
	targets := make([]runner.Target, len(shares))
	for i, s := range shares {
		t, err := r.Reached(ctx, s.Host)
		if err != nil {
			return nil, "", err
		}
		names[i], targets[i] = s.Host.Name, t
	}
	if len(shares) > 1 {
		if _, warning, _ := ClockVerdict(CheckClocks(ctx, names, targets)); warning != "" {
			r.Output(job.Step)(runner.Line{Host: names[0], Stream: runner.Stderr, Text: "WARNING: " + warning, Time: time.Now()})
		}
	}
	latest, stopSamplers := StartSamplers(ctx, r, job.Servers, job.Client, job.Path)
	defer stopSamplers()
	latest.WaitReady(ctx.Done(), SamplerStartTimeout)

	s := &capacitySearch{r: r, job: job, spec: *cfg.Capacity, latest: latest, hosts: names}
	var found *benchwire.CapacityResult
	if len(shares) == 1 {
		found, err = s.byBench(ctx, targets[0], cfg)
	} else {
		found, err = s.byKind(ctx, cfg, shares, weights, targets)
	}
	if found == nil {
		return nil, names[0], err
	}
	k := CapacityResult(found, s.probes)
	if len(shares) > 1 {
		k.Clients = names
	}
	return k, names[0], err
}

// capacitySearch is one job's search as it runs: its probes as recorded.
type capacitySearch struct {
	r      Measurer
	job    BenchJob
	spec   benchwire.CapacitySpec
	latest *SampleBoard
	// hosts are the client hosts the load comes from.
	hosts []string

	mu     sync.Mutex
	probes []results.CapacityProbe
}

// series is the dashboard's name for the search's seconds (run = probe).
func (s *capacitySearch) series() string { return s.job.Variant + " capacity search" }

// probe records one probe of the search (ev, with pr its servers' CPU
// and, from several hosts, each one's share), says it and shows how far
// the step is.
func (s *capacitySearch) probe(ev *benchwire.CapacityProbe, pr results.CapacityProbe) {
	r, job := s.r, s.job
	s.mu.Lock()
	s.probes = append(s.probes, pr)
	s.mu.Unlock()
	r.Say(job.Step, s.hosts[0], "%s", Labelled(r, job, ProbeText(job.Label, &s.spec, ev, pr.ServerCPU)))
	for _, c := range pr.Clients {
		r.Say(job.Step, c.Host, "  %s's share: %s ops/s asked, %s answered, p%s %.3f ms%s", c.Host, results.RateText(c.RateOpsPerSec),
			results.RateText(c.OpsPerSec), strconv.FormatFloat(s.spec.Percentile, 'g', -1, 64), c.PercentileMs, ClientCPUNote(c.ClientBusyPct, c.ClientBound, job.servedBy(c.Host)))
	}
	label := fmt.Sprintf("%s, capacity probe %d", job.Label, ev.Probe)
	if len(s.hosts) > 1 {
		label += fmt.Sprintf(", %d client hosts", len(s.hosts))
	}
	r.Emit(event.Progress{Step: job.Step, Figures: Figures(r, job), Label: label, Fraction: job.ProgressBase + job.ProgressSpan, Elapsed: time.Since(job.StepStart)})
}

// byBench is the search from one client host (t): the bench searches on
// its own (`dpulab bench --capacity`), in the emulated path's client
// namespace when there is one. It returns the bench's answer (also one
// that ended early) and why the search failed.
func (s *capacitySearch) byBench(ctx context.Context, t runner.Target, cfg benchwire.Config) (*benchwire.CapacityResult, error) {
	r, job, latest := s.r, s.job, s.latest
	at := Placement{CPUs: job.ClientCPUs}
	if job.Path != nil {
		at.NS = job.Path.ClientNS
	}
	cmd := BenchCommand(r.Agent(job.Client), cfg, job.Password != "", at)
	stdin := passwordStdin(job.Password)
	r.Say(job.Step, job.Client.Name, "%s: capacity search, %s", job.Label, SearchText(cfg.Capacity))
	var (
		mu    sync.Mutex
		found *benchwire.CapacityResult
		out   BenchOutput
		// Each probe's seconds with the servers' columns, and when the
		// probe's measurement began (as RunBench estimates a run's).
		points = map[int][]results.Point{}
		starts runStarts
	)
	show := r.Output(job.Step)
	res, err := t.Run(ctx, runner.Command{Cmd: cmd, Stdin: stdin, Output: func(l runner.Line) {
		ev := out.Take(l, show)
		switch ev := ev.(type) {
		case *benchwire.Sample:
			if ev.Target != "" {
				return
			}
			pt := latest.Merge(SamplePoint(ev), starts.of(ev))
			mu.Lock()
			points[ev.Run] = append(points[ev.Run], pt)
			mu.Unlock()
			r.Emit(event.Sample{Step: job.Step, Variant: s.series(), Figures: Figures(r, job), Sweep: job.Sweep, Run: ev.Run, Point: pt})
		case *benchwire.CapacityProbe:
			pr := ProbeResult(ev)
			mu.Lock()
			pr.ServerCPU = ProbeServerCPU(points[ev.Probe], latest)
			delete(points, ev.Probe)
			mu.Unlock()
			s.probe(ev, pr)
		case *benchwire.CapacityResult:
			mu.Lock()
			found = ev
			mu.Unlock()
		}
	}})
	mu.Lock()
	defer mu.Unlock()
	decodeErr := out.Err()
	fail := func(err error) error {
		return &kind.StepError{Host: job.Client.Name, Cmd: cmd, Tail: out.LastLines(), Err: fmt.Errorf("capacity search %s: %w", job.Label, err)}
	}
	switch {
	case err != nil:
		return found, fail(err)
	case res.ExitCode != 0:
		return found, fail(fmt.Errorf("exit status %d", res.ExitCode))
	case decodeErr != nil:
		return found, fail(decodeErr)
	case found == nil:
		return nil, fail(errors.New("the bench ended without its capacity line"))
	case found.Err != "":
		return found, fail(errors.New(found.Err))
	}
	return found, nil
}

// probeHost is one client host's part of one probe.
type probeHost struct {
	share ClientShare
	t     runner.Target
	cmd   string
	out   BenchOutput
	res   runner.Result
	err   error
	probe *benchwire.CapacityProbe
	// stopped is set when the search stopped the host's bench after its
	// probe: its exit then says nothing.
	stopped bool
}

// byKind is the search from several client hosts (shares, on targets;
// weights: each one's fraction of a probe's rate), the samplers already
// running: benchwire.Search over probes every host runs at once. It
// returns the search's answer (also one that ended early) and why it
// failed.
func (s *capacitySearch) byKind(ctx context.Context, cfg benchwire.Config, shares []ClientShare, weights []float64, targets []runner.Target) (*benchwire.CapacityResult, error) {
	r, job, names, spec := s.r, s.job, s.hosts, s.spec
	var split []string
	minW := 1.0
	for i, w := range weights {
		split = append(split, fmt.Sprintf("%s %s%%", names[i], strconv.FormatFloat(w*100, 'g', 3, 64)))
		minW = min(minW, w)
	}
	r.Say(job.Step, names[0], "%s: capacity search from %d client hosts, every probe's rate split among them (%s) and judged on their merged latencies, %s",
		job.Label, len(shares), strings.Join(split, ", "), SearchText(&spec))
	// The lowest total rate at which every host's share can still be
	// measured by a probe of the step's duration.
	floor := benchwire.MinProbeRate(cfg, spec) / minW

	var (
		extras = map[int]results.CapacityProbe{} // each probe's server CPU and shares
		// failed is the host whose bench failed a probe, if one did.
		failed *probeHost
	)
	probe := func(n int, rate float64) (*benchwire.CapacityProbe, error) {
		d := ProbeLength(cfg, spec, shares, weights, rate)
		hosts := make([]*probeHost, len(shares))
		for i, sh := range shares {
			hc := HostProbeConfig(sh.Config, spec, rate*weights[i], d, n == 1)
			hosts[i] = &probeHost{share: ClientShare{Host: sh.Host, Config: hc}, t: targets[i], cmd: BenchCommand(r.Agent(sh.Host), hc, job.Password != "", Placement{})}
		}
		merged, pts, bad, err := s.runProbe(ctx, n, hosts)
		if err != nil {
			failed = bad
			return nil, err
		}
		hp := make([]*benchwire.CapacityProbe, len(hosts))
		x := results.CapacityProbe{ServerCPU: ProbeServerCPU(pts, s.latest)}
		for i, h := range hosts {
			hp[i] = h.probe
			x.Clients = append(x.Clients, results.CapacityShare{Host: names[i], RateOpsPerSec: h.probe.RateOpsPerSec, OpsPerSec: h.probe.OpsPerSec,
				PercentileMs: h.probe.PercentileMs, Errors: h.probe.Errors, Unsent: h.probe.Unsent, ClientBusyPct: h.probe.ClientHostBusyPct, ClientBound: h.probe.ClientBound})
		}
		if merged.StartSkewMs != nil && *merged.StartSkewMs > float64(StartSkewWarn)/1e6 {
			r.Say(job.Step, names[0], "probe %d: the client hosts began measuring %.0f ms apart (seen from here)", n, *merged.StartSkewMs)
		}
		extras[n] = x
		mp, err := benchhdr.MergeProbes(spec, n, rate, hp)
		if err != nil {
			return nil, fmt.Errorf("merge the client hosts' probes: %w", err)
		}
		return mp, nil
	}
	emit := func(ev benchwire.Event) {
		if ev, ok := ev.(*benchwire.CapacityProbe); ok {
			pr := ProbeResult(ev)
			x := extras[ev.Probe]
			pr.ServerCPU, pr.Clients = x.ServerCPU, x.Clients
			s.probe(ev, pr)
		}
	}
	res, serr := benchwire.Search(ctx, spec, floor, probe, emit)
	switch {
	case serr == nil:
		return res, nil
	case failed != nil:
		// The host whose bench failed, with its command and last lines.
		return res, &kind.StepError{Host: failed.share.Host.Name, Cmd: failed.cmd, Tail: failed.out.LastLines(), Err: fmt.Errorf("capacity search %s: %w", job.Label, serr)}
	}
	return res, &kind.StepError{Host: names[0], Err: fmt.Errorf("capacity search %s: %w", job.Label, serr)}
}

// runProbe runs probe n on every host at once, each stopped as soon as
// its probe is reported; their seconds are merged for the dashboard (with
// the servers' columns) and their runs into one. It returns the merged
// run and its seconds, or why the probe could not be measured and the
// first host whose bench failed (the others are then stopped).
func (s *capacitySearch) runProbe(ctx context.Context, n int, hosts []*probeHost) (results.RunResult, []results.Point, *probeHost, error) {
	r, job, names, latest := s.r, s.job, s.hosts, s.latest
	var (
		mu     sync.Mutex
		merged *results.RunResult
		pts    []results.Point
		first  *probeHost
	)
	m := NewClientMerge(names)
	m.OnPoint = func(_ int, pt results.Point, since time.Time, hs []event.HostSecond, ts []event.TargetSecond) results.Point {
		pt = latest.Merge(pt, since)
		pts = append(pts, pt)
		r.Emit(event.Sample{Step: job.Step, Variant: s.series(), Figures: Figures(r, job), Sweep: job.Sweep, Run: n, Point: pt, Clients: hs, Targets: ts})
		return pt
	}
	m.OnRun = func(run results.RunResult, _ time.Time) { merged = &run }
	m.OnMergeErr = func(err error) {
		r.Output(job.Step)(runner.Line{Host: names[0], Stream: runner.Stderr, Text: "merging the client hosts' samples: " + err.Error(), Time: time.Now()})
	}
	pctx, stopAll := context.WithCancel(ctx)
	defer stopAll()
	stdin := passwordStdin(job.Password)
	var wg sync.WaitGroup
	for i, h := range hosts {
		hctx, cancel := context.WithCancel(pctx)
		wg.Add(1)
		show := r.Output(job.Step)
		go func() {
			defer wg.Done()
			defer cancel()
			h.res, h.err = h.t.Run(hctx, runner.Command{Cmd: h.cmd, Stdin: stdin, Output: func(l runner.Line) {
				mu.Lock()
				stopped := h.stopped
				mu.Unlock()
				if stopped && l.Stream == runner.Stderr {
					return // its being stopped, said by the bench
				}
				switch ev := h.out.Take(l, show).(type) {
				case *benchwire.Sample:
					if ev.Target != "" || ev.Run != 1 {
						return
					}
					mu.Lock()
					m.Sample(i, ev, time.Now())
					mu.Unlock()
				case *benchwire.CapacityProbe:
					if ev.Probe != 1 {
						return
					}
					mu.Lock()
					h.probe = ev
					h.stopped = true
					// The probe as a run, for the merge of the seconds.
					m.RunDone(i, &benchwire.RunResult{Run: 1, Totals: benchwire.Totals{Seconds: ev.DurationSeconds, Ops: ev.Ops, OpsPerSec: ev.OpsPerSec,
						LatencyMs: ev.LatencyMs, Errors: ev.Errors, ErrorsByKind: ev.ErrorsByKind, LatencyHDR: ev.LatencyHDR},
						ClientCPUPct: ev.ClientCPUPct, ClientHostBusyPct: ev.ClientHostBusyPct, ClientBound: ev.ClientBound, Unsent: ev.Unsent})
					mu.Unlock()
					// Its next probe would be the bench's own search.
					cancel()
				}
			}})
			mu.Lock()
			m.HostEnded(i)
			failed := h.probe == nil || h.probe.Err != ""
			if failed && first == nil && pctx.Err() == nil {
				first = h
			}
			mu.Unlock()
			if failed {
				stopAll()
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	m.Finish()
	var errs []error
	for _, h := range hosts {
		switch {
		case h.probe != nil && h.probe.Err != "":
			errs = append(errs, fmt.Errorf("%s: %s", h.share.Host.Name, h.probe.Err))
		case h.probe != nil:
		case h.err != nil && ctx.Err() == nil && !errors.Is(h.err, context.Canceled):
			errs = append(errs, fmt.Errorf("%s: %w", h.share.Host.Name, h.err))
		case h.res.ExitCode != 0 && h.err == nil:
			errs = append(errs, fmt.Errorf("%s: bench exit status %d", h.share.Host.Name, h.res.ExitCode))
		case ctx.Err() != nil:
			errs = append(errs, fmt.Errorf("%s: %w", h.share.Host.Name, ctx.Err()))
		}
	}
	if len(errs) == 0 {
		for _, h := range hosts {
			if h.probe == nil {
				errs = append(errs, fmt.Errorf("%s: stopped before its probe ended (another host's bench failed)", h.share.Host.Name))
			}
		}
	}
	if len(errs) > 0 {
		return results.RunResult{}, nil, first, errors.Join(errs...)
	}
	if merged == nil {
		return results.RunResult{}, nil, nil, errors.New("the client hosts' probes could not be merged")
	}
	return *merged, pts, nil, nil
}
