package steps

// The capacity search of a bench or compare step (labs' capacity: key): at
// each variant and sweep point, after the flat-out runs or instead of them,
// `dpulab bench --capacity` finds the highest rate at which a latency
// percentile stays under a cap (internal/wire/benchwire/capacity.go has the method),
// and the engine records it beside the flat-out TPS (results.Capacity, the
// "TPS at latency cap" column, report.md's and report.html's capacity table
// and chart).
//
// Why a key and not a kind of its own: the search shares everything with
// the compare around it (variants, sweep, deployments, emulated paths, the
// table and its deltas); only the bench's invocation differs. As a key it
// is one more measurement per job, and the capped figure lands in the same
// table as the flat-out one, where it is read against it.
//
// With one client host the bench searches on its own; with several, the
// engine drives the same search (benchwire.Search) over probes that every
// client host runs at once with its share of the rate, judged on their
// merged histograms (capacity_multi.go). The server hosts' samplers run
// during the search: each probe has the servers' CPU, and the answer the
// CPU at the probe that found it.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/runner/netpath"
	"github.com/dpulab/dpulab/steps/kinds/load"
	"github.com/dpulab/dpulab/steps/results"
)

// capacityJob is one search: the job it belongs to and where its result
// goes (variant vi, point pi of res).
type capacityJob struct {
	job    benchJob
	vars   map[string]string
	path   *netpath.Path
	res    *results.Compare
	vi, pi int
}

// runCapacity runs the search of one job and records it at its point
// (also when it ended early: what it found is kept, with why it ended).
// It is one search for one client host or several: with one, the bench
// searches on its own and its probe lines are the search's probes
// (byBench); with several (and no emulated path, whose namespaces are on
// one host) the engine runs the same search, benchwire.Search, over
// probes the hosts run together (byEngine, capacity_multi.go). Either way
// each probe is recorded, said and shown alike (capacitySearch.probe).
// The server hosts' samplers run during the search, so each probe has the
// servers' CPU, and the answer the CPU at the probe that found it.
func (p *loadPlan) runCapacity(ctx context.Context, cj capacityJob) error {
	e, job := p.e, cj.job
	cfg, err := load.CapacityConfig(p.Spec.Capacity, cj.vars, job.Config)
	if err != nil {
		return err
	}
	shares, weights := []load.ClientShare{{Host: job.Client, Config: cfg}}, []float64{1}
	if len(job.Clients) > 1 && cj.path == nil {
		var note string
		shares, weights, note = load.CapacityShares(cfg, job.Clients)
		if note != "" {
			e.say(job.Step, shares[0].Host.Name, "%s", note)
		}
		job.Client = shares[0].Host
	} else if len(job.Clients) > 1 {
		// The emulated path's namespaces are on one host.
		e.say(job.Step, job.Client.Name, "over an emulated path the capacity search runs from %s only", job.Client.Name)
	}
	names := make([]string, len(shares))
	targets := make([]runner.Target, len(shares))
	for i, s := range shares {
		t, err := e.hosts.target(ctx, s.Host.Name)
		if err != nil {
			return &StepError{Host: s.Host.Name, Err: err}
		}
		if err := e.ensureHost(ctx, s.Host, t); err != nil {
			return err
		}
		names[i], targets[i] = s.Host.Name, t
	}
	if len(shares) > 1 {
		if _, warning, _ := load.ClockVerdict(load.CheckClocks(ctx, names, targets)); warning != "" {
			e.opts.Emit(Output{Step: job.Step, Line: runner.Line{Host: names[0], Stream: runner.Stderr, Text: "WARNING: " + warning, Time: time.Now()}})
		}
	}
	latest, stopSamplers := load.StartSamplers(ctx, kindEnv{e}, job.Servers, job.Client, job.Path)
	defer stopSamplers()
	latest.WaitReady(ctx.Done(), load.SamplerStartTimeout)

	s := &capacitySearch{p: p, job: job, path: cj.path, spec: *cfg.Capacity, latest: latest, hosts: names}
	var found *benchwire.CapacityResult
	if len(shares) == 1 {
		found, err = s.byBench(ctx, targets[0], cfg)
	} else {
		found, err = s.byEngine(ctx, cfg, shares, weights, targets)
	}
	if found != nil {
		k := load.CapacityResult(found, s.probes)
		if len(shares) > 1 {
			k.Clients = names
		}
		p.recordCapacity(cj, names[0], k)
	}
	return err
}

