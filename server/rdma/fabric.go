package rdma

import (
	"fmt"
	"sync"
)

// Fabric is an in-memory RDMA network for tests: queue pairs connected in
// pairs, whose operations run at post time under one lock and follow the
// hardware's rules, so a protocol bug shows as the error real adapters
// give rather than as bytes quietly landing somewhere:
//
//   - an RDMA WRITE must land inside a region the peer registered for
//     remote write, under that region's rkey; otherwise RC fails it with
//     StatusRemoteAccess and the writer's queue pair goes to the error
//     state, UC drops it (and Violations counts it);
//   - a SEND or WRITE WITH IMM consumes a receive the peer posted; with
//     none posted, UC drops it, and RC waits for one (rnr_retry_count 7)
//     or, with StrictRNR, fails it (StatusRNRRetryExceeded, error state);
//   - posts beyond the send or receive queue's depth fail with
//     ErrQueueFull, and send-queue slots of unsignaled requests are freed
//     only when a later signaled completion is polled, as on hardware;
//   - completions come out in order, and a completion queue that
//     overflows puts its queue pair in the error state;
//   - on UC, a fault hook may drop or truncate a message (Fault); RC never
//     loses anything but may be severed (Sever), after which its requests
//     fail with StatusRetryExceeded.
type Fabric struct {
	mu       sync.Mutex
	nextAddr uint64
	nextKey  uint32
	// violations counts UC writes that broke the rules and were dropped.
	violations int
}

// NewFabric returns an empty fabric.
func NewFabric() *Fabric {
	return &Fabric{nextAddr: 0x7f0000000000, nextKey: 0x1234567}
}

// FaultKind is what a UC fault hook does to one message.
type FaultKind uint8

const (
	// Deliver the message untouched.
	Deliver FaultKind = iota
	// Drop the message: nothing lands, no completion at the peer.
	Drop
	// Truncate places the first Keep bytes of a write and loses the rest
	// with its immediate: what a UC message that loses a packet after its
	// first does. No completion at the peer.
	Truncate
)

func (k FaultKind) String() string {
	switch k {
	case Deliver:
		return "deliver"
	case Drop:
		return "drop"
	case Truncate:
		return "truncate"
	}
	return fmt.Sprintf("fault %d", uint8(k))
}

// Fault is a fault hook's verdict on one message.
type Fault struct {
	Kind FaultKind
	Keep int
}

// Message describes a message a fault hook is asked about.
type Message struct {
	// Op is OpSend or OpWrite.
	Op Op
	// Seq counts the messages this queue pair posted, from 1.
	Seq int
	Len int
	// Data is the message's bytes, for looking only.
	Data []byte
}

// Link is a connected pair of fabric queue pairs, not yet established:
// wrap each in a Conn (which posts its receives), then Establish.
type Link struct {
	Client, Server *FabricQP
}

// FabricOptions size a link's queues; zero values take Valkey's.
type FabricOptions struct {
	SendQueueDepth int // default 1024
	RecvQueueDepth int // default 1024
	CQDepth        int // default 2048 (both queues share one CQ)
	// StrictRNR makes an RC message that finds no receive posted fail at
	// once (rnr_retry_count 0). Without it the message waits, in order,
	// until the peer posts one: rnr_retry_count 7, "retry for ever",
	// which is what libvalkey asks for and what Valkey's protocol, having
	// no credits, relies on.
	StrictRNR bool
}

// Pair makes two connected queue pairs of type t.
func (f *Fabric) Pair(t QPType, o FabricOptions) *Link {
	if o.SendQueueDepth <= 0 {
		o.SendQueueDepth = 1024
	}
	if o.RecvQueueDepth <= 0 {
		o.RecvQueueDepth = 1024
	}
	if o.CQDepth <= 0 {
		o.CQDepth = o.SendQueueDepth + o.RecvQueueDepth
	}
	a, b := f.newQP(t, o), f.newQP(t, o)
	a.peer, b.peer = b, a
	return &Link{Client: a, Server: b}
}

// Establish moves both queue pairs to the connected state and gives each
// EventEstablished, as rdma_cm does once the server accepted.
func (l *Link) Establish() {
	f := l.Client.f
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, q := range []*FabricQP{l.Client, l.Server} {
		if q.state == qpInit {
			q.state = qpReady
			q.event(EventEstablished)
		}
	}
}

// Sever cuts the link without telling either side, as a dead host or a
// pulled cable does: RC requests fail with StatusRetryExceeded (the
// queue pair goes to the error state), UC messages vanish.
func (l *Link) Sever() {
	f := l.Client.f
	f.mu.Lock()
	defer f.mu.Unlock()
	l.Client.severed, l.Server.severed = true, true
}

// Violations is how many UC writes broke the rules (outside a region,
// wrong rkey) and were dropped, as UC hardware drops them.
func (f *Fabric) Violations() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.violations
}

