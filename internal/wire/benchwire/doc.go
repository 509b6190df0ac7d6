// Package benchwire is the part of the load generator's contract that the
// controller reads and builds without linking the load generator:
//
//   - the Config of one `dpulab bench` (config.go), with its defaults,
//     Validate and Args, which renders it as the command line the engine
//     runs on a client host (args.go; server/bench's ParseArgs reads it
//     back);
//   - the JSON-lines events `dpulab bench --json` prints and ParseLine
//     reads back (events.go): Start, Sample, RunResult, Summary, Prefill,
//     and the latency summary (Latency) every per-second sample, run and
//     capacity probe carries, declared once for the bench and results.json;
//   - the capacity objective, the search and its verdicts (capacity.go):
//     Search is the one search `dpulab bench --capacity` runs over its own
//     connections and the engine runs over probes several client hosts ran
//     together;
//   - the constants the engine and the TUI judge by (ClientBoundPct,
//     PasswordEnv).
//
// server/bench declares its types as aliases of these, so there is one
// declaration of each. The latency histograms the lines carry are decoded
// and merged by internal/benchhdr, which is this package plus
// HdrHistogram; labs, steps, steps/results and the dashboard import these
// two and never link go-redis or the bench.
//
// A leaf: the standard library, internal/wire/transportwire (the
// endpoints) and internal/termtext (error kinds as one line of text) only.
// cmd/dpulab-agent's deps_test.go keeps it so.
//
// Why here and by this name: internal/wire/ holds what crosses between the
// controller and the agent (the "wire" between them, as mutagen's agent
// packages are named), one small package per producer; benchwire is the
// bench's side.
package benchwire
