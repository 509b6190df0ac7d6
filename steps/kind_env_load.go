package steps

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/runner/netpath"
	"github.com/dpulab/dpulab/runner/vsphere"
	stepkind "github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/kinds/deploy"
	"github.com/dpulab/dpulab/steps/kinds/load"
	"github.com/dpulab/dpulab/steps/results"
)

// The load kinds' capabilities (steps/kinds/load.Env): where dpulab is on
// a host and what it can run, and the deployments a load runs against.

var _ load.Env = kindEnv{}

func (k kindEnv) Lacks(hosts []stepkind.Host, tr string) string { return k.e.hostsLack(hosts, tr) }

func (k kindEnv) CPUs(host string) int { return k.e.hostCPUs(host) }

func (k kindEnv) NoHost(roles []string) string { return k.e.hosts.noHostReason(roles) }

func (k kindEnv) DeployStep(group string) (*labs.Step, error) { return k.e.deployStepFor(group) }

func (k kindEnv) DeployPlan(st *labs.Step, vars map[string]string, v *labs.Variant) (deploy.Plan, error) {
	return k.e.planDeploy(st, vars, v)
}

// The load kinds' run (steps/kinds/load.Runner): the emulated paths, the
// deployments a job runs against, what the run learns of the hosts, the
// vCenter session and the results writer. One job's measurement is the
// kind's own (steps/kinds/load/measure.go).

var _ load.Runner = kindEnv{}

func (k kindEnv) StartPath(ctx context.Context, step string, client stepkind.Host, j load.Job) (*netpath.Path, string, error) {
	return k.e.startPath(ctx, step, client, j)
}

func (k kindEnv) TeardownPath(ctx context.Context, step, group string, p *netpath.Path) error {
	return k.e.teardownPath(ctx, step, group, p)
}

func (k kindEnv) PutCompare(c results.Compare) error {
	k.e.mu.Lock()
	defer k.e.mu.Unlock()
	k.e.upsertBenchLocked(load.MeasuredOnly(c))
	return k.e.writeResultsLocked(false)
}

func (k kindEnv) Emulated(note string) {
	k.e.mu.Lock()
	defer k.e.mu.Unlock()
	if k.e.results != nil {
		k.e.results.Emulation = note
	}
}

// upsertBenchLocked puts c into the results, replacing an earlier attempt of the
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

func (k kindEnv) LacksNow(ctx context.Context, hosts []stepkind.Host, tr string) (string, error) {
	return k.e.hostsLackNow(ctx, hosts, tr)
}

func (k kindEnv) NoteSoftwareRDMA(ctx context.Context, step string, hosts []stepkind.Host) {
	k.e.noteSoftwareRDMA(ctx, step, hosts)
}

func (k kindEnv) SoftwareRDMA() string { return k.e.SoftwareRDMA() }

// Instances are every instance of the deployments in saved progress.
func (k kindEnv) Instances() []deploy.Instance {
	k.e.mu.Lock()
	defer k.e.mu.Unlock()
	if k.e.state == nil {
		return nil
	}
	var out []deploy.Instance
	for _, g := range slices.Sorted(maps.Keys(k.e.state.Deployments)) {
		out = append(out, k.e.state.Deployments[g].Instances...)
	}
	return out
}

