package load

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/runner/netpath"
	"github.com/dpulab/dpulab/server/transport"
	"github.com/dpulab/dpulab/steps/event"
	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/kinds/deploy"
	"github.com/dpulab/dpulab/steps/results"
)

// BenchJob is one invocation of `dpulab bench` (all repetitions of one
// variant at one sweep point) with the samplers around it.
type BenchJob struct {
	Step    string
	Variant string
	Sweep   string
	Label   string
	Client  kind.Host
	// Clients are the hosts that share the load (split.go), Client the
	// first of them; none is Client alone.
	Clients []kind.Host
	Servers []kind.Host
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
	// figures are (Figures).
	Emulation string
}

// servedBy says whether host also serves the job's load.
func (j BenchJob) servedBy(host string) bool {
	return slices.ContainsFunc(j.Servers, func(h kind.Host) bool { return h.Name == host })
}

// measurement is one step's run as its jobs are measured: the compare
// they fill, guarded by mu (a bench's repetitions arrive from the client
// hosts' goroutines).
type measurement struct {
	p         *Plan
	r         Measurer
	stepStart time.Time

	mu  sync.Mutex
	res *results.Compare
}

// job measures job n over path (nil for none): deploys the job's group
// (again) when the running one differs or no longer answers, checks the
// client hosts reach it and their agents have the transport, runs the
// bench from the client hosts with the samplers (and the capacity
// search), and fills the job's variant, writing the results after every
// repetition. An error wrapped in StopStep ends the step: every later job
// would fail the same way.
func (m *measurement) job(ctx context.Context, n int, path *netpath.Path) error {
	p, r := m.p, m.r
	j := p.Jobs[n]
	variant := &p.Variants[j.VI]
	st, client := p.Step, p.Client
	dep, err := r.Deployment(ctx, st.ID, j.Group, j.Vars, variant)
	if err != nil {
		return StopStep{Err: err}
	}
	for _, c := range p.Clients {
		if err := Reachable(c, dep.Instances, j.Transport); err != nil {
			return StopStep{Err: fmt.Errorf("variant %s: %w", variant.Label, err)}
		}
	}
	servers := ServerHosts(dep.Instances, j.Deploy.Hosts)
	everyHost := append(slices.Clone(p.Clients), servers...)
	// Each host's agent for the platform it reports: one that lacks the
	// transport fails this variant, not the others.
	if why, err := r.LacksNow(ctx, everyHost, j.Transport); err != nil || why != "" {
		return fmt.Errorf("variant %s: %s", variant.Label, cmp.Or(why, fmt.Sprint(err)))
	}
	cfg, err := BenchConfig(p.Spec, j.Vars, dep.Instances, j.Transport, j.Deploy.Settings)
	if err != nil {
		return StopStep{Err: err}
	}
	if j.Transport == RDMAName {
		// Before its first figure: whether this RDMA is software.
		r.NoteSoftwareRDMA(ctx, st.ID, everyHost)
	}
	settings := map[string]string{"transport": cmp.Or(j.Transport, "tcp"), "instances": fmt.Sprint(len(dep.Instances))}
	for _, s := range j.Deploy.Settings {
		if kind.SecretSetting(s[0]) {
			s[1] = "(hidden)"
		}
		settings[s[0]] = s[1]
	}
	if dep.Server != "" {
		settings["server"] = dep.Server
	}
	vi := j.VI
	m.mu.Lock()
	vr := &m.res.Variants[vi]
	vr.Settings = settings
	vr.Hosts = nil
	for _, h := range servers {
		vr.Hosts = append(vr.Hosts, h.Name)
	}
	vr.Points = append(vr.Points, results.SweepPoint{Value: j.Sweep})
	pi := len(vr.Points) - 1
	if path != nil {
		vr.Emulation = VariantEmulation(path)
		vr.Points[pi].Path = &results.PathCounters{Path: string(path.Variant)}
	}
	m.mu.Unlock()
	if path != nil {
		r.Emulated(EmulationNote)
	}
	job := BenchJob{
		Step: st.ID, Variant: variant.Label, Sweep: j.Sweep, Label: j.Label,
		Client: client, Clients: p.Clients, Servers: servers, Config: cfg, Password: Password(j.Vars),
		ProgressBase: float64(n) / float64(len(p.Jobs)), ProgressSpan: 1 / float64(len(p.Jobs)),
		StepStart: m.stepStart, StepTotal: time.Duration(len(p.Jobs)) * p.PerJob,
	}
	var counters results.PathCounters
	if path != nil {
		job.Path, job.Counters = path, &counters
		job.Emulation = VariantEmulation(path)
		_, job.ClientCPUs = SplitCPUs(r.CPUs(client.Name))
	}
	job.OnRun = func(run results.RunResult) {
		m.mu.Lock()
		defer m.mu.Unlock()
		pt := &m.res.Variants[vi].Points[pi]
		pt.Runs = append(pt.Runs, run)
		pt.Stats = results.Summarize(pt.Runs)
		results.ComputeDeltas(m.res)
		if err := r.PutCompare(*m.res); err != nil {
			r.Output(st.ID)(runner.Line{Host: client.Name, Stream: runner.Stderr, Text: "results not written: " + err.Error(), Time: time.Now()})
		}
	}
	err = m.measure(ctx, job, j, vi, pi)
	if path != nil && counters.Path != "" {
		m.mu.Lock()
		c := counters
		m.res.Variants[vi].Points[pi].Path = &c
		m.mu.Unlock()
	}
	return err
}

