// Package bench is the load generator behind `dpulab bench`: it drives one or
// many Redis-compatible targets with a SET:GET mix, measures every reply's
// latency into HDR histograms, and reports per-second samples, per-run
// results and an across-run summary, as a human table (HumanPrinter) or as
// JSON lines (the contract, read back with Decode or ParseLine by the step
// engine; FORMATS.md at the repository's root).
//
// What the controller reads or builds without linking this package lives
// in leaf packages, and this one declares its types as aliases of theirs:
// internal/wire/benchwire holds the Config (with its Validate and Args),
// the JSON-lines events and their parser, the capacity objective, search
// and verdicts; internal/benchhdr holds the latency histograms on the wire
// and the merges of several client hosts' lines (MergeSamples,
// MergeTotals, MergeProbes). This package is the measuring: connections,
// workers, the collector, the command line, the human table, memtier's
// files.
//
// Entry points: DefaultConfig, Config.Validate, Run(ctx, cfg, emit),
// Capacity(ctx, cfg, spec, emit) for a capacity search, the
// command line (NewFlags on a pflag.FlagSet, or ParseArgs), and Config.Args
// to build the argv of a remote `dpulab bench --json`, which ParseArgs reads
// back into the same Config (the password travels in the PasswordEnv
// environment variable, never argv).
//
// The flags are memtier_benchmark's, with memtier's meanings (flags.go):
// a target gets --threads × --clients connections, --requests is per
// connection, --rate-limiting per connection, --key-pattern SET:GET with
// R/S/G/P and --key-minimum..--key-maximum both included, value sizes
// fixed, a range (random or growing with the key) or a weighted list,
// --expiry-range (SET key value EX n), --select-db, --protocol resp2|resp3,
// --json-out-file in memtier's JSON shape and --hdr-file-prefix's
// HdrHistogram logs (memtier.go). dpulab's own flags fill in what memtier
// has no word for: --target lists, each target with its transport through
// server/transport (HOST:PORT is TCP; rdma://HOST:PORT with --rdma-mode
// rc|uc and the --rdma-* settings; unix:///PATH), --duration and --warmup, totals
// (--requests-total, --rate), --prefill, --json. -a/--authenticate works
// for memtier command lines, with a warning: a password in argv is
// readable by every user of the host (ps), so PasswordEnv is the way.
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
//     --rate or --rate-limiting, from the moment it was due on the fixed
//     schedule — to the return of the read that brought its reply. A
//     stalled server therefore shows in the latency of every request that
//     fell due meanwhile.
//   - Counts are exact: every connection repeats Set SETs then Get GETs;
//     --requests N is N per connection, --requests-total N is split over
//     connections with the remainder on the first ones; a reply is counted
//     once, error replies included; requests cut off by a broken
//     connection or a stall are errors, not replies.
//   - Key patterns run per connection and per side (SET, GET), as memtier's
//     iterators do; P splits the key range over the connections of each
//     target, and --prefill writes the whole range to every target.
//   - Every sample and every run's totals carry their histogram on the wire
//     ("latency_hdr_us": HdrHistogram's V2 compressed base64, the string of
//     an HdrHistogram interval log line; internal/benchhdr). Its
//     MergeSamples and MergeTotals merge several client hosts' lines of the same interval or
//     run: TPS summed, percentiles read from the merged histogram, never
//     averaged. Lines without the field (older benches) still parse; their
//     counts merge and the merge says that it has no latency for them.
//   - The client saturation guard (cpu.go): every interval and run carries
//     the bench process's CPU (percent of one core) and its host's busy
//     share (/proc/stat, percent of all CPUs); a run whose client host was
//     at least ClientBoundPct (90%) busy is marked client_bound, in the run,
//     the summary and the human table, since such a run measures the client
//     as much as the server.
//   - Capacity search (--capacity p99<=1ms, Config.Capacity; the method
//     is internal/wire/benchwire/capacity.go's): probes at fixed rates over
//     the same connections, latency counted from when each request was
//     due (coordinated omission corrected); doubling while probes pass,
//     halving while they fail, then bisection until the lowest failing
//     rate is within --capacity-precision (5%) of the highest passing one,
//     which is the answer. Each probe lasts --duration and at
//     least long enough for ten replies beyond the percentile (1,000 for
//     p99); a probe still behind its schedule half a probe after its end is
//     cut and fails. The stream: start, each probe's samples ("run" = the
//     probe) and a capacity_probe line, then a capacity line.
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
