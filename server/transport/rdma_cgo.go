//go:build rdma && (cgo || (!rdmasim && linux && (amd64 || arm64)))

package transport

import (
	"context"
	"net"

	"github.com/dpulab/dpulab/server/rdma"
)

// The -tags rdma build's rdma: Valkey's protocol (server/rdma's Conn) over
// an rdma-core provider, rdma-core loaded at run time: the cgo one, or
// without cgo (CGO_ENABLED=0, linux/amd64 and linux/arm64) the pure-Go one
// over purego; both give the same rdma.Listen, rdma.Dial and options. The binary starts and
// serves TCP without rdma-core or a device; Listen and Dial say what the
// host lacks (rdma.ProviderReady). With rdmasim as well (tests only), the
// same cgo code runs over the C layer's simulation, and figures say so.

func init() { Register(RDMA, cgoRDMA{}) }

type cgoRDMA struct{}

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

func (cgoRDMA) Listen(_ context.Context, addr string, o Options) (net.Listener, error) {
	return rdma.Listen(addr, providerOptions(o))
}

func (cgoRDMA) Dial(ctx context.Context, addr string, o Options) (net.Conn, error) {
	return rdma.Dial(ctx, addr, providerOptions(o))
}

// Simulation implements Simulation: empty for rdma-core, the label of the
// C simulation in a rdma,rdmasim build.
func (cgoRDMA) Simulation() string { return rdma.ProviderSimulation }
