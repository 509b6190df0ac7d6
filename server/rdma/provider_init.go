//go:build linux && (amd64 || arm64) && !nordma && !rdmasim

package rdma

// The provider is this build's RDMA (server/transport's rdma_core.go
// registers it under the same constraint). A rdmasim build compiles the
// provider, so that its tests run in that build too, but its transport is
// the Go simulation, and `dpulab version` must not name rdma-core there.
func init() {
	buildProvider = func() (string, error) { return ProviderName, ProviderReady() }
}
