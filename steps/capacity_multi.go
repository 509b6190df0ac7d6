package steps

// A capacity search from several client hosts (issue 17). One client host
// cannot offer the load of a lab whose step names several, so the engine
// drives the search itself: benchwire.Search, the search `dpulab bench
// --capacity` runs, over probes that every client host runs at once. A
// probe at a total rate R gives each host its share of R (the proportion
// load.SplitLoad gives a rate: its share of the connections, or of the
// instances); each host runs `dpulab bench --capacity` with its share as
// both start and highest rate, so its first probe is exactly that probe
// (the bench's own probe, cut when it falls behind, with its histogram),
// and is stopped after it. The hosts' probes are merged (benchhdr.MergeProbes:
// rates summed, the percentile from the union of their histograms, never
// averaged percentiles) and judged as one; their seconds are merged for
// the dashboard as a multi-client run's are (load.ClientMerge). Every host's
// probe lasts as long as the longest any host needs for its replies, so
// they end together.

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
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/kinds/load"
	"github.com/dpulab/dpulab/steps/results"
)

// probeHost is one client host's part of one probe.
type probeHost struct {
	share load.ClientShare
	t     runner.Target
	cmd   string
	out   load.BenchOutput
	res   runner.Result
	err   error
	probe *benchwire.CapacityProbe
	// stopped is set when the engine stopped the host's bench after its
	// probe: its exit then says nothing.
	stopped bool
}

// byEngine is the search from several client hosts (shares, on targets;
// weights: each one's fraction of a probe's rate), the samplers already
// running: benchwire.Search over probes every host runs at once. It
// returns the search's answer (also one that ended early) and why it
// failed.
func (s *capacitySearch) byEngine(ctx context.Context, cfg benchwire.Config, shares []load.ClientShare, weights []float64, targets []runner.Target) (*benchwire.CapacityResult, error) {
	e, job, names, spec := s.p.e, s.job, s.hosts, s.spec
	var split []string
	minW := 1.0
	for i, w := range weights {
		split = append(split, fmt.Sprintf("%s %s%%", names[i], strconv.FormatFloat(w*100, 'g', 3, 64)))
		minW = min(minW, w)
	}
	e.say(job.Step, names[0], "%s: capacity search from %d client hosts, every probe's rate split among them (%s) and judged on their merged latencies, %s",
		job.Label, len(shares), strings.Join(split, ", "), load.SearchText(&spec))
	// The lowest total rate at which every host's share can still be
	// measured by a probe of the step's duration.
	floor := benchwire.MinProbeRate(cfg, spec) / minW

	var (
		extras = map[int]results.CapacityProbe{} // each probe's server CPU and shares
		// failed is the host whose bench failed a probe, if one did.
		failed *probeHost
	)
	probe := func(n int, rate float64) (*benchwire.CapacityProbe, error) {
		d := load.ProbeLength(cfg, spec, shares, weights, rate)
		hosts := make([]*probeHost, len(shares))
		for i, sh := range shares {
			hc := load.HostProbeConfig(sh.Config, spec, rate*weights[i], d, n == 1)
			hosts[i] = &probeHost{share: load.ClientShare{Host: sh.Host, Config: hc}, t: targets[i], cmd: load.BenchCommand(e.dpulabOn(sh.Host), hc, job.Password != "", load.Placement{})}
		}
		merged, pts, bad, err := s.runProbe(ctx, n, hosts)
		if err != nil {
			failed = bad
			return nil, err
		}
		hp := make([]*benchwire.CapacityProbe, len(hosts))
		x := results.CapacityProbe{ServerCPU: load.ProbeServerCPU(pts, s.latest)}
		for i, h := range hosts {
			hp[i] = h.probe
			x.Clients = append(x.Clients, results.CapacityShare{Host: names[i], RateOpsPerSec: h.probe.RateOpsPerSec, OpsPerSec: h.probe.OpsPerSec,
				PercentileMs: h.probe.PercentileMs, Errors: h.probe.Errors, Unsent: h.probe.Unsent, ClientBusyPct: h.probe.ClientHostBusyPct, ClientBound: h.probe.ClientBound})
		}
		if merged.StartSkewMs != nil && *merged.StartSkewMs > float64(load.StartSkewWarn)/1e6 {
			e.say(job.Step, names[0], "probe %d: the client hosts began measuring %.0f ms apart (seen from here)", n, *merged.StartSkewMs)
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
			pr := load.ProbeResult(ev)
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
		return res, &StepError{Host: failed.share.Host.Name, Cmd: failed.cmd, Tail: failed.out.LastLines(), Err: fmt.Errorf("capacity search %s: %w", job.Label, serr)}
	}
	return res, &StepError{Host: names[0], Err: fmt.Errorf("capacity search %s: %w", job.Label, serr)}
}

// runProbe runs probe n on every host at once, each stopped as soon as
// its probe is reported; their seconds are merged for the dashboard (with
// the servers' columns) and their runs into one. It returns the merged
// run and its seconds, or why the probe could not be measured and the
// first host whose bench failed (the others are then stopped).
func (s *capacitySearch) runProbe(ctx context.Context, n int, hosts []*probeHost) (results.RunResult, []results.Point, *probeHost, error) {
	e, job, names, latest := s.p.e, s.job, s.hosts, s.latest
	var (
		mu     sync.Mutex
		merged *results.RunResult
		pts    []results.Point
		first  *probeHost
	)
	m := load.NewClientMerge(names)
	m.OnPoint = func(_ int, pt results.Point, since time.Time, hs []HostSecond, ts []TargetSecond) results.Point {
		pt = latest.Merge(pt, since)
		pts = append(pts, pt)
		e.opts.Emit(Sample{Step: job.Step, Variant: s.series(), Figures: e.figures(job), Sweep: job.Sweep, Run: n, Point: pt, Clients: hs, Targets: ts})
		return pt
	}
	m.OnRun = func(r results.RunResult, _ time.Time) { merged = &r }
	m.OnMergeErr = func(err error) {
		e.opts.Emit(Output{Step: job.Step, Line: runner.Line{Host: names[0], Stream: runner.Stderr, Text: "merging the client hosts' samples: " + err.Error(), Time: time.Now()}})
	}
	pctx, stopAll := context.WithCancel(ctx)
	defer stopAll()
	var stdin []byte
	if job.Password != "" {
		stdin = []byte(job.Password + "\n")
	}
	var wg sync.WaitGroup
	for i, h := range hosts {
		hctx, cancel := context.WithCancel(pctx)
		wg.Add(1)
		show := e.emitOutput(job.Step)
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
