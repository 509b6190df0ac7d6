//go:build rdma && !cgo && !rdmasim && !(linux && (amd64 || arm64))

package transport

// A build with -tags rdma but without cgo (CGO_ENABLED=0) on a platform the
// pure-Go provider does not cover (it is linux/amd64 and linux/arm64 only)
// has no provider. Say so, rather than tell the person to
// rebuild with the tag they used.
func init() {
	known[RDMA] = "this build has -tags rdma but no cgo (CGO_ENABLED=0), and the pure-Go provider is linux/amd64 and linux/arm64 only: rebuild with CGO_ENABLED=1 and -tags rdma (needs a C compiler, libibverbs-dev and librdmacm-dev), or use transport tcp"
}
