package rdma

// buildProvider is set by this build's rdma-core provider: the cgo one
// (provider.go, -tags rdma with cgo) or the pure-Go one
// (provider_purego.go, -tags rdma without cgo on linux/amd64 and arm64).
var buildProvider func() (string, error)

// Provider names this build's RDMA provider ("rdma-core", "rdma-core (pure
// Go, no cgo)", or the C layer's simulation in a rdma,rdmasim build) and
// says whether this host can use it; "" and nil in a build without one (the default build, or the
// Go simulation of -tags rdmasim).
func Provider() (string, error) {
	if buildProvider == nil {
		return "", nil
	}
	return buildProvider()
}
