// Package samplewire is the contract of `dpulab sample`'s output: the
// Sample record it prints once per interval as a JSON line (CPU shares,
// network and RDMA port rates, package power), and the Decoder the step
// engine reads the stream back with. server/sample measures and declares
// its types as aliases of these, so the controller reads a host's samples
// without linking the sampler.
//
// A leaf: the standard library only (cmd/dpulab-agent's deps_test.go).
package samplewire
