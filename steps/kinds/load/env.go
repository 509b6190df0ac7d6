package load

import (
	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/kinds/deploy"
)

// Env is what the load kinds ask of the engine beside kind.Env, for their
// plan: the deployments they run against and what the hosts' dpulab can
// do. The engine's kind adapter (steps/kind_env_load.go) implements it;
// what the run needs beside it is Runner's.
type Env interface {
	kind.Env
	Agents
	Deployments
}

// Agents is dpulab on the lab's hosts: where it is and what it can run.
type Agents interface {
	// Agent is the path of dpulab on h (deploy.Env's).
	Agent(h kind.Host) string
	// Lacks says why the dpulab of one of hosts cannot run transport tr,
	// judged before the hosts are reached (a lab host's agent is taken to
	// be Linux's until its platform is known); "" when every one can.
	Lacks(hosts []kind.Host, tr string) string
	// CPUs is host's online CPU count once the run has learnt it (0
	// before): what the emulated path pins the load generator to.
	CPUs(host string) int
	// NoHost says why no host plays one of roles (an optional role the
	// inventory leaves out), "" when hosts do.
	NoHost(roles []string) string
	// HostMetricsPlan is what the vSphere sampler will ask about h's
	// ESXi host while a bench runs, as "# ..." lines of a plan; none
	// where the inventory has no vCenter or h no esxi: name.
	HostMetricsPlan(h kind.Host) []string
}

// Deployments are the groups a load runs against, as the lab's deploy
// steps start them (steps/kinds/deploy).
type Deployments interface {
	// DeployStep is the deploy step that starts group.
	DeployStep(group string) (*labs.Step, error)
	// DeployPlan is st's deploy plan under vars, with variant v's
	// overrides (and its emulated path's placement, when it has one).
	DeployPlan(st *labs.Step, vars map[string]string, v *labs.Variant) (deploy.Plan, error)
}
