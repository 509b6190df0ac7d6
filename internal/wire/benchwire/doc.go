// Package benchwire is the part of the load generator's contract that the
// controller reads without linking the load generator: the capacity
// objective (what a lab's capacity: says and `dpulab bench --capacity`
// takes), the latency summary every per-second sample, run and probe
// carries, and the constants the engine and the TUI judge by. server/bench
// declares its types as aliases of these, so there is one declaration of
// each; labs, steps/results and the dashboard import this instead of the
// bench (and so never link go-redis or HdrHistogram).
//
// A leaf: the standard library only. cmd/dpulab-agent's deps_test.go
// keeps it so.
//
// Why here and by this name: internal/wire/ holds what crosses between the
// controller and the agent (the "wire" between them, as mutagen's agent
// packages are named), one small package per producer; benchwire is the
// bench's side. The server's RDMA settings the engine passes to the bench
// stay with the server for now (steps/benchconfig.go).
package benchwire

// Latency is a latency summary in milliseconds, read from an HDR
// histogram; P999 is the 99.9th percentile. It is the latency of every
// per-second sample, run and capacity probe of `dpulab bench --json`, and
// of results.json's points and runs: one type for all of them.
type Latency struct {
	Avg  float64 `json:"avg"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

// ClientBoundPct is the host CPU busy share, in percent, from which a run
// is marked client_bound (the load generator's host, not only the server,
// limited the figures).
const ClientBoundPct = 90.0

// PasswordEnv is the environment variable `dpulab bench` reads the password
// from when --password is not given, so that it never has to appear in argv
// (visible in ps on a shared lab host). The step engine sets it.
const PasswordEnv = "DPULAB_BENCH_PASSWORD"
