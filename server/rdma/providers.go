package rdma

// buildProvider is set by this build's provider (provider_init.go): the
// rdma-core provider on linux/amd64 and linux/arm64, none elsewhere, with
// -tags nordma, or in a rdmasim build (whose transport is the Go
// simulation).
var buildProvider func() (string, error)

// Provider names this build's RDMA provider ("rdma-core (pure Go)") and
// says whether this host can use it; "" and nil in a build without one
// (another OS or architecture, -tags nordma, or the Go simulation of
// -tags rdmasim).
func Provider() (string, error) {
	if buildProvider == nil {
		return "", nil
	}
	return buildProvider()
}
