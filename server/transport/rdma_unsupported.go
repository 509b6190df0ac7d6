//go:build !nordma && !rdmasim && !(linux && (amd64 || arm64))

package transport

import (
	"runtime"

	"github.com/dpulab/dpulab/internal/wire/transportwire"
)

// The RDMA provider loads rdma-core on linux/amd64 and linux/arm64 only
// (the C structs it lays out in Go are those of LP64 Linux); elsewhere
// the transport is known and refused with the reason. A controller on a
// laptop runs its labs' RDMA on the hosts, through the agent built for
// them (transportwire.Build says which builds have what).
func init() {
	known[RDMA] = "RDMA is not in this build: it was " + transportwire.Build{OS: runtime.GOOS, Arch: runtime.GOARCH}.Lacks(RDMA) + "; run it on such a host, or use transport tcp"
}
