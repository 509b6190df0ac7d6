// Package bench is the load generator behind `dpulab bench`: it drives one or
// many Redis-compatible targets with a SET:GET mix, measures every reply's
// latency into HDR histograms, and reports per-second samples, per-run
// results and an across-run summary, as a human table or as JSON lines (the
// contract in result.go, read back with Decode by the step engine).
//
// Two client paths share everything but the hot loop: a lean pipelined path
// over server/resp that allocates nothing per request, and go-redis v9.
// Both count the same way: one request sent is one reply counted.
package bench