type qpState uint8

const (
	qpInit qpState = iota
	qpReady
	qpError
	qpClosed
)

// FabricQP is one side of a Link; it implements QP.
type FabricQP struct {
	f     *Fabric
	peer  *FabricQP
	typ   QPType
	state qpState
	// severed: the link is cut (Sever).
	severed bool
	// gone: EventDisconnected was given.
	gone bool

	regions map[uint32]*fabricRegion

	recvs     []recvWR // ring
	recvHead  int
	recvCount int
	sqDepth   int
	postSeq   uint64    // send requests posted
	freedSeq  uint64    // send requests known complete
	cq        []cqEntry // ring
	cqHead    int
	cqCount   int
	events    []Event
	notify    chan struct{}
	msgSeq    int
	fault     func(Message) Fault
	// waiting are RC requests held back until the peer posts receives.
	waiting             []sendWR // ring
	waitHead, waitCount int
	strictRNR           bool
	draining            bool
	eventsBacked        [4]Event
}

type recvWR struct {
	id     uint64
	region *fabricRegion
	off, n int
}

type cqEntry struct {
	wc Completion
	// seq is the send request this completion frees the queue up to (0
	// for receive completions).
	seq uint64
}

type fabricRegion struct {
	owner       *FabricQP
	buf         []byte
	addr        uint64
	rkey        uint32
	remoteWrite bool
}

func (r *fabricRegion) Bytes() []byte { return r.buf }
func (r *fabricRegion) Addr() uint64  { return r.addr }
func (r *fabricRegion) RKey() uint32  { return r.rkey }

func (f *Fabric) newQP(t QPType, o FabricOptions) *FabricQP {
	q := &FabricQP{
		f:         f,
		typ:       t,
		regions:   map[uint32]*fabricRegion{},
		recvs:     make([]recvWR, o.RecvQueueDepth),
		sqDepth:   o.SendQueueDepth,
		waiting:   make([]sendWR, o.SendQueueDepth),
		strictRNR: o.StrictRNR,
		cq:        make([]cqEntry, o.CQDepth),
		notify:    make(chan struct{}, 1),
	}
	q.events = q.eventsBacked[:0]
	return q
}

// SetFault installs a hook asked about every message this queue pair
// posts; it applies to UC only (RC never loses a message) and panics on
// RC, since a test doing that tests nothing.
func (q *FabricQP) SetFault(h func(Message) Fault) {
	if q.typ != UC {
		panic("rdma: fault hooks apply to UC queue pairs only")
	}
	q.f.mu.Lock()
	defer q.f.mu.Unlock()
	q.fault = h
}

// Type implements QP.
func (q *FabricQP) Type() QPType { return q.typ }

// SendQueueDepth implements QP.
func (q *FabricQP) SendQueueDepth() int { return q.sqDepth }

// RecvQueueDepth implements QP.
func (q *FabricQP) RecvQueueDepth() int { return len(q.recvs) }

// Notify implements QP.
func (q *FabricQP) Notify() <-chan struct{} { return q.notify }

// Register implements QP. Addresses are page-aligned with a gap between
// regions, so an off-by-one past a region's end hits no other region.
func (q *FabricQP) Register(size int, remoteWrite bool) (Region, error) {
	if size <= 0 {
		return nil, fmt.Errorf("rdma: register %d bytes: size must be positive", size)
	}
	f := q.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if q.state == qpClosed {
		return nil, ErrQPState
	}
	r := &fabricRegion{owner: q, buf: make([]byte, size), addr: f.nextAddr, remoteWrite: remoteWrite}
	f.nextAddr += (uint64(size)+4095)&^4095 + 4096
	// Spread the keys so a stale or made-up key is unlikely to be valid.
	f.nextKey = f.nextKey*1664525 + 1013904223
	r.rkey = f.nextKey
	q.regions[r.rkey] = r
	return r, nil
}

// Deregister implements QP.
func (q *FabricQP) Deregister(r Region) error {
	fr, ok := r.(*fabricRegion)
	if !ok || fr.owner != q {
		return fmt.Errorf("rdma: deregister: not a region of this queue pair")
	}
	q.f.mu.Lock()
	defer q.f.mu.Unlock()
	delete(q.regions, fr.rkey)
	return nil
}

func (q *FabricQP) local(r Region, off, n int) (*fabricRegion, error) {
	fr, ok := r.(*fabricRegion)
	if !ok || fr.owner != q || q.regions[fr.rkey] != fr || off < 0 || n < 0 || off > len(fr.buf)-n {
		return nil, ErrLocalRegion
	}
	return fr, nil
}

