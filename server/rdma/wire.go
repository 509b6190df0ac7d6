package rdma

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// This file is WireQP: a QP whose peer is in another process, the verbs'
// messages carried over a stream socket (a Unix socket in the simulated
// provider, sim.go). Each side keeps its own registered regions, posted
// receives and completion queue, and enforces on what arrives the rules
// the in-memory fabric enforces (fabric.go): a WRITE WITH IMM lands only
// inside a region registered for remote write under its rkey and consumes a
// posted receive; a SEND needs a posted receive big enough; RC holds a
// message until a receive is posted (rnr_retry_count 7) and reports every
// outcome back to the sender (its completion), UC drops what breaks a rule
// and completes at the sender as soon as the message is on its way. So the
// protocol (Conn) runs across two processes exactly as it runs over
// hardware, without a NIC: no figure measured over it is RDMA's.

// Wire frames: a 32-byte header, then Len payload bytes for a SEND or a
// WRITE WITH IMM.
const (
	frameSend       = 1 // a SEND
	frameWrite      = 2 // an RDMA WRITE WITH IMM
	frameAck        = 3 // RC: the outcome of the peer's oldest unacknowledged message
	frameDisconnect = 4 // an orderly disconnect
	frameHeader     = 32
)

type frame struct {
	kind   uint8
	status Status
	imm    uint32
	rkey   uint32
	n      uint32
	raddr  uint64
}

func (f *frame) put(b []byte) {
	b[0], b[1] = f.kind, byte(f.status)
	binary.BigEndian.PutUint16(b[2:], 0)
	binary.BigEndian.PutUint32(b[4:], f.imm)
	binary.BigEndian.PutUint32(b[8:], f.rkey)
	binary.BigEndian.PutUint32(b[12:], f.n)
	binary.BigEndian.PutUint64(b[16:], f.raddr)
	binary.BigEndian.PutUint64(b[24:], 0)
}

func (f *frame) parse(b []byte) {
	f.kind, f.status = b[0], Status(b[1])
	f.imm = binary.BigEndian.Uint32(b[4:])
	f.rkey = binary.BigEndian.Uint32(b[8:])
	f.n = binary.BigEndian.Uint32(b[12:])
	f.raddr = binary.BigEndian.Uint64(b[16:])
}

// maxFrame bounds a frame's payload: the largest region a Conn registers.
const maxFrame = MaxRxSize

// WireOptions size a WireQP's queues; zero values take Valkey's.
type WireOptions struct {
	SendQueueDepth int // default 1024
	RecvQueueDepth int // default 1024
}

// WireQP is one side of a connection whose peer is across a stream
// socket. It implements QP. NewWireQP makes it; Establish starts it once
// both sides have their Conn (receives posted).
type WireQP struct {
	mu    sync.Mutex
	typ   QPType
	state qpState
	gone  bool
	sock  net.Conn

	regions  map[uint32]*wireRegion
	nextAddr uint64
	nextKey  uint32

	recvs               []recvWire // ring
	recvHead, recvCount int

	sqDepth           int
	postSeq, freedSeq uint64
	// unacked are RC requests sent and not yet acknowledged, oldest first.
	unacked             []pendingWR // ring
	unackHead, unackLen int

	cq              []cqEntry // ring
	cqHead, cqCount int
	events          []Event
	notify          chan struct{}

	// held are RC messages that arrived while no receive was posted, in
	// order; later ones wait behind them.
	held [][]byte

	// out is what the writer goroutine sends next; outCond wakes it.
	out     []byte
	spare   []byte
	outCond *sync.Cond
	wdone   chan struct{}
	rdone   chan struct{}

	violations int
	dropped    int
}

type wireRegion struct {
	owner       *WireQP
	buf         []byte
	addr        uint64
	rkey        uint32
	remoteWrite bool
}

func (r *wireRegion) Bytes() []byte { return r.buf }
func (r *wireRegion) Addr() uint64  { return r.addr }
func (r *wireRegion) RKey() uint32  { return r.rkey }

