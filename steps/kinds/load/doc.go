// Package load is the load kinds' work (bench and compare, with the
// capacity search and several client hosts), moving out of the engine
// (package steps) behind a narrow environment, as steps/kinds/deploy did.
//
// A bench step runs `dpulab bench --json` against one deployed group; a
// compare step runs the same profile against each of its variants, at each
// value of its sweep. Bench and multi-client bench are one path: the load
// comes from n client hosts, and n = 1 is the plain bench (no clock read,
// no --start-at, the merge of one host's figures is the identity).
//
// # What is here now
//
// The parts that need no environment at all, each tested alone:
//
//   - the client hosts' clocks: reading one host's clock over its target,
//     the verdict on their spread, and the common start the hosts are
//     given (clock.go, start.go);
//   - merging several client hosts' JSON-lines streams into one series
//     per second and one result per repetition (merge.go);
//   - the samplers' lines (`dpulab sample`), the RDMA counters among them,
//     and the board the run reads server CPU and network from (sampler.go,
//     sampler_rdma.go).
//
// The plan (resolveLoad), the run (runJob, runBench, the capacity search,
// the multi-client run) and the vSphere sampling still live in package
// steps as methods of *steps.Engine, and call these parts.
//
// # The environment the kind needs (Env)
//
// Read from what the engine's load code uses today. Each is a small
// interface the engine's kind adapter (steps/kind_env.go) implements, and a
// fake implements in this package's tests; none names an engine internal.
//
//	type Env interface {
//		kind.Env      // hosts of a role, Say/Output, Compare, clock, Lab, Rehearsal
//		event.Emitter // Emit(Progress | Sample): the dashboard's live events
//		Hosts
//		Deployments
//		Compares
//		Paths
//		Probes
//	}
//
//	// Hosts: reach and prepare the hosts the load runs on.
//	type Hosts interface {
//		// Prepared reaches h, uploads dpulab there and makes the
//		// working directory (deploy.Runner's, shared).
//		Prepared(ctx context.Context, h kind.Host) (runner.Target, error)
//		// Agent is the path of dpulab on h (deploy.Env's, shared).
//		Agent(h kind.Host) string
//		// Lacks says why the agent of one of hosts cannot run
//		// transport tr, judged before the hosts are reached ("" when
//		// all can); LacksNow asks each host its real platform.
//		Lacks(hosts []kind.Host, tr string) string
//		LacksNow(ctx context.Context, hosts []kind.Host, tr string) (string, error)
//		// CPUs is the host's online CPU count once learnt (0 before).
//		CPUs(host string) int
//		LearnCPUs(ctx context.Context, host string, t runner.Target) int
//	}
//
//	// Deployments: the groups the load runs against, through kinds/deploy.
//	type Deployments interface {
//		// DeployPlan is the deploy plan of group under vars, with the
//		// variant's overrides (and its emulated path's placement).
//		DeployPlan(group string, vars map[string]string, v *labs.Variant) (deploy.Plan, error)
//		// Deployment returns the group's running deployment, deploying
//		// it (again) when it is missing, stale or no longer answers.
//		Deployment(ctx context.Context, step, group string, vars map[string]string, v *labs.Variant) (Deployed, error)
//		// StopGroup stops the group's servers (before its path goes).
//		StopGroup(ctx context.Context, group string) error
//	}
//
//	// Compares: the results writer. Put replaces this attempt's compare
//	// of its step and writes the results atomically; the kind calls it
//	// after every repetition, so a killed run keeps what it measured.
//	type Compares interface {
//		Put(c results.Compare) error
//		// Emulated marks the run's results as holding emulated figures.
//		Emulated(note string)
//		// HostFigures keeps where the host (ESXi) metrics came from.
//	}
//
//	// Paths: an emulated network path (runner/netpath) around a variant,
//	// recorded in saved progress before it is made and forgotten after
//	// its teardown, so cleanup and resume find it.
//	type Paths interface {
//		PathConfig(v *labs.Variant, vars map[string]string) (netpath.Config, error)
//		// StartPath makes the path on client's host; skip says why the
//		// host cannot make it (not root, no nft): the variant is then
//		// listed unavailable, not run.
//		StartPath(ctx context.Context, step string, client kind.Host, cfg netpath.Config) (p *netpath.Path, skip string, err error)
//		TeardownPath(ctx context.Context, step, group string, p *netpath.Path) error
//	}
//
//	// Probes: what the run learns about the hosts' hardware and says.
//	type Probes interface {
//		// NoteSoftwareRDMA lists the RDMA devices of hosts once and
//		// records (and emits) when RDMA there is software (rxe, siw).
//		NoteSoftwareRDMA(ctx context.Context, step string, hosts []kind.Host)
//		// SoftwareRDMA is what was found ("" for none): part of every
//		// figure's label.
//		SoftwareRDMA() string
//		// VSphere starts the host (ESXi) metrics of servers where the
//		// inventory has a vCenter (nil, nil where it has none).
//		VSphere(ctx context.Context, step string, servers []kind.Host) (HostSampler, error)
//		VSpherePlan(servers []kind.Host) []kind.PlannedCommand
//	}
//
// Cancellation is the run's ctx; the clock is kind.Clock.
package load
