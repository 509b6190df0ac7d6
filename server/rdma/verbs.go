package rdma

import (
	"errors"
	"fmt"
)

// This file is the verbs-level interface the protocol is written against:
// the few things Valkey's transport does with libibverbs and librdmacm,
// shaped so that the in-memory fabric (fabric.go), the Go simulation
// (sim.go, wire.go) and the rdma-core provider (provider.go) implement the
// same thing.

// QPType is the queue pair's transport service.
type QPType uint8

const (
	// RC is Reliable Connected: acknowledged, retried, in order; an
	// error (no receive posted, bad rkey, peer gone) fails the operation
	// and puts the queue pair in the error state. Valkey uses RC only.
	RC QPType = iota + 1
	// UC is Unreliable Connected: in order, never retried, never
	// acknowledged. A lost packet loses the whole message silently; a
	// message for which no receive is posted is dropped. It supports
	// SEND and RDMA WRITE (WITH IMM), not READ or atomics.
	UC
)

func (t QPType) String() string {
	switch t {
	case RC:
		return "rc"
	case UC:
		return "uc"
	}
	return fmt.Sprintf("qp type %d", uint8(t))
}

// Region is a registered memory region: local memory the adapter may read
// (and, when registered for it, the peer may write) without the kernel.
type Region interface {
	// Bytes is the region's memory. For the rdma-core provider it is memory
	// outside the Go heap (mmap, page-aligned, with guard pages), valid
	// until Deregister.
	Bytes() []byte
	// Addr is the address the peer names in an RDMA WRITE.
	Addr() uint64
	// RKey is the key the peer must present with Addr.
	RKey() uint32
}

// Op is the operation a work completion reports.
type Op uint8

const (
	// OpSend completes a posted SEND (signaled, or failed).
	OpSend Op = iota + 1
	// OpWrite completes a posted RDMA WRITE WITH IMM (signaled, or failed).
	OpWrite
	// OpRecv is a SEND that arrived into a posted receive.
	OpRecv
	// OpRecvWriteImm is an RDMA WRITE WITH IMM that landed; it consumed a
	// posted receive (its buffer is untouched) and carries the immediate.
	OpRecvWriteImm
)

func (o Op) String() string {
	switch o {
	case OpSend:
		return "send"
	case OpWrite:
		return "write"
	case OpRecv:
		return "recv"
	case OpRecvWriteImm:
		return "recv-write-imm"
	}
	return fmt.Sprintf("op %d", uint8(o))
}

// Status is a work completion's outcome (the ibv_wc_status values the
// protocol tells apart).
type Status uint8

const (
	StatusSuccess Status = iota
	// StatusFlushed: the queue pair went to the error state (disconnect or
	// an earlier failure) before the request ran.
	StatusFlushed
	// StatusRNRRetryExceeded: RC, the peer had no receive posted.
	StatusRNRRetryExceeded
	// StatusRemoteAccess: RC, a write outside the peer's region or with a
	// wrong rkey.
	StatusRemoteAccess
	// StatusRemoteInvalidRequest: RC, a SEND longer than the peer's
	// receive buffer.
	StatusRemoteInvalidRequest
	// StatusLocalLength: a SEND arrived longer than this receive buffer.
	StatusLocalLength
	// StatusRetryExceeded: RC, the peer stopped answering (gone, cable
	// pulled).
	StatusRetryExceeded
	// StatusCQOverrun: the completion queue overflowed; the queue pair is
	// in the error state.
	StatusCQOverrun
)

func (s Status) String() string {
	switch s {
	case StatusSuccess:
		return "success"
	case StatusFlushed:
		return "flushed (queue pair in error state)"
	case StatusRNRRetryExceeded:
		return "receiver not ready (no receive posted by the peer)"
	case StatusRemoteAccess:
		return "remote access error (write outside the peer's registered region, or wrong rkey)"
	case StatusRemoteInvalidRequest:
		return "remote invalid request"
	case StatusLocalLength:
		return "local length error"
	case StatusRetryExceeded:
		return "transport retry count exceeded (peer not answering)"
	case StatusCQOverrun:
		return "completion queue overrun"
	}
	return fmt.Sprintf("status %d", uint8(s))
}

// Completion is one work completion (ibv_wc), in the order the queue
// produced them.
type Completion struct {
	WRID    uint64
	Op      Op
	Status  Status
	ByteLen uint32
	Imm     uint32
}

// Event is a connection-manager event (rdma_cm_event) after setup.
type Event uint8

const (
	// EventEstablished: both sides may now post sends.
	EventEstablished Event = iota + 1
	// EventDisconnected: either side disconnected; the queue pair is in
	// the error state and posted receives are flushed.
	EventDisconnected
)

func (e Event) String() string {
	switch e {
	case EventEstablished:
		return "established"
	case EventDisconnected:
		return "disconnected"
	}
	return fmt.Sprintf("event %d", uint8(e))
}

// QP is one side of a connection: a queue pair with its completion queue,
// protection domain and connection-manager id. It is used from one
// goroutine at a time (the Conn holds its lock around every call);
// Notify's channel is the one thing read without it.
type QP interface {
	// Type is RC or UC.
	Type() QPType
	// Register allocates size bytes and registers them: local access
	// always, remote write when remoteWrite.
	Register(size int, remoteWrite bool) (Region, error)
	// Deregister releases a region from Register.
	Deregister(Region) error
	// PostRecv posts a receive of up to n bytes into r at off.
	PostRecv(wrID uint64, r Region, off, n int) error
	// PostSend posts a SEND of r[off:off+n]. Unsignaled requests produce
	// a completion only if they fail; their send-queue slots are freed
	// when a later signaled request's completion is polled.
	PostSend(wrID uint64, r Region, off, n int, signaled bool) error
	// PostWriteImm posts an RDMA WRITE WITH IMM of r[off:off+n] to the
	// peer's remoteAddr under rkey, imm in host order (the provider sends
	// it big-endian, as ibv's imm_data is).
	PostWriteImm(wrID uint64, r Region, off, n int, remoteAddr uint64, rkey, imm uint32, signaled bool) error
	// Poll moves up to len(wc) completions into wc, oldest first, and says
	// how many; 0 when there are none.
	Poll(wc []Completion) (int, error)
	// PollEvent returns the next connection-manager event, if any.
	PollEvent() (Event, bool)
	// Notify is signalled (without blocking the provider: capacity 1)
	// whenever a completion or an event may be ready; after it fires,
	// Poll and PollEvent until empty.
	Notify() <-chan struct{}
	// SendQueueDepth is how many send requests may be outstanding.
	SendQueueDepth() int
	// RecvQueueDepth is how many receives may be posted at once.
	RecvQueueDepth() int
	// Disconnect starts an orderly disconnect; both sides get
	// EventDisconnected.
	Disconnect() error
	// Close disconnects if needed and releases everything.
	Close() error
}

// Errors a provider returns from a post.
var (
	// ErrQPState: the queue pair is not connected, or is in the error
	// state.
	ErrQPState = errors.New("rdma: queue pair is not ready (not connected or in error state)")
	// ErrQueueFull: more requests than the queue holds.
	ErrQueueFull = errors.New("rdma: work queue full")
	// ErrLocalRegion: a local buffer outside a region this queue pair
	// registered.
	ErrLocalRegion = errors.New("rdma: local buffer outside a registered region")
)