type recvWire struct {
	id     uint64
	region *wireRegion
	off, n int
}

type pendingWR struct {
	id       uint64
	op       Op
	n        int
	signaled bool
	seq      uint64
}

// NewWireQP makes an unconnected queue pair of type t over sock, which it
// owns from then on. seed spreads the rkeys (each side its own).
func NewWireQP(sock net.Conn, t QPType, o WireOptions, seed uint32) *WireQP {
	if o.SendQueueDepth <= 0 {
		o.SendQueueDepth = 1024
	}
	if o.RecvQueueDepth <= 0 {
		o.RecvQueueDepth = 1024
	}
	q := &WireQP{
		typ: t, sock: sock,
		regions:  map[uint32]*wireRegion{},
		nextAddr: 0x10000, nextKey: seed | 1,
		recvs:   make([]recvWire, o.RecvQueueDepth),
		sqDepth: o.SendQueueDepth,
		unacked: make([]pendingWR, o.SendQueueDepth),
		cq:      make([]cqEntry, o.SendQueueDepth+o.RecvQueueDepth),
		notify:  make(chan struct{}, 1),
		wdone:   make(chan struct{}),
		rdone:   make(chan struct{}),
	}
	q.outCond = sync.NewCond(&q.mu)
	return q
}

// Establish moves the queue pair to the connected state, gives
// EventEstablished and starts moving messages.
func (q *WireQP) Establish() {
	q.mu.Lock()
	if q.state == qpInit {
		q.state = qpReady
		q.event(EventEstablished)
	}
	q.mu.Unlock()
	go q.writer()
	go q.reader()
}

// Violations is how many UC messages broke the rules and were dropped.
func (q *WireQP) Violations() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.violations
}

// Dropped is how many UC messages found no receive posted and were
// dropped, as UC hardware drops them.
func (q *WireQP) Dropped() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.dropped
}

// Type implements QP.
func (q *WireQP) Type() QPType { return q.typ }

// SendQueueDepth implements QP.
func (q *WireQP) SendQueueDepth() int { return q.sqDepth }

// RecvQueueDepth implements QP.
func (q *WireQP) RecvQueueDepth() int { return len(q.recvs) }

// Notify implements QP.
func (q *WireQP) Notify() <-chan struct{} { return q.notify }

// Register implements QP. Addresses are page-aligned with a gap between
// regions, so an off-by-one past a region's end hits no other region.
func (q *WireQP) Register(size int, remoteWrite bool) (Region, error) {
	if size <= 0 || size > maxFrame+MsgSize*(RecvSlots+1<<16) {
		return nil, fmt.Errorf("rdma: register %d bytes: size out of range", size)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.state == qpClosed {
		return nil, ErrQPState
	}
	r := &wireRegion{owner: q, buf: make([]byte, size), addr: q.nextAddr, remoteWrite: remoteWrite}
	q.nextAddr += (uint64(size)+4095)&^4095 + 4096
	q.nextKey = q.nextKey*1664525 + 1013904223
	r.rkey = q.nextKey
	q.regions[r.rkey] = r
	return r, nil
}

// Deregister implements QP.
func (q *WireQP) Deregister(r Region) error {
	wr, ok := r.(*wireRegion)
	if !ok || wr.owner != q {
		return errors.New("rdma: deregister: not a region of this queue pair")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.regions, wr.rkey)
	return nil
}

func (q *WireQP) local(r Region, off, n int) (*wireRegion, error) {
	wr, ok := r.(*wireRegion)
	if !ok || wr.owner != q || q.regions[wr.rkey] != wr || off < 0 || n < 0 || off > len(wr.buf)-n {
		return nil, ErrLocalRegion
	}
	return wr, nil
}

// PostRecv implements QP; receives may be posted before Establish.
func (q *WireQP) PostRecv(wrID uint64, r Region, off, n int) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.state != qpInit && q.state != qpReady {
		return ErrQPState
	}
	wr, err := q.local(r, off, n)
	if err != nil {
		return err
	}
	if q.recvCount == len(q.recvs) {
		return ErrQueueFull
	}
	q.recvs[(q.recvHead+q.recvCount)%len(q.recvs)] = recvWire{id: wrID, region: wr, off: off, n: n}
	q.recvCount++
	for len(q.held) > 0 && q.recvCount > 0 && q.state == qpReady {
		m := q.held[0]
		q.held = q.held[1:]
		q.deliver(m)
	}
	return nil
}

