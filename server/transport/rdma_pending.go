//go:build rdma && !cgo && !rdmasim

package transport

// A build with -tags rdma but without cgo (CGO_ENABLED=0) has no provider:
// the rdma-core provider is cgo. Say so, rather than tell the person to
// rebuild with the tag they used.
func init() {
	known[RDMA] = "this build has -tags rdma but no cgo (CGO_ENABLED=0): rebuild with CGO_ENABLED=1 and -tags rdma (needs a C compiler, libibverbs-dev and librdmacm-dev), or use transport tcp"
}
