//go:build nordma && !rdmasim

package transport

// -tags nordma leaves the RDMA provider out: a fully static binary (the
// provider links the dynamic loader, to open rdma-core at run time), e.g.
// for qemu-user without the target's libraries, or a host without glibc.
func init() {
	known[RDMA] = "RDMA is not in this build: it was built with -tags nordma (a static binary without the RDMA provider); build it without that tag, or use transport tcp"
}
