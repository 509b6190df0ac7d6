package steps

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/runner/netpath"
	"github.com/dpulab/dpulab/steps/kinds/load"
	"github.com/dpulab/dpulab/steps/results"
)

// A bench step runs the load generator against one deployed group; a
// compare step runs the same profile against each of its variants, at each
// value of its sweep. Both run `dpulab bench --json` on the first host of
// the step's role and `dpulab sample` on the server hosts (bench.go), drive
// the TUI's dashboard, and write the results after every repetition.
func init() {
	for _, k := range []labs.Kind{labs.KindBench, labs.KindCompare} {
		registerKind(k, kind{
			view:     ViewDashboard,
			asksVars: true,
			note:     "runs dpulab bench and samplers",
			resolve: func(e *Engine, st *labs.Step, vars map[string]string) (stepPlan, error) {
				return e.resolveLoad(st, vars)
			},
		})
	}
}

// loadPlan is a bench or compare step resolved: every job in run order
// (sweep value, then variant), each with its variables, its deployment as
// planned, its transport and its bench configuration against the planned
// instances.
type loadPlan struct {
	e        *Engine
	st       *labs.Step
	spec     *labs.BenchSpec
	client   hostRef
	clients  []hostRef // every client host (multiclient.go); client is the first
	sweepVar string
	variants []labs.Variant
	jobs     []loadJob
	// perJob is how long one job should take, for progress.
	perJob time.Duration
}

type loadJob struct {
	vi        int // index into variants
	sweep     string
	label     string
	group     string
	vars      map[string]string
	deploy    deployPlan
	transport string
	// planned is the bench configuration against the planned instances;
	// the run builds it again against the instances that answer.
	planned benchwire.Config
	// pathCfg and path are the emulated network path the variant runs
	// over (netpath), as planned; nil otherwise.
	pathCfg *netpath.Config
	path    *netpath.Path
	// notBuilt says why the dpulab binary on one of the job's hosts (this
	// program here, the agent on a lab host) cannot run it: its transport
	// is not built in (Engine.hostsLack); the job is then listed as
	// unavailable, not run.
	notBuilt string
	// noHost says that no host plays the variant's optional role; the job
	// is then listed as unavailable, not run, and was not planned.
	noHost string
}

func (e *Engine) resolveLoad(st *labs.Step, vars map[string]string) (*loadPlan, error) {
	spec := st.Bench
	if spec == nil {
		return nil, fmt.Errorf("step %s: no bench profile", st.ID)
	}
	variants := []labs.Variant{{Label: spec.Target, Transport: spec.Transport}}
	if st.Kind == labs.KindCompare {
		if st.Compare == nil || len(st.Compare.Variants) == 0 {
			return nil, fmt.Errorf("step %s: a compare step needs at least one variant", st.ID)
		}
		variants = st.Compare.Variants
	}
	clients, err := e.clientHosts(st, vars)
	if err != nil {
		return nil, err
	}
	client := clients[0]
	p := &loadPlan{e: e, st: st, spec: spec, client: client, clients: clients, variants: variants}
	sweepVals := []string{""}
	if cs := st.Compare; cs != nil && cs.Sweep != nil {
		pts, err := cs.Sweep.Points(vars)
		if err != nil {
			return nil, fmt.Errorf("step %s: %w", st.ID, err)
		}
		p.sweepVar, sweepVals = cs.Sweep.Var, pts
		if def, ok := e.lab.Var(p.sweepVar); ok {
			for _, v := range sweepVals {
				if err := def.Check(v); err != nil {
					return nil, fmt.Errorf("sweep value %s: %w", v, err)
				}
			}
		}
	}
	for _, sv := range sweepVals {
		pv := vars
		if p.sweepVar != "" {
			pv = maps.Clone(vars)
			pv[p.sweepVar] = sv
		}
		for vi := range variants {
			v := &variants[vi]
			j := loadJob{vi: vi, sweep: sv, label: v.Label, group: v.Group, vars: pv}
			if p.sweepVar != "" {
				j.label = fmt.Sprintf("%s, %s=%s", v.Label, p.sweepVar, sv)
			}
			if j.group == "" {
				j.group = spec.Target
			}
			if v.On != "" {
				// A variant on an optional role no host plays is listed
				// as not run (optional_roles.go).
				if j.noHost = e.hosts.noHostReason([]string{v.On}); j.noHost != "" {
					p.jobs = append(p.jobs, j)
					continue
				}
			}
			dst, err := e.deployStepFor(j.group)
			if err != nil {
				return nil, fmt.Errorf("step %s: %w", st.ID, err)
			}
			if j.deploy, err = e.planDeploy(dst, pv, v); err != nil {
				return nil, err
			}
			if v.Transport.IsSet() {
				if j.transport, err = v.Transport.Resolve(pv); err != nil {
					return nil, fmt.Errorf("variant %s: transport: %w", v.Label, err)
				}
			} else if spec.Transport.IsSet() {
				if j.transport, err = spec.Transport.Resolve(pv); err != nil {
					return nil, fmt.Errorf("bench transport: %w", err)
				}
			}
			if v.NetPath != "" {
				if err := e.resolvePath(&j, v, client, pv); err != nil {
					return nil, fmt.Errorf("step %s: %w", st.ID, err)
				}
			}
			if j.planned, err = load.BenchConfig(spec, pv, j.deploy.ClientSide(e.workdir()), j.transport, j.deploy.Settings); err != nil {
				return nil, fmt.Errorf("step %s, variant %s: %w", st.ID, v.Label, err)
			}
			j.notBuilt = e.hostsLack(append(slices.Clone(clients), j.deploy.Hosts...), j.transport)
			p.jobs = append(p.jobs, j)
		}
	}
	for _, j := range p.jobs {
		if j.noHost == "" {
			p.perJob = load.ExpectedDuration(j.planned)
			break
		}
	}
	return p, nil
}

