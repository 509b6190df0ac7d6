// Package bench is the load generator behind `dpulab bench`: it drives one or
// many Redis-compatible targets with a SET:GET mix, measures every reply's
// latency into HDR histograms, and reports per-second samples, per-run
// results and an across-run summary, as a human table (HumanPrinter) or as
// JSON lines (the contract in result.go, read back with Decode or ParseLine
// by the step engine).
//
// Entry points: DefaultConfig, Config.Validate, Run(ctx, cfg, emit), and
// Config.Args to build the argv of a remote `dpulab bench --json` (the
// password travels in the PasswordEnv environment variable, never argv).
//
// How it measures:
//
//   - One goroutine per connection (worker.go) builds a pipeline, sends it,
//     reads its replies and records them into its own accum under its own
//     mutex; once per interval the collector (collect.go) swaps every
//     worker's accum for an empty one and folds the raw latencies into HDR
//     histograms (1 µs .. 60 s, 3 significant digits). No lock is shared
//     between workers, and the histograms live in the collector only, so
//     4000 connections cost kilobytes each, not a histogram each.
//   - A request's latency runs from the moment it was sent — or, under
//     --rate, from the moment it was due on the fixed schedule — to the
//     return of the read that brought its reply. A stalled server therefore
//     shows in the latency of every request that fell due meanwhile.
//   - Counts are exact: every connection repeats Set SETs then Get GETs;
//     --requests N is split over connections with the remainder on the
//     first ones; a reply is counted once, error replies included; requests
//     cut off by a broken connection or a stall are errors, not replies.
//   - A run ends early (partial results kept, error stated) when a
//     connection breaks, when a timed run's replies do not come within
//     stallGrace of its end, or when a --requests run gets no reply for
//     stallQuiet; Ctrl-C (ctx) ends it too, with what was measured.
//
// Two client paths share everything but the connection: a lean path that
// writes RESP with server/resp's append writers into one buffer per
// connection and parses replies in place (no allocation per request), and
// go-redis v9 with a dedicated pool connection per worker (Protocol as
// asked, DisableIdentity, no retries, no timeouts of its own, pool warmed
// by a PING per connection before anything is timed). "auto" is the lean
// path: go-redis allocates per command and, with deep pipelines, was
// measured at about half of redis-benchmark's rate.
package bench