// PostRecv implements QP. Receives may be posted before the connection is
// established, as the protocol must (the peer may SEND at once).
func (q *FabricQP) PostRecv(wrID uint64, r Region, off, n int) error {
	q.f.mu.Lock()
	defer q.f.mu.Unlock()
	if q.state != qpInit && q.state != qpReady {
		return ErrQPState
	}
	fr, err := q.local(r, off, n)
	if err != nil {
		return err
	}
	if q.recvCount == len(q.recvs) {
		return ErrQueueFull
	}
	q.recvs[(q.recvHead+q.recvCount)%len(q.recvs)] = recvWR{id: wrID, region: fr, off: off, n: n}
	q.recvCount++
	q.peer.drain()
	return nil
}

// PostSend implements QP.
func (q *FabricQP) PostSend(wrID uint64, r Region, off, n int, signaled bool) error {
	return q.post(OpSend, wrID, r, off, n, 0, 0, 0, signaled)
}

// PostWriteImm implements QP.
func (q *FabricQP) PostWriteImm(wrID uint64, r Region, off, n int, remoteAddr uint64, rkey, imm uint32, signaled bool) error {
	return q.post(OpWrite, wrID, r, off, n, remoteAddr, rkey, imm, signaled)
}

func (q *FabricQP) post(op Op, wrID uint64, r Region, off, n int, raddr uint64, rkey, imm uint32, signaled bool) error {
	q.f.mu.Lock()
	defer q.f.mu.Unlock()
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
	q.msgSeq++
	w := sendWR{op: op, id: wrID, src: src, off: off, n: n, raddr: raddr, rkey: rkey, imm: imm, signaled: signaled, seq: q.postSeq, msgSeq: q.msgSeq}
	if q.waitCount > 0 || !q.execute(&w) {
		// Behind a request waiting for a receive: RC keeps order.
		q.waiting[(q.waitHead+q.waitCount)%len(q.waiting)] = w
		q.waitCount++
	}
	return nil
}

// sendWR is a posted SEND or WRITE WITH IMM.
type sendWR struct {
	op        Op
	id        uint64
	src       *fabricRegion
	off, n    int
	raddr     uint64
	rkey, imm uint32
	signaled  bool
	seq       uint64
	msgSeq    int
}

// drain runs the requests that were waiting for the peer to post
// receives, in order, as far as receives allow.
func (q *FabricQP) drain() {
	// A request failing here can put the peer in the error state, which
	// drains us again: the outer loop goes on.
	if q.draining {
		return
	}
	q.draining = true
	defer func() { q.draining = false }()
	for q.waitCount > 0 && q.state == qpReady {
		if !q.execute(&q.waiting[q.waitHead]) {
			return
		}
		q.waitHead = (q.waitHead + 1) % len(q.waiting)
		q.waitCount--
	}
}

// execute runs one request; false when RC must wait for the peer to post
// a receive (RNR retry without limit), the request not started.
func (q *FabricQP) execute(w *sendWR) bool {
	data := w.src.buf[w.off : w.off+w.n]
	if q.severed || q.peer.state != qpReady {
		if q.typ == RC {
			q.fail(w, StatusRetryExceeded)
			return true
		}
		q.sent(w)
		return true
	}
	p := q.peer
	var dst *fabricRegion
	if w.op == OpWrite {
		dst = p.regions[w.rkey]
		if dst == nil || !dst.remoteWrite || w.raddr < dst.addr || w.raddr-dst.addr > uint64(len(dst.buf)) || uint64(w.n) > uint64(len(dst.buf))-(w.raddr-dst.addr) {
			if q.typ == RC {
				q.fail(w, StatusRemoteAccess)
				return true
			}
			q.f.violations++
			q.sent(w)
			return true
		}
	}
	if p.recvCount == 0 && q.typ == RC && !q.strictRNR {
		return false
	}
	fault := Fault{}
	if q.fault != nil {
		fault = q.fault(Message{Op: w.op, Seq: w.msgSeq, Len: w.n, Data: data})
	}
	switch fault.Kind {
	case Drop:
		q.sent(w)
		return true
	case Truncate:
		if w.op == OpWrite && fault.Keep > 0 {
			at := int(w.raddr - dst.addr)
			copy(dst.buf[at:at+min(fault.Keep, w.n)], data)
		}
		q.sent(w)
		return true
	}
	if p.recvCount == 0 {
		if q.typ == RC {
			q.fail(w, StatusRNRRetryExceeded)
			return true
		}
		q.sent(w) // UC: dropped at the receiver
		return true
	}
	rw := p.recvs[p.recvHead]
	if w.op == OpSend && w.n > rw.n {
		if q.typ == RC {
			p.recvHead = (p.recvHead + 1) % len(p.recvs)
			p.recvCount--
			p.complete(Completion{WRID: rw.id, Op: OpRecv, Status: StatusLocalLength}, 0)
			p.toError()
			q.fail(w, StatusRemoteInvalidRequest)
			return true
		}
		q.sent(w)
		return true
	}
	p.recvHead = (p.recvHead + 1) % len(p.recvs)
	p.recvCount--
	if w.op == OpSend {
		copy(rw.region.buf[rw.off:], data)
		p.complete(Completion{WRID: rw.id, Op: OpRecv, ByteLen: uint32(w.n)}, 0)
	} else {
		at := int(w.raddr - dst.addr)
		copy(dst.buf[at:], data)
		p.complete(Completion{WRID: rw.id, Op: OpRecvWriteImm, ByteLen: uint32(w.n), Imm: w.imm}, 0)
	}
	q.sent(w)
	return true
}