// PostSend implements QP.
func (q *WireQP) PostSend(wrID uint64, r Region, off, n int, signaled bool) error {
	return q.post(frameSend, wrID, r, off, n, 0, 0, 0, signaled)
}

// PostWriteImm implements QP.
func (q *WireQP) PostWriteImm(wrID uint64, r Region, off, n int, remoteAddr uint64, rkey, imm uint32, signaled bool) error {
	return q.post(frameWrite, wrID, r, off, n, remoteAddr, rkey, imm, signaled)
}

// post queues the message for the writer goroutine: the payload is copied
// now, as the adapter would have read it by the time the request
// completes, and the caller reuses its buffer only after that.
func (q *WireQP) post(kind uint8, wrID uint64, r Region, off, n int, raddr uint64, rkey, imm uint32, signaled bool) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.state != qpReady {
		return ErrQPState
	}
	src, err := q.local(r, off, n)
	if err != nil {
		return err
	}
	if q.postSeq-q.freedSeq >= uint64(q.sqDepth) {
		return ErrQueueFull
	}
	q.postSeq++
	op := OpSend
	if kind == frameWrite {
		op = OpWrite
	}
	f := frame{kind: kind, imm: imm, rkey: rkey, n: uint32(n), raddr: raddr}
	q.queue(&f, src.buf[off:off+n])
	w := pendingWR{id: wrID, op: op, n: n, signaled: signaled, seq: q.postSeq}
	if q.typ == RC {
		q.unacked[(q.unackHead+q.unackLen)%len(q.unacked)] = w
		q.unackLen++
	} else if signaled {
		// UC: complete once on the way; nobody will say more.
		q.complete(Completion{WRID: wrID, Op: op, ByteLen: uint32(n)}, w.seq)
	}
	return nil
}

// queue appends a frame to what the writer sends next.
func (q *WireQP) queue(f *frame, payload []byte) {
	var h [frameHeader]byte
	f.put(h[:])
	q.out = append(q.out, h[:]...)
	q.out = append(q.out, payload...)
	q.outCond.Signal()
}