// capacitySearch is one job's search as it runs: its probes as recorded.
type capacitySearch struct {
	p      *loadPlan
	job    benchJob
	path   *netpath.Path
	spec   benchwire.CapacitySpec
	latest *load.SampleBoard
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
	e, job := s.p.e, s.job
	s.mu.Lock()
	s.probes = append(s.probes, pr)
	s.mu.Unlock()
	e.say(job.Step, s.hosts[0], "%s", e.labelled(job, load.ProbeText(job.Label, &s.spec, ev, pr.ServerCPU)))
	for _, c := range pr.Clients {
		e.say(job.Step, c.Host, "  %s's share: %s ops/s asked, %s answered, p%s %.3f ms%s", c.Host, results.RateText(c.RateOpsPerSec),
			results.RateText(c.OpsPerSec), strconv.FormatFloat(s.spec.Percentile, 'g', -1, 64), c.PercentileMs, load.ClientCPUNote(c.ClientBusyPct, c.ClientBound, job.servedBy(c.Host)))
	}
	label := fmt.Sprintf("%s, capacity probe %d", job.Label, ev.Probe)
	if len(s.hosts) > 1 {
		label += fmt.Sprintf(", %d client hosts", len(s.hosts))
	}
	e.opts.Emit(Progress{Step: job.Step, Figures: e.figures(job), Label: label, Fraction: job.ProgressBase + job.ProgressSpan, Elapsed: time.Since(job.StepStart)})
}

// byBench is the search from one client host (t): the bench searches on
// its own (`dpulab bench --capacity`), in the emulated path's client
// namespace when there is one. It returns the bench's answer (also one
// that ended early) and why the search failed.
func (s *capacitySearch) byBench(ctx context.Context, t runner.Target, cfg benchwire.Config) (*benchwire.CapacityResult, error) {
	e, job, latest := s.p.e, s.job, s.latest
	at := load.Placement{CPUs: job.ClientCPUs}
	if s.path != nil {
		at.NS = s.path.ClientNS
	}
	cmd := load.BenchCommand(e.dpulabOn(job.Client), cfg, job.Password != "", at)
	var stdin []byte
	if job.Password != "" {
		stdin = []byte(job.Password + "\n")
	}
	e.say(job.Step, job.Client.Name, "%s: capacity search, %s", job.Label, load.SearchText(cfg.Capacity))
	var (
		mu    sync.Mutex
		found *benchwire.CapacityResult
		out   load.BenchOutput
		// Each probe's seconds with the servers' columns, and when the
		// probe's measurement began (as runBench estimates a run's).
		points = map[int][]results.Point{}
		starts runStarts
	)
	show := e.emitOutput(job.Step)
	res, err := t.Run(ctx, runner.Command{Cmd: cmd, Stdin: stdin, Output: func(l runner.Line) {
		ev := out.Take(l, show)
		switch ev := ev.(type) {
		case *benchwire.Sample:
			if ev.Target != "" {
				return
			}
			pt := latest.Merge(load.SamplePoint(ev), starts.of(ev))
			mu.Lock()
			points[ev.Run] = append(points[ev.Run], pt)
			mu.Unlock()
			e.opts.Emit(Sample{Step: job.Step, Variant: s.series(), Figures: e.figures(job), Sweep: job.Sweep, Run: ev.Run, Point: pt})
		case *benchwire.CapacityProbe:
			pr := load.ProbeResult(ev)
			mu.Lock()
			pr.ServerCPU = load.ProbeServerCPU(points[ev.Probe], latest)
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
		return &StepError{Host: job.Client.Name, Cmd: cmd, Tail: out.LastLines(), Err: fmt.Errorf("capacity search %s: %w", job.Label, err)}
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

// recordCapacity says a search's answer and records it at its point.
func (p *loadPlan) recordCapacity(cj capacityJob, host string, k *results.Capacity) {
	e, job := p.e, cj.job
	e.say(job.Step, host, "%s", e.labelled(job, load.FoundText(job.Label, k)))
	e.mu.Lock()
	defer e.mu.Unlock()
	results.SetCapacity(&cj.res.Variants[cj.vi].Points[cj.pi], k)
	results.ComputeDeltas(cj.res)
	e.upsertBenchLocked(load.MeasuredOnly(*cj.res))
	if werr := e.writeResultsLocked(false); werr != nil {
		e.say(job.Step, host, "results not written: %s", werr)
	}
}

// measure is a job's measurement: the flat-out runs (runBench), then the
// capacity search when the step asks for one, or the search alone (mode:
// instead). A search follows only flat-out runs that went well: after a
// failure the servers are suspect and the step fails anyway.
func (p *loadPlan) measure(ctx context.Context, job benchJob, j loadJob, path *netpath.Path, res *results.Compare, vi, pi int) error {
	spec := p.Spec.Capacity
	if spec == nil || !spec.Instead {
		if _, err := p.e.runBench(ctx, job); err != nil || spec == nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return p.runCapacity(ctx, capacityJob{job: job, vars: j.Vars, path: path, res: res, vi: vi, pi: pi})
}