// commands lists the jobs of the first sweep value: the others differ
// only in the swept variable.
func (p *loadPlan) commands() []PlannedCommand {
	var out []PlannedCommand
	for _, j := range p.jobs {
		if j.sweep != p.jobs[0].sweep {
			break
		}
		note := fmt.Sprintf("# variant %q", p.variants[j.vi].Label)
		if p.st.Kind == labs.KindBench {
			note = "# load against group " + j.group
		}
		out = append(out, PlannedCommand{Host: p.client.Name, Cmd: note})
		if j.noHost != "" {
			out = append(out, PlannedCommand{Host: p.client.Name, Cmd: "# not run: " + j.noHost})
			continue
		}
		if j.notBuilt != "" {
			out = append(out, PlannedCommand{Host: p.client.Name, Cmd: "# not run: " + j.notBuilt})
		}
		at := load.Placement{}
		if j.path != nil {
			out = append(out, PlannedCommand{Host: p.client.Name, Cmd: load.PathNote(j.path)})
			at.NS = j.path.ClientNS
			_, at.CPUs = load.SplitCPUs(p.e.hostCPUs(p.client.Name))
		}
		out = append(out, p.withCapacity(j, at, p.benchCommands(j, at))...)
		for _, h := range j.deploy.Hosts {
			out = append(out, PlannedCommand{Host: h.Name, Cmd: p.e.samplerCommand(h, p.client, j.path)})
		}
	}
	return out
}

// run runs every job, writing the results after every finished repetition.
// A failed variant does not stop the others (their numbers still count),
// but the step fails.
func (p *loadPlan) run(ctx context.Context) error {
	e, st, client := p.e, p.st, p.client
	res := results.Compare{Step: st.ID, Title: st.Title, Sweep: p.sweepVar, Client: client.Name, Clients: load.HostNames(p.clients)}
	for _, v := range p.variants {
		res.Variants = append(res.Variants, results.VariantResult{Label: v.Label, Description: v.Description})
	}
	stepStart := time.Now()
	var errs []error
	for n, j := range p.jobs {
		variant := p.variants[j.vi]
		if why := cmp.Or(j.noHost, j.notBuilt); why != "" {
			if !slices.ContainsFunc(res.Unavailable, func(u results.Unavailable) bool { return u.Label == variant.Label }) {
				res.Unavailable = append(res.Unavailable, results.Unavailable{Label: variant.Label, Reason: why})
				e.say(st.ID, client.Name, "variant %q not run: %s", variant.Label, why)
			}
			continue
		}
		var path *netpath.Path
		if j.path != nil {
			var skip string
			var err error
			path, skip, err = e.startPath(ctx, st.ID, client, j)
			if err != nil {
				if ctx.Err() != nil {
					return err
				}
				errs = append(errs, fmt.Errorf("variant %s: %w", variant.Label, err))
				continue
			}
			if skip != "" {
				if !slices.ContainsFunc(res.Unavailable, func(u results.Unavailable) bool { return u.Label == variant.Label }) {
					res.Unavailable = append(res.Unavailable, results.Unavailable{Label: variant.Label, Reason: skip})
					e.say(st.ID, client.Name, "variant %q not run: %s", variant.Label, skip)
				}
				continue
			}
		}
		err := p.runJob(ctx, n, j, &variant, path, &res, stepStart)
		if path != nil {
			if terr := e.teardownPath(ctx, st.ID, j.group, path); terr != nil && err == nil {
				err = terr
			}
		}
		if err != nil {
			if errors.Is(err, errStopStep) {
				return errors.Unwrap(err)
			}
			if ctx.Err() != nil {
				return err
			}
			errs = append(errs, err)
		}
	}
	e.mu.Lock()
	results.ComputeDeltas(&res)
	e.upsertBenchLocked(load.MeasuredOnly(res))
	werr := e.writeResultsLocked(false)
	e.mu.Unlock()
	if len(errs) > 0 {
		return errs[0]
	}
	if len(res.Unavailable) == len(p.variants) {
		e.say(st.ID, client.Name, "no variant of this step can run here: skipped")
		return errSkipped
	}
	return werr
}

