//go:build rdma && rdmasim && cgo

package rdma

// The test-only cgo provider: the C layer's simulation
// (dplverbs_sim.c), which carries the verbs over Unix sockets in WireQP's
// frames, so this build and a Go rdmasim build interoperate. Never shipped.

// ProviderName names the cgo provider this build has.
const ProviderName = "C layer simulation over Unix sockets"

// ProviderSimulation labels figures measured over this build's provider.
const ProviderSimulation = "simulated RDMA (rdma,rdmasim build: the cgo provider's C layer carries the verbs over Unix sockets on this host, no NIC; figures are not RDMA's)"

func providerCheck() error  { return nil }
func providerDevice() error { return nil }
