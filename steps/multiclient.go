package steps

// Several client hosts, one measurement (issue 17). No single client host
// can drive 80 instances on each of several server hosts at the rates the
// whitepaper measured, so a bench or compare step runs `dpulab bench` on
// every host of its role (or clients_hosts: N of them), each with a share
// of the load, started together; their per-second samples are merged into
// one series (multiclient_merge.go) and their clocks checked first
// (multiclient_clock.go). bench.go's runBench is the one path: one client
// host is the case n = 1 (no clock check, no common start, and the merge
// of one host's stream is that stream).