// writer sends what post queued, swapping buffers so posting never waits
// for the socket (both sides posting while neither reads would deadlock).
func (q *WireQP) writer() {
	defer close(q.wdone)
	for {
		q.mu.Lock()
		for len(q.out) == 0 && q.state != qpClosed && q.sock != nil {
			q.outCond.Wait()
		}
		if len(q.out) == 0 {
			q.mu.Unlock()
			return
		}
		b := q.out
		q.out, q.spare = q.spare[:0], nil
		q.mu.Unlock()
		_, err := q.sock.Write(b)
		q.mu.Lock()
		q.spare = b[:0]
		if err != nil {
			q.lost()
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
	}
}

// reader takes the peer's frames and applies them.
func (q *WireQP) reader() {
	defer close(q.rdone)
	var h [frameHeader]byte
	var buf []byte
	for {
		if _, err := io.ReadFull(q.sock, h[:]); err != nil {
			q.mu.Lock()
			q.lost()
			q.mu.Unlock()
			return
		}
		var f frame
		f.parse(h[:])
		if f.kind == frameSend || f.kind == frameWrite {
			if f.n > maxFrame {
				q.mu.Lock()
				q.lost()
				q.mu.Unlock()
				return
			}
			if cap(buf) < frameHeader+int(f.n) {
				buf = make([]byte, frameHeader+int(f.n))
			}
			buf = buf[:frameHeader+int(f.n)]
			copy(buf, h[:])
			if _, err := io.ReadFull(q.sock, buf[frameHeader:]); err != nil {
				q.mu.Lock()
				q.lost()
				q.mu.Unlock()
				return
			}
		}
		q.mu.Lock()
		switch f.kind {
		case frameSend, frameWrite:
			if q.state != qpReady {
				// A queue pair in the error state answers nothing: the
				// sender's RC request runs out of retries.
				if q.typ == RC {
					q.ack(StatusRetryExceeded)
				}
			} else if len(q.held) > 0 || (q.recvCount == 0 && q.typ == RC) {
				q.held = append(q.held, append([]byte(nil), buf...))
			} else {
				q.deliver(buf)
			}
		case frameAck:
			q.acked(f.status)
		case frameDisconnect:
			q.toError()
			q.disconnected()
		default:
			// Not our peer, or a broken one: as a link that failed.
			q.lost()
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
	}
}

// deliver applies one arrived message (header and payload in m); RC
// acknowledges it with its outcome.
func (q *WireQP) deliver(m []byte) {
	var f frame
	f.parse(m)
	data := m[frameHeader:]
	var dst *wireRegion
	if f.kind == frameWrite {
		dst = q.regions[f.rkey]
		if dst == nil || !dst.remoteWrite || f.raddr < dst.addr || f.raddr-dst.addr > uint64(len(dst.buf)) || uint64(f.n) > uint64(len(dst.buf))-(f.raddr-dst.addr) {
			if q.typ == RC {
				q.ack(StatusRemoteAccess)
			} else {
				q.violations++
			}
			return
		}
	}
	if q.recvCount == 0 {
		// UC: dropped at the receiver (RC never gets here: held).
		q.dropped++
		return
	}
	rw := q.recvs[q.recvHead]
	if f.kind == frameSend && int(f.n) > rw.n {
		if q.typ == RC {
			q.recvHead = (q.recvHead + 1) % len(q.recvs)
			q.recvCount--
			q.complete(Completion{WRID: rw.id, Op: OpRecv, Status: StatusLocalLength}, 0)
			q.ack(StatusRemoteInvalidRequest)
			q.toError()
		}
		return
	}
	q.recvHead = (q.recvHead + 1) % len(q.recvs)
	q.recvCount--
	if f.kind == frameSend {
		copy(rw.region.buf[rw.off:], data)
		q.complete(Completion{WRID: rw.id, Op: OpRecv, ByteLen: f.n}, 0)
	} else {
		copy(dst.buf[f.raddr-dst.addr:], data)
		q.complete(Completion{WRID: rw.id, Op: OpRecvWriteImm, ByteLen: f.n, Imm: f.imm}, 0)
	}
	if q.typ == RC {
		q.ack(StatusSuccess)
	}
}

func (q *WireQP) ack(s Status) {
	f := frame{kind: frameAck, status: s}
	q.queue(&f, nil)
}

// acked completes the oldest unacknowledged request with the peer's word.
func (q *WireQP) acked(s Status) {
	if q.unackLen == 0 {
		return
	}
	w := q.unacked[q.unackHead]
	q.unackHead = (q.unackHead + 1) % len(q.unacked)
	q.unackLen--
	if s != StatusSuccess {
		q.complete(Completion{WRID: w.id, Op: w.op, Status: s}, w.seq)
		q.toError()
		return
	}
	if w.signaled {
		q.complete(Completion{WRID: w.id, Op: w.op, ByteLen: uint32(w.n)}, w.seq)
	}
}

// lost: the socket failed, as a peer that vanished. RC requests on their
// way run out of retries; both kinds learn of the disconnect.
func (q *WireQP) lost() {
	if q.typ == RC {
		for q.unackLen > 0 && q.state == qpReady {
			q.acked(StatusRetryExceeded)
		}
	}
	q.toError()
	q.disconnected()
	q.outCond.Broadcast()
}

func (q *WireQP) complete(wc Completion, seq uint64) {
	if q.state == qpClosed {
		return
	}
	if q.cqCount == len(q.cq) {
		last := (q.cqHead + q.cqCount - 1) % len(q.cq)
		q.cq[last] = cqEntry{wc: Completion{Op: wc.Op, Status: StatusCQOverrun}}
		q.toError()
		return
	}
	q.cq[(q.cqHead+q.cqCount)%len(q.cq)] = cqEntry{wc: wc, seq: seq}
	q.cqCount++
	q.wake()
}

// toError moves the queue pair to the error state, flushing posted
// receives and requests not yet acknowledged.
func (q *WireQP) toError() {
	if q.state != qpInit && q.state != qpReady {
		return
	}
	q.state = qpError
	for q.recvCount > 0 {
		rw := q.recvs[q.recvHead]
		q.recvHead = (q.recvHead + 1) % len(q.recvs)
		q.recvCount--
		if q.cqCount < len(q.cq) {
			q.cq[(q.cqHead+q.cqCount)%len(q.cq)] = cqEntry{wc: Completion{WRID: rw.id, Op: OpRecv, Status: StatusFlushed}}
			q.cqCount++
		}
	}
	for q.unackLen > 0 {
		w := q.unacked[q.unackHead]
		q.unackHead = (q.unackHead + 1) % len(q.unacked)
		q.unackLen--
		if q.cqCount < len(q.cq) {
			q.cq[(q.cqHead+q.cqCount)%len(q.cq)] = cqEntry{wc: Completion{WRID: w.id, Op: w.op, Status: StatusFlushed}, seq: w.seq}
			q.cqCount++
		}
	}
	q.held = nil
	q.wake()
}

func (q *WireQP) event(e Event) {
	q.events = append(q.events, e)
	q.wake()
}

func (q *WireQP) disconnected() {
	if !q.gone {
		q.gone = true
		q.event(EventDisconnected)
	}
}

func (q *WireQP) wake() {
	select {
	case q.notify <- struct{}{}:
	default:
	}
}

// Poll implements QP.
func (q *WireQP) Poll(wc []Completion) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for n < len(wc) && q.cqCount > 0 {
		e := q.cq[q.cqHead]
		q.cqHead = (q.cqHead + 1) % len(q.cq)
		q.cqCount--
		if e.seq > q.freedSeq {
			q.freedSeq = e.seq
		}
		wc[n] = e.wc
		n++
	}
	return n, nil
}

// PollEvent implements QP.
func (q *WireQP) PollEvent() (Event, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.events) == 0 {
		return 0, false
	}
	e := q.events[0]
	q.events = append(q.events[:0], q.events[1:]...)
	return e, true
}

// Disconnect implements QP: the peer is told, both sides go to the error
// state and get EventDisconnected.
func (q *WireQP) Disconnect() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.state != qpReady && q.state != qpError {
		return nil
	}
	if !q.gone {
		f := frame{kind: frameDisconnect}
		q.queue(&f, nil)
	}
	q.toError()
	q.disconnected()
	return nil
}

// Close implements QP: it disconnects, lets the writer send what is
// queued (the disconnect among it), and closes the socket.
func (q *WireQP) Close() error {
	q.Disconnect()
	q.mu.Lock()
	started := q.state != qpInit
	q.state = qpClosed
	clear(q.regions)
	q.outCond.Broadcast()
	q.mu.Unlock()
	if started {
		// A peer that stopped reading must not hold Close for ever: the
		// disconnect gets a second to go out.
		q.sock.SetWriteDeadline(time.Now().Add(time.Second))
		<-q.wdone
	}
	err := q.sock.Close()
	if started {
		<-q.rdone
	}
	return err
}
