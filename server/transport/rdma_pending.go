//go:build rdma && !rdmasim

package transport

// A build with -tags rdma asks for the rdma-core provider, which is not
// written yet (issue 12): say so, rather than tell the person to rebuild
// with the tag they used.
func init() {
	known[RDMA] = "this build has -tags rdma, but the rdma-core provider is not written yet (issue 12); use transport tcp, or -tags rdmasim for the simulation"
}
