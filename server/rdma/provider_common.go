//go:build rdma && (cgo || (!rdmasim && linux && (amd64 || arm64)))

package rdma

import (
	"net"
	"time"
)

// What the two rdma-core providers share: the cgo provider (provider.go
// over the C layer, build tag rdma with cgo) and the pure-Go one
// (provider_purego.go over verbs_purego.go, build tag rdma without cgo on
// linux/amd64 and linux/arm64). Both give the same Listen, Dial and
// ProviderReady over these options.

// ProviderOptions are a connection's settings over an rdma-core provider
// (cgo or pure Go): the server's rdma-* keys and the load generator's
// --rdma-* flags.
type ProviderOptions struct {
	// Type is RC or UC (default RC). A listener refuses a client of the
	// other type.
	Type QPType
	// Conn is the protocol's configuration (Role is set by Listen and
	// Dial).
	Conn Config
	// SendQueueDepth and RecvQueueDepth size the queue pair (0: 1024).
	SendQueueDepth, RecvQueueDepth int
	// InlineSize is the largest SEND or WRITE posted inline (the adapter
	// copies it from the work request; 0: none).
	InlineSize int
	// Poll is how long the completion goroutine spins on the completion
	// queue after the last completion before it sleeps on the completion
	// channel (rdma-poll-us; 0: sleep at once).
	Poll time.Duration
	// RetryCount is RC's transport retry count (0..7; 0 means 7).
	RetryCount int
	// CompletionVector is the completion queue's vector (-1: automatic).
	CompletionVector int
	// SourceAddr, for Dial, is the local address to connect from (an IP
	// of the interface, and so the device, to leave by; "": the route's).
	SourceAddr string
	// Refused, for Listen, is told of every connection refused before it
	// was served (a client of the other queue-pair type, a setup that
	// failed): the peer's address and why.
	Refused func(peer string, err error)
}

// peerAddr is a set-up connection's peer as a *net.TCPAddr. An address
// that does not parse is the unspecified one, never loopback: protected
// mode must not take an unknown peer for a local one.
func peerAddr(host string, port int) *net.TCPAddr {
	ip := net.ParseIP(host)
	if ip == nil {
		ip = net.IPv4zero
	}
	return &net.TCPAddr{IP: ip, Port: port}
}

// setupTimeout bounds a connection's setup on the server (a client that
// connects and says nothing, a route that does not resolve; each in its own
// goroutine, holding up no one else). A lost RTU is resent only on the
// CM's response timeout (about 4 s), and an emulated guest is slower
// still: with 5 s, one connect in 213 of a Soft-RoCE guest's cycles was
// dropped by the server after the client had seen it established.
const setupTimeout = 30 * time.Second
