//go:build nordma && !rdmasim

package transport

import (
	"runtime"

	"github.com/dpulab/dpulab/internal/wire/transportwire"
)

// -tags nordma leaves the RDMA provider out: a fully static binary (the
// provider links the dynamic loader, to open rdma-core at run time), e.g.
// for qemu-user without the target's libraries, or a host without glibc.
func init() {
	builtNoRDMA = true
	known[RDMA] = "RDMA is not in this build: it was " + transportwire.Build{OS: runtime.GOOS, Arch: runtime.GOARCH, NoRDMA: true}.Lacks(RDMA) + "; build it without that tag, or use transport tcp"
}