// errStopStep wraps an error that ends the step at once (the deployment
// or the reachability check failed: every later job would fail the same
// way).
var errStopStep = errors.New("stop the step")

type stopStep struct{ err error }

func (s stopStep) Error() string        { return s.err.Error() }
func (s stopStep) Unwrap() error        { return s.err }
func (s stopStep) Is(target error) bool { return target == errStopStep }

// runJob runs one job: deploy (again when the variant needs it), the bench
// with its samplers, and the results after every repetition.
func (p *loadPlan) runJob(ctx context.Context, n int, j loadJob, variant *labs.Variant, path *netpath.Path, res *results.Compare, stepStart time.Time) error {
	e, st, client := p.e, p.st, p.client
	dep, err := e.deploymentFor(ctx, st.ID, j.group, j.vars, variant)
	if err != nil {
		return stopStep{err}
	}
	for _, c := range p.clients {
		if err := load.Reachable(c, dep.Instances, j.transport); err != nil {
			return stopStep{fmt.Errorf("variant %s: %w", variant.Label, err)}
		}
	}
	// Each host's agent for the platform it reports: one that lacks the
	// transport fails this variant, not the others.
	if why, err := e.hostsLackNow(ctx, append(slices.Clone(p.clients), e.serverHosts(dep, j.deploy.Hosts)...), j.transport); err != nil || why != "" {
		return fmt.Errorf("variant %s: %s", variant.Label, cmp.Or(why, fmt.Sprint(err)))
	}
	cfg, err := load.BenchConfig(p.spec, j.vars, dep.Instances, j.transport, j.deploy.Settings)
	if err != nil {
		return stopStep{err}
	}
	if j.transport == load.RDMAName {
		// Before its first figure: whether this RDMA is software.
		e.noteSoftwareRDMA(ctx, st.ID, append(slices.Clone(p.clients), e.serverHosts(dep, j.deploy.Hosts)...))
	}
	settings := map[string]string{"transport": orDefault(j.transport, "tcp"), "instances": fmt.Sprint(len(dep.Instances))}
	for _, s := range j.deploy.Settings {
		if SecretSetting(s[0]) {
			s[1] = "(hidden)"
		}
		settings[s[0]] = s[1]
	}
	if dep.Server != "" {
		settings["server"] = dep.Server
	}
	vi := j.vi
	e.mu.Lock()
	vr := &res.Variants[vi]
	vr.Settings = settings
	vr.Hosts = nil
	servers := e.serverHosts(dep, j.deploy.Hosts)
	for _, h := range servers {
		vr.Hosts = append(vr.Hosts, h.Name)
	}
	vr.Points = append(vr.Points, results.SweepPoint{Value: j.sweep})
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
		Step: st.ID, Variant: variant.Label, Sweep: j.sweep, Label: j.label,
		Client: client, Clients: p.clients, Servers: servers, Config: cfg, Password: load.Password(j.vars),
		ProgressBase: float64(n) / float64(len(p.jobs)), ProgressSpan: 1 / float64(len(p.jobs)),
		StepStart: stepStart, StepTotal: time.Duration(len(p.jobs)) * p.perJob,
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
