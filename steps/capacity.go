package steps

// The capacity search of a bench or compare step (labs' capacity: key): at
// each variant and sweep point, after the flat-out runs or instead of them,
// `dpulab bench --capacity` finds the highest rate at which a latency
// percentile stays under a cap (server/bench/capacity.go has the method),
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
// The search runs from one client host, the first of the step's role: a
// probe's rate is one schedule, which several hosts would have to share
// in step. Samplers do not run during it (its figure is a rate, not a CPU
// share).

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/runner/netpath"
	"github.com/dpulab/dpulab/server/bench"
	"github.com/dpulab/dpulab/steps/results"
)

// defaultObjective is the objective of a capacity: mapping without one.
const defaultObjective = "p99<=1ms"

// capacityConfig is flat, a job's bench configuration, as the capacity
// search spec runs it: the same targets and load shape, no rate, no request
// count, one search (bench.Config.Validate refuses those with --capacity).
func capacityConfig(spec *labs.CapacitySpec, vars map[string]string, flat bench.Config) (bench.Config, error) {
	obj, err := spec.Objective.String(vars, defaultObjective)
	if err != nil {
		return flat, fmt.Errorf("capacity objective: %w", err)
	}
	cs, err := bench.ParseCapacity(obj)
	if err != nil {
		return flat, err
	}
	if cs.Precision, err = spec.Precision.Float(vars, cs.Precision); err != nil {
		return flat, fmt.Errorf("capacity precision: %w", err)
	}
	if cs.StartRate, err = spec.StartRate.Float(vars, cs.StartRate); err != nil {
		return flat, fmt.Errorf("capacity start_rate: %w", err)
	}
	if cs.MaxRate, err = spec.MaxRate.Float(vars, 0); err != nil {
		return flat, fmt.Errorf("capacity max_rate: %w", err)
	}
	c := flat
	c.Rate, c.RateLimiting, c.Requests, c.RequestsPerClient, c.Runs = 0, 0, 0, 0, 1
	c.JSONOutFile, c.HDRFilePrefix = "", ""
	c.Capacity = &cs
	if err := c.Validate(); err != nil {
		return flat, fmt.Errorf("capacity search: %w", err)
	}
	return c, nil
}

// capacityCommands is what a job's capacity search runs, for the plan and
// the dry run (the flat-out bench's command is planned beside it unless the
// search replaces it).
func (p *loadPlan) capacityCommands(j loadJob, at placement) []PlannedCommand {
	spec := p.spec.Capacity
	if spec == nil {
		return nil
	}
	c, err := capacityConfig(spec, j.vars, j.planned)
	if err != nil {
		return []PlannedCommand{{Host: p.client.Name, Cmd: "# capacity search refused: " + err.Error()}}
	}
	note := "# then the capacity search (" + c.Capacity.Objective() + ")"
	if spec.Instead {
		note = "# the capacity search (" + c.Capacity.Objective() + "), instead of the flat-out runs"
	}
	return []PlannedCommand{
		{Host: p.client.Name, Cmd: note},
		{Host: p.client.Name, Cmd: p.e.benchCommand(p.client, c, benchPassword(j.vars) != "", at)},
	}
}

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
func (p *loadPlan) runCapacity(ctx context.Context, cj capacityJob) error {
	e, job := p.e, cj.job
	cfg, err := capacityConfig(p.spec.Capacity, cj.vars, job.Config)
	if err != nil {
		return err
	}
	client, err := e.hosts.target(ctx, job.Client.Name)
	if err != nil {
		return &StepError{Host: job.Client.Name, Err: err}
	}
	if err := e.ensureHost(ctx, job.Client, client); err != nil {
		return err
	}
	at := placement{CPUs: job.ClientCPUs}
	if cj.path != nil {
		at.NS = cj.path.ClientNS
	}
	cmd := e.benchCommand(job.Client, cfg, job.Password != "", at)
	var stdin []byte
	if job.Password != "" {
		stdin = []byte(job.Password + "\n")
	}
	// The dashboard shows the probes as a series of their own, run = probe.
	series := job.Variant + " capacity search"
	e.say(job.Step, job.Client.Name, "%s: capacity search, %s", job.Label, searchText(cfg.Capacity))
	var (
		mu     sync.Mutex
		found  *bench.CapacityResult
		probes []results.CapacityProbe
		out    benchOutput
	)
	res, err := client.Run(ctx, runner.Command{Cmd: cmd, Stdin: stdin, Output: func(l runner.Line) {
		ev := out.take(e, job.Step, l)
		switch ev := ev.(type) {
		case *bench.Sample:
			if ev.Target != "" {
				return
			}
			pt := results.Point{T: ev.T, OpsPerSec: ev.OpsPerSec, LatencyMs: results.Latency(ev.LatencyMs), Errors: ev.Errors}
			e.opts.Emit(Sample{Step: job.Step, Variant: series, Sweep: job.Sweep, Run: ev.Run, Point: pt})
		case *bench.CapacityProbe:
			mu.Lock()
			probes = append(probes, probeResult(ev))
			mu.Unlock()
			e.say(job.Step, job.Client.Name, "%s", probeText(job.Label, cfg.Capacity, ev))
			e.opts.Emit(Progress{Step: job.Step, Label: fmt.Sprintf("%s, capacity probe %d", job.Label, ev.Probe),
				Fraction: job.ProgressBase + job.ProgressSpan, Elapsed: time.Since(job.StepStart)})
		case *bench.CapacityResult:
			mu.Lock()
			found = ev
			mu.Unlock()
		}
	}})
	mu.Lock()
	defer mu.Unlock()
	if found != nil {
		k := capacityResult(found, probes)
		e.say(job.Step, job.Client.Name, "%s", foundText(job.Label, k))
		e.mu.Lock()
		results.SetCapacity(&cj.res.Variants[cj.vi].Points[cj.pi], k)
		results.ComputeDeltas(cj.res)
		e.upsertBenchLocked(measuredOnly(*cj.res))
		if werr := e.writeResultsLocked(false); werr != nil {
			e.say(job.Step, job.Client.Name, "results not written: %s", werr)
		}
		e.mu.Unlock()
	}
	decodeErr := out.err()
	fail := func(err error) error {
		return &StepError{Host: job.Client.Name, Cmd: cmd, Tail: out.lastLines(), Err: fmt.Errorf("capacity search %s: %w", job.Label, err)}
	}
	switch {
	case err != nil:
		return fail(err)
	case res.ExitCode != 0:
		return fail(fmt.Errorf("exit status %d", res.ExitCode))
	case decodeErr != nil:
		return fail(decodeErr)
	case found == nil:
		return fail(errors.New("the bench ended without its capacity line"))
	case found.Err != "":
		return fail(errors.New(found.Err))
	}
	return nil
}