// measure is a job's measurement: the flat-out runs (RunBench), then the
// capacity search when the step asks for one, or the search alone (mode:
// instead). A search follows only flat-out runs that went well: after a
// failure the servers are suspect and the step fails anyway.
func (m *measurement) measure(ctx context.Context, job BenchJob, j Job, vi, pi int) error {
	spec := m.p.Spec.Capacity
	if spec == nil || !spec.Instead {
		if _, err := RunBench(ctx, m.r, job); err != nil || spec == nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	k, host, err := runCapacity(ctx, m.r, spec, j.Vars, job)
	if k != nil {
		m.recordCapacity(job, host, k, vi, pi)
	}
	return err
}

// recordCapacity says a search's answer and records it at its point.
func (m *measurement) recordCapacity(job BenchJob, host string, k *results.Capacity, vi, pi int) {
	r := m.r
	r.Say(job.Step, host, "%s", Labelled(r, job, FoundText(job.Label, k)))
	m.mu.Lock()
	defer m.mu.Unlock()
	results.SetCapacity(&m.res.Variants[vi].Points[pi], k)
	results.ComputeDeltas(m.res)
	if werr := r.PutCompare(*m.res); werr != nil {
		r.Say(job.Step, host, "results not written: %s", werr)
	}
}

// ServerHosts lists the distinct hosts of a deployment's instances, as
// plan names them (a host plan does not name plays the server role).
func ServerHosts(instances []deploy.Instance, plan []kind.Host) []kind.Host {
	seen := map[string]bool{}
	var out []kind.Host
	for _, in := range instances {
		if seen[in.Host] {
			continue
		}
		seen[in.Host] = true
		ref := kind.Host{Name: in.Host, Role: "server"}
		for _, h := range plan {
			if h.Name == in.Host {
				ref = h
			}
		}
		out = append(out, ref)
	}
	return out
}

// Figures is what job's figures are, the label every line, sample and
// progress event of it carries (results.Figures, the one label source):
// the run's rehearsal and software RDMA, and the job's own emulation.
func Figures(r Measurer, job BenchJob) results.Figures {
	return results.Figures{Rehearsal: r.Rehearsal() != "", Emulation: job.Emulation, SoftwareRDMA: r.SoftwareRDMA()}
}

// Labelled puts the figures' label before a bench line (a run's summary,
// a probe, the search's answer), the figure a headless log shows: a line
// copied out of a CI log still says what it measured.
func Labelled(r Measurer, job BenchJob, line string) string {
	return Figures(r, job).Tag() + line
}

// emitProgress shows how far the step is, job being at its own 0..1 of
// total since start.
func emitProgress(r Measurer, job BenchJob, start time.Time, total time.Duration, label string) {
	el := time.Since(start)
	f := 0.0
	if total > 0 {
		f = math.Min(1, float64(el)/float64(total))
	}
	overall := job.ProgressBase + f*job.ProgressSpan
	var remaining time.Duration
	if overall > 0 && job.StepTotal > 0 {
		remaining = time.Duration(float64(job.StepTotal) * (1 - overall))
	}
	r.Emit(event.Progress{Step: job.Step, Label: Labelled(r, job, label), Figures: Figures(r, job), Fraction: overall, Elapsed: time.Since(job.StepStart), Remaining: remaining})
}

// RunSummary is the one line said after each repetition of job.
func RunSummary(job BenchJob, r results.RunResult) string {
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
		s += ClientCPUNote(r.ClientHostBusyPct, true, shared)
	}
	if r.Err != "" {
		s += ", ended early: " + r.Err
	}
	return s
}

// TargetHosts maps the targets of c (as the bench names them in its
// per-target lines) to the hosts of instances that serve them; among
// several matches, an instance on one of servers wins. A target no
// instance serves has no entry.
func TargetHosts(c benchwire.Config, servers []kind.Host, instances []deploy.Instance) map[string]string {
	want := map[string]bool{}
	for _, l := range c.Labels() {
		want[l] = true
	}
	isServer := map[string]bool{}
	for _, h := range servers {
		isServer[h.Name] = true
	}
	out := map[string]string{}
	for _, in := range instances {
		for _, l := range []string{in.Address, transport.Endpoint{Transport: transport.RDMA, Address: in.Address}.Label(), "unix:" + in.Socket} {
			if !want[l] {
				continue
			}
			if _, ok := out[l]; !ok || isServer[in.Host] {
				out[l] = in.Host
			}
		}
	}
	return out
}
