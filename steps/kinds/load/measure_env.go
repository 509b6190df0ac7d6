package load

import (
	"context"
	"time"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner/vsphere"
	"github.com/dpulab/dpulab/steps/event"
	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/kinds/deploy"
	"github.com/dpulab/dpulab/steps/results"
)

// What measuring one job asks of the engine beside Env, Paths and Hosts:
// each interface is a small door into state the engine keeps for the
// whole run (the deployments in saved progress, the hosts' platforms and
// RDMA devices, the vCenter session, the results file).

// Running is what the run knows of the deployments a load runs against
// and of the hosts' agents once the hosts are reached.
type Running interface {
	// Deployment is the running deployment of group, deployed (again)
	// by step when it is missing, stale (another plan's) or, recorded by
	// an earlier run, no longer answers.
	Deployment(ctx context.Context, step, group string, vars map[string]string, v *labs.Variant) (Deployed, error)
	// Instances are every instance the run's deployments started: what
	// names a bench target's server host (TargetHosts).
	Instances() []deploy.Instance
	// LacksNow is Agents.Lacks asked with each lab host's own platform
	// (the host is reached): "host: why" for the first host whose dpulab
	// lacks transport tr, "" when all have it.
	LacksNow(ctx context.Context, hosts []kind.Host, tr string) (string, error)
}

// Deployed is a group's running deployment, as saved progress records it.
type Deployed struct {
	Instances []deploy.Instance
	// Server names the server program the deployment runs, when known.
	Server string
}

// Probes are what the run learns about the hosts' hardware and says.
type Probes interface {
	// NoteSoftwareRDMA lists the RDMA devices of hosts (once per host
	// and run) and, when RDMA there is software (rxe, siw), labels the
	// run and tells the views.
	NoteSoftwareRDMA(ctx context.Context, step string, hosts []kind.Host)
	// SoftwareRDMA names what was found ("" for none): part of every
	// figure's label.
	SoftwareRDMA() string
	// VSphere is the source of the host (ESXi) metrics of servers, where
	// the inventory has a vCenter and names their ESXi hosts (nil, nil
	// where it has none); the source is recorded in the results. An
	// error (a refused thumbprint, a failed login) stops the step.
	VSphere(ctx context.Context, step string, servers []kind.Host) (*HostMetrics, error)
}

// HostMetrics is where one job's host (ESXi) metrics come from.
type HostMetrics struct {
	// Hosts are the ESXi hosts read, VMs the server VMs whose network
	// use is read too.
	Hosts, VMs []string
	// Tail bounds the wait, after the bench, for vCenter to publish the
	// seconds it covered (0: DefaultHostMetricsTail).
	Tail time.Duration
	// Sample reads the hosts' points into put until ctx ends; note says
	// what went wrong on the way.
	Sample func(ctx context.Context, put func(vsphere.Point), note func(string)) error
}

// Writer is the results writer of a load step.
type Writer interface {
	// PutCompare replaces this attempt's compare of c.Step in the results
	// (the measured variants only, copied) and writes them atomically.
	PutCompare(c results.Compare) error
	// Emulated notes in the results that some figures come from an
	// emulated path (EmulationNote).
	Emulated(note string)
}

// Measurer is what one job's measurement asks of the engine.
type Measurer interface {
	kind.Env
	event.Emitter
	Hosts
	Running
	Probes
	Writer
	// CPUs is Agents'.
	CPUs(host string) int
}