// searchText says what a search looks for and how precisely.
func searchText(s *bench.CapacitySpec) string {
	t := fmt.Sprintf("highest rate with %s, within %s%%, from %s ops/s", s.Objective(), strconv.FormatFloat(s.Precision*100, 'g', 3, 64), results.RateText(s.StartRate))
	if s.MaxRate > 0 {
		t += " up to " + results.RateText(s.MaxRate)
	}
	return t
}

// probeText is the line said after each probe.
func probeText(label string, s *bench.CapacitySpec, p *bench.CapacityProbe) string {
	verdict := "met"
	if !p.Pass {
		verdict = "missed: " + p.Reason
	}
	return fmt.Sprintf("%s capacity probe %d: %s ops/s asked, %s answered, p%s %.3f ms: %s", label, p.Probe,
		results.RateText(p.RateOpsPerSec), results.RateText(p.OpsPerSec), strconv.FormatFloat(s.Percentile, 'g', -1, 64), p.PercentileMs, verdict)
}

// foundText is the line said when a search ends.
func foundText(label string, k *results.Capacity) string {
	t := label + ": TPS at " + k.ObjectiveText() + ": "
	if k.RateOpsPerSec > 0 {
		t += results.RateText(k.RateOpsPerSec) + " ops/s"
	} else {
		t += "none"
	}
	t += fmt.Sprintf(" (%d probes", k.Probes)
	if o := k.Outcome(); o != "" {
		t += "; " + o
	}
	return t + ")"
}

func probeResult(p *bench.CapacityProbe) results.CapacityProbe {
	return results.CapacityProbe{Probe: p.Probe, RateOpsPerSec: p.RateOpsPerSec, OpsPerSec: p.OpsPerSec, PercentileMs: p.PercentileMs,
		Errors: p.Errors, Unsent: p.Unsent, Pass: p.Pass, Reason: p.Reason, ClientBound: p.ClientBound}
}

func capacityResult(r *bench.CapacityResult, probes []results.CapacityProbe) *results.Capacity {
	return &results.Capacity{
		Objective: r.Objective, Percentile: r.Percentile, CapMs: r.CapMs, Precision: r.Precision,
		RateOpsPerSec: r.RateOpsPerSec, OpsPerSec: r.OpsPerSec, PercentileMs: r.PercentileMs, LatencyMs: results.Latency(r.LatencyMs),
		FailedRateOpsPerSec: r.FailedRateOpsPerSec, Probes: r.Probes, ProbeLog: probes,
		Limit: r.Limit, ClientBound: r.ClientBound, Err: r.Err,
	}
}

// withCapacity is a job's planned commands: the flat-out bench's (flat)
// unless the search replaces it, then the search's.
func (p *loadPlan) withCapacity(j loadJob, at placement, flat []PlannedCommand) []PlannedCommand {
	if p.spec.Capacity == nil {
		return flat
	}
	var out []PlannedCommand
	if !p.spec.Capacity.Instead {
		out = append(out, flat...)
	}
	return append(out, p.capacityCommands(j, at)...)
}

// measure is a job's measurement: the flat-out runs (runBench), then the
// capacity search when the step asks for one, or the search alone (mode:
// instead). A search follows only flat-out runs that went well: after a
// failure the servers are suspect and the step fails anyway.
func (p *loadPlan) measure(ctx context.Context, job benchJob, j loadJob, path *netpath.Path, res *results.Compare, vi, pi int) error {
	spec := p.spec.Capacity
	if spec == nil || !spec.Instead {
		if _, err := p.e.runBench(ctx, job); err != nil || spec == nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return p.runCapacity(ctx, capacityJob{job: job, vars: j.vars, path: path, res: res, vi: vi, pi: pi})
}
