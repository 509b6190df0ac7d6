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
//   - The plan: Resolve works a step out through Env (the client hosts,
//     one Job per sweep value and variant with its deployment as planned
//     by kinds/deploy, its transport, emulated path and bench
//     configuration, and whether the hosts' dpulab lacks the transport);
//     Plan.Commands is what the dry run and the TUI show.
//   - The run's loop: Plan.Run lists what cannot run (no host, a
//     transport the hosts lack, a path the host cannot make) as
//     unavailable, starts and tears down each variant's emulated path,
//     has each job measured, stops at a cancel or a StopStep, and writes
//     the compare with its deltas, through Runner.
//   - The pure parts, each tested alone: the bench's configuration and
//     commands, the split of a load among client hosts, their clocks and
//     common start, the merge of their streams, the samplers' board and
//     RDMA counters, the capacity search's configuration and texts, the
//     software-RDMA probe, the emulated path's placement and notes.
//   - A bench's stream, as the engine's runBench runs it: BenchOutput
//     parses `dpulab bench --json` lines (the stderr tail, the first bad
//     line), SecondJoiner joins a second's totals with its per-target
//     lines, ClientRun is one client host's bench feeding the merge, and
//     StartSamplers runs the servers' samplers into a SampleBoard through
//     Hosts (Reached: a host reached, with dpulab there).
//
// Still in package steps, as methods of *steps.Engine behind Runner's
// Measure: one job's measurement (runJob: deploy, reachability, the
// agents' transports, software RDMA notes; runBench, which starts the
// samplers and the client hosts' benches with this package's parts; the
// capacity search; vSphere sampling), and the kind's registration with
// vSphere's extra planned commands.
//
// # The environment
//
// Env (env.go) is kind.Env plus Agents (dpulab on a host, what it lacks,
// its CPUs, an optional role without a host) and Deployments (the deploy
// step of a group and its plan). Runner (run.go) adds Paths (StartPath,
// TeardownPath), Measure and PutCompare. The engine implements them in
// steps/kind_env_load.go; this package's tests fake them (no sshd, no
// engine).
//
// What moving the measurement will add to the Env, read from what the
// engine's code uses today:
//
//	event.Emitter // Emit(Progress | Sample): the dashboard's live events
//
//	// Hosts: reach and prepare the hosts the load runs on.
//	type Hosts interface {
//		// Prepared reaches h, uploads dpulab there and makes the
//		// working directory (deploy.Runner's, shared).
//		Prepared(ctx context.Context, h kind.Host) (runner.Target, error)
//		// LacksNow asks each host its real platform before a bench.
//		LacksNow(ctx context.Context, hosts []kind.Host, tr string) (string, error)
//		LearnCPUs(ctx context.Context, host string, t runner.Target) int
//	}
//
//	// Deployments gains the running deployment of a group, deployed
//	// (again) when it is missing, stale or no longer answers.
//	Deployment(ctx context.Context, step, group string, vars map[string]string, v *labs.Variant) (Deployed, error)
//
//	// Results: where the host (ESXi) metrics came from, and a run's
//	// emulated figures.
//	Emulated(note string)
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