// sent records a request that left: a completion if signaled.
func (q *FabricQP) sent(w *sendWR) {
	if w.signaled {
		q.complete(Completion{WRID: w.id, Op: w.op, ByteLen: uint32(w.n)}, w.seq)
	}
}

// fail completes a request with an error (errors always complete, signaled
// or not) and puts the queue pair in the error state.
func (q *FabricQP) fail(w *sendWR, s Status) {
	q.complete(Completion{WRID: w.id, Op: w.op, Status: s}, w.seq)
	q.toError()
}

func (q *FabricQP) complete(wc Completion, seq uint64) {
	if q.state == qpClosed {
		return
	}
	if q.cqCount == len(q.cq) {
		// The overrun is reported in place of the completion that did
		// not fit, since there is no room for both.
		last := (q.cqHead + q.cqCount - 1) % len(q.cq)
		q.cq[last] = cqEntry{wc: Completion{Op: wc.Op, Status: StatusCQOverrun}}
		q.toError()
		return
	}
	q.cq[(q.cqHead+q.cqCount)%len(q.cq)] = cqEntry{wc: wc, seq: seq}
	q.cqCount++
	q.wake()
}

// toError moves the queue pair to the error state, flushing the posted
// receives.
func (q *FabricQP) toError() {
	if q.state != qpInit && q.state != qpReady {
		return
	}
	q.state = qpError
	for q.recvCount > 0 {
		rw := q.recvs[q.recvHead]
		q.recvHead = (q.recvHead + 1) % len(q.recvs)
		q.recvCount--
		if q.cqCount == len(q.cq) {
			continue
		}
		q.cq[(q.cqHead+q.cqCount)%len(q.cq)] = cqEntry{wc: Completion{WRID: rw.id, Op: OpRecv, Status: StatusFlushed}}
		q.cqCount++
	}
	for q.waitCount > 0 {
		w := q.waiting[q.waitHead]
		q.waitHead = (q.waitHead + 1) % len(q.waiting)
		q.waitCount--
		if q.cqCount < len(q.cq) {
			q.cq[(q.cqHead+q.cqCount)%len(q.cq)] = cqEntry{wc: Completion{WRID: w.id, Op: w.op, Status: StatusFlushed}, seq: w.seq}
			q.cqCount++
		}
	}
	q.wake()
	// The peer's requests waiting for our receives now fail.
	q.peer.drain()
}

func (q *FabricQP) event(e Event) {
	q.events = append(q.events, e)
	q.wake()
}

func (q *FabricQP) wake() {
	select {
	case q.notify <- struct{}{}:
	default:
	}
}

// Poll implements QP.
func (q *FabricQP) Poll(wc []Completion) (int, error) {
	q.f.mu.Lock()
	defer q.f.mu.Unlock()
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
func (q *FabricQP) PollEvent() (Event, bool) {
	q.f.mu.Lock()
	defer q.f.mu.Unlock()
	if len(q.events) == 0 {
		return 0, false
	}
	e := q.events[0]
	q.events = append(q.events[:0], q.events[1:]...)
	return e, true
}

// Disconnect implements QP: both sides go to the error state and get
// EventDisconnected, unless the link is severed (then only this side
// learns of it, as a peer that cannot be reached is not told).
func (q *FabricQP) Disconnect() error {
	q.f.mu.Lock()
	defer q.f.mu.Unlock()
	q.disconnect()
	return nil
}

func (q *FabricQP) disconnect() {
	if q.state != qpReady && q.state != qpError {
		return
	}
	q.toError()
	q.disconnected()
	if p := q.peer; !q.severed && (p.state == qpReady || p.state == qpError) {
		p.toError()
		p.disconnected()
	}
}

// disconnected gives EventDisconnected once.
func (q *FabricQP) disconnected() {
	if !q.gone {
		q.gone = true
		q.event(EventDisconnected)
	}
}

// Close implements QP.
func (q *FabricQP) Close() error {
	q.f.mu.Lock()
	defer q.f.mu.Unlock()
	q.disconnect()
	q.state = qpClosed
	clear(q.regions)
	return nil
}