// Deployment returns the running deployment of group, deploying it
// (again) when it is missing or differs from what the plan wants; one
// recorded by an earlier (killed) run is used only if all its instances
// still answer.
func (k kindEnv) Deployment(ctx context.Context, step, group string, vars map[string]string, variant *labs.Variant) (load.Deployed, error) {
	e := k.e
	dst, err := e.deployStepFor(group)
	if err != nil {
		return load.Deployed{}, err
	}
	plan, err := e.planDeploy(dst, vars, variant)
	if err != nil {
		return load.Deployed{}, err
	}
	e.mu.Lock()
	dep, ok := e.state.Deployments[group]
	checked := e.depChecked[group]
	e.mu.Unlock()
	if ok && dep.Key == plan.Key() {
		if checked || k.answers(ctx, dep, plan.Hosts) {
			e.mu.Lock()
			if e.depChecked == nil {
				e.depChecked = map[string]bool{}
			}
			e.depChecked[group] = true
			e.mu.Unlock()
			return load.Deployed{Instances: dep.Instances, Server: dep.Server}, nil
		}
		e.say(step, plan.Hosts[0].Name, "group %s from the earlier run does not answer any more: deploying it again", group)
	}
	if err := e.deploy(ctx, step, plan); err != nil {
		return load.Deployed{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	dep = e.state.Deployments[group]
	return load.Deployed{Instances: dep.Instances, Server: dep.Server}, nil
}

// answers pings every instance of a recorded deployment once.
func (k kindEnv) answers(ctx context.Context, dep Deployment, hosts []hostRef) bool {
	for _, in := range dep.Instances {
		h := hostRef{Name: in.Host}
		for _, hh := range hosts {
			if hh.Name == in.Host {
				h = hh
			}
		}
		t, err := k.Reached(ctx, h)
		if err != nil {
			return false
		}
		local := Instance{Host: in.Host, Port: in.Port, Address: net.JoinHostPort("127.0.0.1", strconv.Itoa(in.Port))}
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = deploy.Ping(pctx, k, h, t, local)
		cancel()
		if err != nil {
			return false
		}
	}
	return true
}

// VSphere is the host (ESXi) metrics' source of servers: the run's
// vCenter session (dialled on first use), the ESXi hosts and VMs the
// inventory names for them, recorded in the results as where the step's
// host figures come from.
func (k kindEnv) VSphere(ctx context.Context, step string, servers []stepkind.Host) (*load.HostMetrics, error) {
	e := k.e
	hosts := e.esxiHosts(servers)
	if len(hosts) == 0 {
		return nil, nil
	}
	c, err := e.vcenter(ctx, step)
	if err != nil {
		return nil, &StepError{Host: e.opts.Inventory.VCenter.URL, Err: fmt.Errorf("host (ESXi) metrics: %w", err)}
	}
	vms := e.serverVMs(servers)
	e.keepHostMetricsSource(step, c.Origin(), hosts, vms)
	since, poll := time.Now(), e.vc.poll
	return &load.HostMetrics{Hosts: hosts, VMs: vms, Tail: e.vc.tail, Sample: func(ctx context.Context, put func(vsphere.Point), note func(string)) error {
		return (&vsphere.Sampler{Client: c, Hosts: hosts, VMs: vms, Since: since, Poll: poll, Note: note}).Run(ctx, put)
	}}, nil
}

// HostMetricsPlan is the vSphere sampler's query of h's ESXi host while a
// bench runs, as a plan shows it.
func (k kindEnv) HostMetricsPlan(h stepkind.Host) []string {
	inv := k.e.opts.Inventory
	if inv == nil || inv.VCenter == nil {
		return nil
	}
	esxi := k.e.esxiHosts([]hostRef{h})
	if len(esxi) == 0 {
		return nil
	}
	var out []string
	for _, l := range vsphere.Plan(inv.VCenter.URL, nil, esxi, k.e.serverVMs([]hostRef{h})) {
		if strings.Contains(l, "while a bench runs") {
			out = append(out, "# "+l+"; merged into the bench's per-second series as host (ESXi)")
		}
	}
	return out
}

var _ load.Hosts = kindEnv{}

func (k kindEnv) Reached(ctx context.Context, h stepkind.Host) (runner.Target, error) {
	t, err := k.e.hosts.target(ctx, h.Name)
	if err != nil {
		return nil, &StepError{Host: h.Name, Err: err}
	}
	if err := k.e.ensureHost(ctx, h, t); err != nil {
		return nil, err
	}
	return t, nil
}
