//go:build rdmasim

package transport

import (
	"context"
	"net"

	"github.com/dpulab/dpulab/server/rdma"
)

// The rdmasim build's rdma: Valkey's protocol (server/rdma's Conn) over
// the simulated provider, whose verbs travel over Unix sockets between
// processes on this host. For tests and rehearsals only: it never ships,
// and every figure measured over it says so (Simulated).

func init() { Register(RDMA, simRDMA{}) }

type simRDMA struct{}

func simOptions(o Options) rdma.SimOptions {
	so := rdma.SimOptions{
		Type:    rdma.RC,
		Conn:    rdma.Config{RxSize: o.RDMA.RxSize},
		Queues:  rdma.WireOptions{SendQueueDepth: o.RDMA.SQSize, RecvQueueDepth: o.RDMA.RQSize},
		Refused: o.Refused,
	}
	if o.RDMA.UC {
		so.Type = rdma.UC
	}
	return so
}

func (simRDMA) Listen(_ context.Context, addr string, o Options) (net.Listener, error) {
	return rdma.ListenSim(addr, simOptions(o))
}

func (simRDMA) Dial(ctx context.Context, addr string, o Options) (net.Conn, error) {
	return rdma.DialSim(ctx, addr, simOptions(o))
}

// Simulation implements Simulation.
func (simRDMA) Simulation() string { return rdma.SimNote }
