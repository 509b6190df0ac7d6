// Package load is the load kinds' work: bench and compare, with the
// capacity search, several client hosts and the host (ESXi) metrics, from
// the plan to the results written, behind a narrow environment, as
// steps/kinds/deploy is.
//
// A bench step runs `dpulab bench --json` against one deployed group; a
// compare step runs the same profile against each of its variants, at each
// value of its sweep. Bench and multi-client bench are one path (RunBench):
// the load comes from n client hosts, and n = 1 is the plain bench (no
// clock read, no --start-at, the merge of one host's figures is the
// identity). The capacity search is one search (benchwire.Search) from n
// client hosts too; for n = 1 the bench runs it itself, in one command
// whose connections last from probe to probe, for several this package
// runs it over probes the hosts run together (search.go says why).
//
// # What is where
//
//   - The plan (plan.go): Resolve works a step out through Env (the client
//     hosts, one Job per sweep value and variant with its deployment as
//     planned by kinds/deploy, its transport, emulated path and bench
//     configuration, and whether the hosts' dpulab lacks the transport);
//     Plan.Commands is what the dry run and the TUI show.
//   - The run's loop (run.go): Plan.Run lists what cannot run (no host, a
//     transport the hosts lack, a path the host cannot make) as
//     unavailable, starts and tears down each variant's emulated path,
//     has each job measured, stops at a cancel or a StopStep, and writes
//     the compare with its deltas.
//   - One job's measurement (measure.go): the deployment asked for (and
//     made again when it is missing, stale or no longer answers), the
//     client hosts' reach of it, each host's agent asked again with its
//     real platform, software RDMA noted before an RDMA variant's first
//     figure, the variant's settings and hosts, then the flat-out runs
//     (bench.go's RunBench: the client hosts' clocks and common start,
//     the samplers, each host's stream merged, the progress, each
//     repetition written) and the capacity search (search.go). Every
//     line, second and progress event carries the figures' label
//     (Figures, Labelled).
//   - The host (ESXi) metrics (hostmetrics.go): the points of the source
//     Probes.VSphere gives, joined second by second to each run, which
//     is held until vCenter has published the seconds it covers.
//   - The pure parts, each tested alone: the bench's configuration and
//     commands, the split of a load among client hosts, their clocks and
//     common start, the merge of their streams (BenchOutput,
//     SecondJoiner, ClientRun, ClientMerge), the samplers' board and RDMA
//     counters (StartSamplers), the capacity search's configuration and
//     texts, the software-RDMA probe's script and verdict, the emulated
//     path's placement and notes.
//
// # The environment
//
// Env (env.go) is kind.Env plus Agents (dpulab on a host, what it lacks
// before the hosts are reached, its CPUs, an optional role without a
// host, vSphere's planned queries) and Deployments (the deploy step of a
// group and its plan): what the plan needs. Runner (run.go) adds what the
// run needs: Paths (StartPath, TeardownPath) and Measurer
// (measure_env.go), which is
//
//	kind.Env, event.Emitter // output, lines, Progress and Sample
//	Hosts    // Agent, Reached: a host reached, with dpulab there
//	Running  // Deployment, Instances, LacksNow: the running deployments
//	         // and the agents' transports once the hosts are reached
//	Probes   // NoteSoftwareRDMA, SoftwareRDMA, VSphere: what the run
//	         // learns of the hosts' hardware, once per run
//	Writer   // PutCompare, Emulated: the results file
//
// The engine implements them in steps/kind_env_load.go, each method a
// door to state it keeps for the whole run; this package's tests fake
// them (fake_measure_test.go: kindtest's targets answering the bench's
// lines; no sshd, no engine). Cancellation is the run's ctx; the clock is
// kind.Clock.
package load
