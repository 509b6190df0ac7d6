package steps

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/runner/netpath"
	"github.com/dpulab/dpulab/steps/kinds/load"
	"github.com/dpulab/dpulab/steps/results"
)

// loadPlan is a bench or compare step's plan (steps/kinds/load, which
// resolves and runs it) as the engine measures one of its jobs (runJob,
// through the kind adapter's Measure).
type loadPlan struct {
	*load.Plan
	e *Engine
}

// loadJob is one job of a load plan.
type loadJob = load.Job

// runJob runs one job: deploy (again when the variant needs it), the bench
// with its samplers, and the results after every repetition.
func (p *loadPlan) runJob(ctx context.Context, n int, j loadJob, variant *labs.Variant, path *netpath.Path, res *results.Compare, stepStart time.Time) error {
	e, st, client := p.e, p.Step, p.Client
	dep, err := e.deploymentFor(ctx, st.ID, j.Group, j.Vars, variant)
	if err != nil {
		return load.StopStep{Err: err}
	}
	for _, c := range p.Clients {
		if err := load.Reachable(c, dep.Instances, j.Transport); err != nil {
			return load.StopStep{Err: fmt.Errorf("variant %s: %w", variant.Label, err)}
		}
	}
	// Each host's agent for the platform it reports: one that lacks the
	// transport fails this variant, not the others.
	if why, err := e.hostsLackNow(ctx, append(slices.Clone(p.Clients), e.serverHosts(dep, j.Deploy.Hosts)...), j.Transport); err != nil || why != "" {
		return fmt.Errorf("variant %s: %s", variant.Label, cmp.Or(why, fmt.Sprint(err)))
	}
	cfg, err := load.BenchConfig(p.Spec, j.Vars, dep.Instances, j.Transport, j.Deploy.Settings)
	if err != nil {
		return load.StopStep{Err: err}
	}
	if j.Transport == load.RDMAName {
		// Before its first figure: whether this RDMA is software.
		e.noteSoftwareRDMA(ctx, st.ID, append(slices.Clone(p.Clients), e.serverHosts(dep, j.Deploy.Hosts)...))
	}
	settings := map[string]string{"transport": orDefault(j.Transport, "tcp"), "instances": fmt.Sprint(len(dep.Instances))}
	for _, s := range j.Deploy.Settings {
		if SecretSetting(s[0]) {
			s[1] = "(hidden)"
		}
		settings[s[0]] = s[1]
	}
	if dep.Server != "" {
		settings["server"] = dep.Server
	}
	vi := j.VI
	e.mu.Lock()
	vr := &res.Variants[vi]
	vr.Settings = settings
	vr.Hosts = nil
	servers := e.serverHosts(dep, j.Deploy.Hosts)
	for _, h := range servers {
		vr.Hosts = append(vr.Hosts, h.Name)
	}
	vr.Points = append(vr.Points, results.SweepPoint{Value: j.Sweep})
	pi := len(vr.Points) - 1
	if path != nil {
		vr.Emulation = load.VariantEmulation(path)
		vr.Points[pi].Path = &results.PathCounters{Path: string(path.Variant)}
		if e.results != nil {
			e.results.Emulation = load.EmulationNote
		}
	}
	e.mu.Unlock()
	job := benchJob{
		Step: st.ID, Variant: variant.Label, Sweep: j.Sweep, Label: j.Label,
		Client: client, Clients: p.Clients, Servers: servers, Config: cfg, Password: load.Password(j.Vars),
		ProgressBase: float64(n) / float64(len(p.Jobs)), ProgressSpan: 1 / float64(len(p.Jobs)),
		StepStart: stepStart, StepTotal: time.Duration(len(p.Jobs)) * p.PerJob,
	}
	var counters results.PathCounters
	if path != nil {
		job.Path, job.Counters = path, &counters
		job.Emulation = load.VariantEmulation(path)
		_, job.ClientCPUs = load.SplitCPUs(e.hostCPUs(client.Name))
	}
	job.OnRun = func(r results.RunResult) {
		e.mu.Lock()
		defer e.mu.Unlock()
		pt := &res.Variants[vi].Points[pi]
		pt.Runs = append(pt.Runs, r)
		pt.Stats = results.Summarize(pt.Runs)
		results.ComputeDeltas(res)
		e.upsertBenchLocked(load.MeasuredOnly(*res))
		if err := e.writeResultsLocked(false); err != nil {
			e.opts.Emit(Output{Step: st.ID, Line: runner.Line{Host: client.Name, Stream: runner.Stderr, Text: "results not written: " + err.Error(), Time: time.Now()}})
		}
	}
	err = p.measure(ctx, job, j, path, res, vi, pi)
	if path != nil && counters.Path != "" {
		e.mu.Lock()
		c := counters
		res.Variants[vi].Points[pi].Path = &c
		e.mu.Unlock()
	}
	return err
}
