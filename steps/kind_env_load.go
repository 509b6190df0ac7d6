package steps

import (
	"context"
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

// The load kinds' run (steps/kinds/load.Runner): the emulated paths, one
// job's measurement (still the engine's: deploy, bench, samplers,
// capacity search) and the results writer.

var _ load.Runner = kindEnv{}

func (k kindEnv) StartPath(ctx context.Context, step string, client stepkind.Host, j load.Job) (*netpath.Path, string, error) {
	return k.e.startPath(ctx, step, client, j)
}

func (k kindEnv) TeardownPath(ctx context.Context, step, group string, p *netpath.Path) error {
	return k.e.teardownPath(ctx, step, group, p)
}

func (k kindEnv) Measure(ctx context.Context, p *load.Plan, n int, path *netpath.Path, res *results.Compare, stepStart time.Time) error {
	j := p.Jobs[n]
	variant := p.Variants[j.VI]
	return (&loadPlan{Plan: p, e: k.e}).runJob(ctx, n, j, &variant, path, res, stepStart)
}

func (k kindEnv) PutCompare(c results.Compare) error {
	k.e.mu.Lock()
	defer k.e.mu.Unlock()
	k.e.upsertBenchLocked(load.MeasuredOnly(c))
	return k.e.writeResultsLocked(false)
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
		return nil, err
	}
	if err := k.e.ensureHost(ctx, h, t); err != nil {
		return nil, err
	}
	return t, nil
}
