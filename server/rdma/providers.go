package rdma

// cgoProvider is set by the cgo provider (provider.go, build tag rdma).
var cgoProvider func() (string, error)

// Provider names this build's cgo RDMA provider ("rdma-core", or the C
// layer's simulation in a rdma,rdmasim build) and says whether this host
// can use it; "" and nil in a build without one (the default build, or the
// Go simulation of -tags rdmasim).
func Provider() (string, error) {
	if cgoProvider == nil {
		return "", nil
	}
	return cgoProvider()
}
