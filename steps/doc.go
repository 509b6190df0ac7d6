// Package steps runs a lab: it takes a labs.Lab, runs its steps in order
// against runner Targets chosen from the inventory, and reports what happens
// as typed Events. It saves progress after every step and writes results;
// it never draws. The TUI and `dpulab run` are two renderers of its events.
//
// # Using the engine
//
// New prepares a run (variables checked, saved progress loaded, nothing
// connected). The TUI drives it step by step with Plan, RunStep (also for a
// retry), Skip, SetVars, then Cleanup and Finish; `dpulab run` calls Run,
// which does all of that from Resume to the end. Events go to Options.Emit
// from engine goroutines. A Prompt blocks its step until Reply is called:
// confirm prompts take "yes"/"no", host-key prompts "once"/"save"/"refuse",
// secret prompts Answer.Secret (Choice "cancel" aborts).
//
// # What the engine guarantees
//
//   - Every value a lab puts into a shell command is quoted (labs'
//     autoquote), and so is every value the engine adds (runner.Quote).
//     Secrets (variables named *password*, *secret*, *token*, and the
//     requirepass setting) reach the bench on stdin only; they are hidden in
//     results and left out of saved progress.
//   - Progress is saved after every step (and after every server started),
//     atomically, under $XDG_STATE_HOME/dpulab/LAB.json. A new run resumes at
//     the first step not done or skipped; a lab that finished starts over;
//     Restart starts over but still stops what an earlier run started.
//   - Steps run one at a time; a run or check step fans out to every host of
//     its roles in parallel. Steps marked confirm, and sudo steps, ask first
//     unless Options.Yes.
//   - Cleanup steps run at the end of Run whatever happened, on a fresh
//     context after Ctrl-C; then every server a deploy started (recorded in
//     the saved progress, also by a killed run) is stopped by its pid, every
//     process group still carrying the run's working directory on its
//     command line is ended (runner.StopMarked: a start interrupted before
//     its pid was saved), and the directory is removed on every host the run
//     used — with or without a cleanup step in the lab (leftovers.go). The
//     hosts are recorded in progress before anything is made there; hosts no
//     run reached are left alone. A run killed outright is cleaned up the
//     same way by the next run, before its first step. Unless the run got
//     to its end, deploy steps whose servers cleanup stopped become pending
//     again, so a resumed run deploys before it benches; a deployment left by
//     a killed run is reused on resume only if every instance still answers
//     PING.
//   - results.json and report.md carry the run's status (complete, failed
//     at a step, interrupted, incomplete; "running" while written mid-run)
//     and each step's outcome; the results folder is checked before the
//     first step, and a headless run renders every command first.
//
// # Where things are
//
//   - engine.go: New, RunStep, Run, Cleanup, Finish, Leave; attempts.go
//     how a run's end is recorded (interrupted by what, killed) and a
//     resumed run's attempts; state.go the saved progress; event.go and printer.go the events and their headless
//     rendering (the live ones a kind sends, Progress and Sample, are
//     package steps/event's, aliased in event.go, so a kind sends them
//     through event.Emitter without importing steps); hosts*.go the
//     inventory and targets; deploy.go what the engine keeps of
//     deployments (their saved processes, stopping them at cleanup);
//     netpath.go the emulated paths' records (made before, forgotten after
//     their teardown, so cleanup and resume find them); softrdma.go each
//     host's RDMA devices, asked once per run; vsphere.go the run's
//     vCenter session; benchconfig.go whether a host's dpulab can speak a
//     transport.
//   - steps/kind: the contract between the engine and a step kind (Env,
//     Kind, Plan, Register); steps/kinds/<name>: the kinds that live in
//     their own packages (read, run and check in command, the vSphere
//     check in vspherecheck, task, template, tco, cleanup), imported by
//     kinds_list.go; steps/kinds/deploy a deploy's keys (keys.go), plan,
//     run and wait; kind_env.go the Env the engine gives them; kind.go
//     the registry's engine side.
//     steps/kinds/load is bench and compare, all of them: the plan, the
//     run's loop and one job's measurement (deploy again when needed, the
//     bench from n client hosts with its samplers, the capacity search,
//     vSphere's host metrics joined to the runs), through load.Env and
//     load.Runner, which kind_env_load.go implements with one method per
//     thing only the engine keeps (the deployments in saved progress, the
//     hosts' platforms and RDMA devices, the vCenter session, the results
//     file).
//   - The results model (results.json, statistics, deltas, the metric
//     table, report.md, samples.csv) is package steps/results; the TCO
//     model is labs/tco; the programs that run on lab hosts are under
//     server/ (server, server/bench, server/sample, server/resp). What
//     the engine builds and reads of them (the bench's Config and lines,
//     the capacity search, the sampler's records) is internal/wire/* and
//     internal/benchhdr, so steps links neither the server nor the bench.
//
// # Adding a step kind
//
// A kind is one package under steps/kinds/ and one line, its blank import
// in kinds_list.go. The package's init registers its lab.yaml keys with
// labs.RegisterKind (parsed, checked and encoded by its own code, kept in
// labs.Step.Spec; deploy, bench and compare keep theirs in the shared
// types labs declares, Step.Deploy, Step.Bench and Step.Compare) and its engine half with kind.Register: how a step
// resolves, through the kind.Env it is given (its hosts and targets, the
// run's variables, its output, the results writer, the clock), into a
// kind.Plan (the commands it will run, and its run), what the TUI shows
// while it runs (View), whether it asks for the variables, and its
// one-line note. It never sees *Engine. steps/kinds/sleep is the worked
// example.
//
// Plan, the dry run and RunStep all resolve the step through the
// registry, so what is shown is what runs. TestEveryLabKindIsRegistered
// fails until both halves exist. Test the kind alone against
// steps/kind/kindtest's fake Env (no sshd, no engine), and through the
// engine with fake targets (below).
//
// A kind that needs more of the engine than kind.Env declares its own
// Env beside it, and the engine's kindEnv implements it: the vSphere check
// (steps/kinds/vspherecheck) asks for vCenter that way, and deploy
// (steps/kinds/deploy) for the host's dpulab and the servers' password
// (deploy.Env), and for what only the engine can do because it keeps the
// saved progress and the prompts (deploy.Runner: prepared hosts, stopping
// a group, recording started processes and the deployment, a
// confirmation). The bench and compare kinds (steps/kinds/load) ask for
// the hosts' agents, what they lack and the deploy plans (load.Env), and
// for the emulated paths, the running deployments, what the hosts turn
// out to be once reached (their platform, software RDMA), vCenter's
// points and the results writer (load.Runner).
//
// # Testing a step kind
//
// Options.Targets gives the engine each host's runner.Target: a test hands
// it a fake (fake_test.go's fakeTarget) and checks what a kind asks of its
// hosts in milliseconds, beside the tests that run real processes and sshd.
//   - deploy starts one `dpulab server` process per instance (its own
//     config, log and pid), up to four at a time per host, refuses a port
//     where something already answers, and waits for PING as long as each
//     server's process lives and its start progresses (CPU time, log),
//     within minutes (steps/kinds/deploy's wait.go): an instance that exits fails the
//     step at once, with its log; one that gives up says what it waited
//     for and the host's load average.
//   - bench and compare run `dpulab bench --json` on the step's client
//     hosts (one path, steps/kinds/load/bench.go: one host is the case
//     n = 1 of the multi-client run) and `dpulab sample` on the server hosts
//     (loopback traffic for a lab on this machine), wait for the samplers'
//     first numbers, and merge both into one Point per second. Results are written after every
//     finished repetition, so a killed run keeps what it measured. A compare
//     redeploys a group only when a variant or sweep point needs a different
//     deployment (instances, port, settings, transport).
//   - verify's expect is matched in multi-line mode: ^ and $ match at line
//     boundaries of the combined output.
package steps
