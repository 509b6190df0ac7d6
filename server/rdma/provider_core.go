//go:build rdma && !rdmasim && cgo

package rdma

// The shipped cgo provider: rdma-core (dplverbs_rdmacore.c).

// ProviderName names the cgo provider this build has.
const ProviderName = "rdma-core"

// ProviderSimulation labels figures measured over this build's provider:
// empty, they are RDMA's.
const ProviderSimulation = ""

// providerCheck: rdma-core's libraries and entry points (once).
func providerCheck() error {
	probeOnce.Do(func() { probeErr = probe() })
	return probeErr
}

// providerDevice: an RDMA device (every time: a driver may be loaded
// while we run).
func providerDevice() error { return deviceCheck() }
