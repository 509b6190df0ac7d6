//go:build linux && (amd64 || arm64) && !nordma && !rdmasim

package transport

import (
	"context"
	"fmt"
	"net"

	"github.com/dpulab/dpulab/server/rdma"
)

// rdma in a linux/amd64 or linux/arm64 build (with or without cgo):
// Valkey's protocol (server/rdma's Conn) over the rdma-core provider,
// rdma-core loaded at run time through purego. The binary starts and
// serves TCP without rdma-core or a device; Listen and Dial say what the
// host lacks (rdma.ProviderReady). -tags nordma leaves it out
// (rdma_nordma.go); a rdmasim build has the Go simulation instead
// (rdma_sim.go); other platforms refuse with the reason
// (rdma_unsupported.go).

func init() { Register(RDMA, coreRDMA{}) }

type coreRDMA struct{}

func providerOptions(o Options) rdma.ProviderOptions {
	po := rdma.ProviderOptions{
		Type:             rdma.RC,
		Conn:             rdma.Config{RxSize: o.RDMA.RxSize},
		SendQueueDepth:   o.RDMA.SQSize,
		RecvQueueDepth:   o.RDMA.RQSize,
		InlineSize:       o.RDMA.InlineSize,
		Poll:             o.RDMA.Poll,
		RetryCount:       o.RDMA.RetryCount,
		CompletionVector: o.RDMA.CompletionVector,
		SourceAddr:       o.SourceAddr,
		Refused:          o.Refused,
	}
	if o.RDMA.UC {
		po.Type = rdma.UC
	}
	return po
}

func (coreRDMA) Listen(_ context.Context, addr string, o Options) (net.Listener, error) {
	if err := rdma.ProviderReady(); err != nil {
		return nil, hostLacks{fmt.Errorf("rdma listen %s: %w", addr, err)}
	}
	return rdma.Listen(addr, providerOptions(o))
}

// Dial says what this host lacks (rdma-core's libraries, a device) as
// ErrHostLacks, before trying the peer.
func (coreRDMA) Dial(ctx context.Context, addr string, o Options) (net.Conn, error) {
	if err := rdma.ProviderReady(); err != nil {
		return nil, hostLacks{fmt.Errorf("rdma connect %s: %w", addr, err)}
	}
	return rdma.Dial(ctx, addr, providerOptions(o))
}

// hostLacks wraps what the host lacks so that it is ErrHostLacks.
type hostLacks struct{ err error }

func (e hostLacks) Error() string        { return e.err.Error() }
func (e hostLacks) Unwrap() error        { return e.err }
func (e hostLacks) Is(target error) bool { return target == ErrHostLacks }
