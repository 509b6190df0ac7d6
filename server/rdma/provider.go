//go:build rdma && cgo

package rdma

/*
#cgo CFLAGS: -O2 -Wall
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "dplverbs.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"runtime"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// This file is the cgo provider (build tag rdma): QP over the C layer of
// dplverbs.h, whose implementation the build picks (dplverbs_rdmacore.c:
// rdma-core through dlopen; dplverbs_sim.c with rdmasim: the same verbs
// over Unix sockets, for tests), and the listener and dialer that give
// net.Listener and net.Conn as sim.go does for the Go simulation.

func (o *ProviderOptions) c() C.struct_dpl_opts {
	t := o.Type
	if t == 0 {
		t = RC
	}
	return C.struct_dpl_opts{
		_type: C.int(t), sq_size: C.int(o.SendQueueDepth), rq_size: C.int(o.RecvQueueDepth),
		inline_size: C.int(o.InlineSize), retry_count: C.int(o.RetryCount), comp_vector: C.int(o.CompletionVector),
	}
}

func init() {
	buildProvider = func() (string, error) { return ProviderName, ProviderReady() }
}

var (
	providerOnce sync.Once
	providerErr  error
)

// ProviderReady says whether this host can use the cgo provider: nil, or
// what it lacks (rdma-core's libraries, an RDMA device; the simulated
// build lacks nothing).
func ProviderReady() error {
	providerOnce.Do(func() {
		if providerErr = providerCheck(); providerErr != nil {
			return
		}
		var e [C.DPL_ERRLEN]C.char
		if C.dpl_init(&e[0], C.DPL_ERRLEN) != 0 {
			providerErr = fmt.Errorf("rdma-core: %s", C.GoString(&e[0]))
		}
	})
	if providerErr != nil {
		return providerErr
	}
	return providerDevice()
}

func cErr(e []C.char) error {
	return errors.New(C.GoString(&e[0]))
}

// cQP implements QP over the C layer.
type cQP struct {
	mu     sync.Mutex
	h      *C.dpl_qp
	typ    QPType
	sq, rq int
	poll   time.Duration
	closed bool

	// ring holds completions the completion goroutine took from the C
	// queue before the Conn asked; Poll hands them out first.
	ring              []Completion
	ringHead, ringLen int
	events            []Event
	cwc               [64]C.struct_dpl_wc

	notify  chan struct{}
	space   chan struct{}
	done    chan struct{}
	started bool
}

func newCQP(h *C.dpl_qp, t QPType, poll time.Duration) *cQP {
	q := &cQP{
		h: h, typ: t, poll: poll,
		sq: int(C.dpl_sq_depth(h)), rq: int(C.dpl_rq_depth(h)),
		notify: make(chan struct{}, 1), space: make(chan struct{}, 1), done: make(chan struct{}),
	}
	q.ring = make([]Completion, q.sq+q.rq)
	return q
}

// cRegion is a region of the C layer: mmap'd memory off the Go heap.
type cRegion struct {
	mr    *C.struct_dpl_mr
	owner *cQP
	b     []byte
}

func (r *cRegion) Bytes() []byte { return r.b }
func (r *cRegion) Addr() uint64  { return uint64(r.mr.addr) }
func (r *cRegion) RKey() uint32  { return uint32(r.mr.rkey) }

// Type implements QP.
func (q *cQP) Type() QPType { return q.typ }

// SendQueueDepth implements QP.
func (q *cQP) SendQueueDepth() int { return q.sq }

// RecvQueueDepth implements QP.
func (q *cQP) RecvQueueDepth() int { return q.rq }

// Notify implements QP.
func (q *cQP) Notify() <-chan struct{} { return q.notify }

func wakeCh(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Register implements QP.
func (q *cQP) Register(size int, remoteWrite bool) (Region, error) {
	if size <= 0 {
		return nil, fmt.Errorf("rdma: register %d bytes: size out of range", size)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return nil, ErrQPState
	}
	var e [C.DPL_ERRLEN]C.char
	rw := C.int(0)
	if remoteWrite {
		rw = 1
	}
	mr := C.dpl_reg(q.h, C.size_t(size), rw, &e[0], C.DPL_ERRLEN)
	if mr == nil {
		return nil, fmt.Errorf("rdma: register %d bytes: %w", size, cErr(e[:]))
	}
	return &cRegion{mr: mr, owner: q, b: unsafe.Slice((*byte)(mr.buf), size)}, nil
}

// Deregister implements QP.
func (q *cQP) Deregister(r Region) error {
	cr, ok := r.(*cRegion)
	if !ok || cr.owner != q {
		return errors.New("rdma: deregister: not a region of this queue pair")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return nil // released with the queue pair
	}
	cr.b = nil
	if C.dpl_dereg(q.h, cr.mr) != 0 {
		return errors.New("rdma: deregister: not a region of this queue pair")
	}
	return nil
}

func postErr(rc C.int) error {
	switch rc {
	case 0:
		return nil
	case C.DPL_EQPSTATE:
		return ErrQPState
	case C.DPL_EFULL:
		return ErrQueueFull
	case C.DPL_ELOCAL:
		return ErrLocalRegion
	}
	return fmt.Errorf("rdma: post failed (%d)", int(rc))
}

func (q *cQP) region(r Region, off, n int) (*cRegion, error) {
	cr, ok := r.(*cRegion)
	if !ok || cr.owner != q || off < 0 || n < 0 || off > len(cr.b)-n {
		return nil, ErrLocalRegion
	}
	return cr, nil
}

// PostRecv implements QP.
func (q *cQP) PostRecv(wrID uint64, r Region, off, n int) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return ErrQPState
	}
	cr, err := q.region(r, off, n)
	if err != nil {
		return err
	}
	return postErr(C.dpl_post_recv(q.h, C.uint64_t(wrID), cr.mr, C.size_t(off), C.size_t(n)))
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// PostSend implements QP.
func (q *cQP) PostSend(wrID uint64, r Region, off, n int, signaled bool) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return ErrQPState
	}
	cr, err := q.region(r, off, n)
	if err != nil {
		return err
	}
	return postErr(C.dpl_post_send(q.h, C.uint64_t(wrID), cr.mr, C.size_t(off), C.size_t(n), cbool(signaled)))
}

// PostWriteImm implements QP.
func (q *cQP) PostWriteImm(wrID uint64, r Region, off, n int, remoteAddr uint64, rkey, imm uint32, signaled bool) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return ErrQPState
	}
	cr, err := q.region(r, off, n)
	if err != nil {
		return err
	}
	return postErr(C.dpl_post_write_imm(q.h, C.uint64_t(wrID), cr.mr, C.size_t(off), C.size_t(n),
		C.uint64_t(remoteAddr), C.uint32_t(rkey), C.uint32_t(imm), cbool(signaled)))
}

func completion(w *C.struct_dpl_wc) Completion {
	return Completion{WRID: uint64(w.wr_id), Op: Op(w.op), Status: Status(w.status), ByteLen: uint32(w.byte_len), Imm: uint32(w.imm)}
}

// Poll implements QP: what the completion goroutine took first, then the
// C queue itself.
func (q *cQP) Poll(wc []Completion) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for n < len(wc) && q.ringLen > 0 {
		wc[n] = q.ring[q.ringHead]
		q.ringHead = (q.ringHead + 1) % len(q.ring)
		q.ringLen--
		n++
	}
	if n > 0 {
		wakeCh(q.space)
	}
	if q.closed || n == len(wc) || q.ringLen > 0 {
		return n, nil
	}
	k := C.dpl_poll(q.h, &q.cwc[0], C.int(min(len(wc)-n, len(q.cwc))))
	if k < 0 {
		return n, postErr(k)
	}
	for i := range int(k) {
		wc[n] = completion(&q.cwc[i])
		n++
	}
	return n, nil
}

// PollEvent implements QP.
func (q *cQP) PollEvent() (Event, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.events) > 0 {
		e := q.events[0]
		q.events = append(q.events[:0], q.events[1:]...)
		return e, true
	}
	if q.closed {
		return 0, false
	}
	if e := C.dpl_event(q.h); e != C.DPL_EV_NONE {
		return Event(e), true
	}
	return 0, false
}

// pump moves what the C layer has (events, completions while the ring has
// room) to this side; under mu. It says whether anything came and whether
// the ring is full.
func (q *cQP) pump() (got, full bool) {
	for {
		e := C.dpl_event(q.h)
		if e == C.DPL_EV_NONE {
			break
		}
		q.events = append(q.events, Event(e))
		got = true
	}
	for q.ringLen < len(q.ring) {
		room := min(len(q.ring)-q.ringLen, len(q.cwc))
		k := int(C.dpl_poll(q.h, &q.cwc[0], C.int(room)))
		if k <= 0 {
			break
		}
		for i := range k {
			q.ring[(q.ringHead+q.ringLen)%len(q.ring)] = completion(&q.cwc[i])
			q.ringLen++
		}
		got = true
	}
	return got, q.ringLen == len(q.ring)
}

// run feeds Notify: it spins on the completion queue for the poll time
// after the last completion, then arms the queue's notification and
// sleeps on the C layer's fds (completion channel, connection events, a
// wake-up for Close).
func (q *cQP) run() {
	defer close(q.done)
	var last time.Time
	for {
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			return
		}
		got, full := q.pump()
		if !got && !full && (q.poll <= 0 || time.Since(last) >= q.poll) {
			// This goroutine owns the completion channel: it alone arms
			// the CQ and takes its notifications (in dpl_wait), so no
			// Poll from the Conn can eat the wake-up it sleeps on.
			C.dpl_arm(q.h)
			// A completion that came between the poll and the arm raised
			// no notification: look once more.
			got, full = q.pump()
			if !got && !full {
				h := q.h
				q.mu.Unlock()
				C.dpl_wait(h, -1)
				continue
			}
		}
		q.mu.Unlock()
		if got {
			last = time.Now()
			wakeCh(q.notify)
		}
		if full {
			select {
			case <-q.space:
			case <-time.After(10 * time.Millisecond):
			}
		} else if !got {
			runtime.Gosched() // spinning (rdma-poll-us)
		}
	}
}

// establish completes the connection and starts the completion goroutine.
func (q *cQP) establish(timeout time.Duration) error {
	var e [C.DPL_ERRLEN]C.char
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return ErrQPState
	}
	rc := C.dpl_establish(q.h, C.int(timeout.Milliseconds()), &e[0], C.DPL_ERRLEN)
	if rc == 0 {
		q.started = true
		go q.run()
	}
	q.mu.Unlock()
	if rc != 0 {
		return cErr(e[:])
	}
	wakeCh(q.notify)
	return nil
}

// Disconnect implements QP.
func (q *cQP) Disconnect() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return nil
	}
	C.dpl_disconnect(q.h)
	C.dpl_wake(q.h)
	return nil
}

// Close implements QP: the completion goroutine stops, then the C layer
// disconnects and releases everything (regions included).
func (q *cQP) Close() error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return nil
	}
	q.closed = true
	C.dpl_wake(q.h)
	started := q.started
	q.mu.Unlock()
	if started {
		<-q.done
	}
	q.mu.Lock()
	C.dpl_destroy(q.h)
	q.h = nil
	q.mu.Unlock()
	return nil
}

// cListener accepts connections through the C layer.
type cListener struct {
	listenerCore
	l    *C.dpl_listener
	o    ProviderOptions
	loop chan struct{}
	// alt listens on the same port for the other queue-pair type (RC and
	// UC ids live in different rdma_cm port spaces), only to refuse its
	// clients with the reason rather than leave them to a bare reject.
	alt     *C.dpl_listener
	altLoop chan struct{}
}

// Listen listens for RDMA connections on HOST:PORT through the cgo
// provider (port 0: a free one).
func Listen(addr string, o ProviderOptions) (net.Listener, error) {
	if err := ProviderReady(); err != nil {
		return nil, fmt.Errorf("rdma listen %s: %w", addr, err)
	}
	host, port, err := splitAddr("listen", addr)
	if err != nil {
		return nil, err
	}
	if o.Type == 0 {
		o.Type = RC
	}
	ch := C.CString(host)
	defer C.free(unsafe.Pointer(ch))
	var e [C.DPL_ERRLEN]C.char
	var bound C.int
	l := C.dpl_listen(ch, C.int(port), C.int(o.Type), &bound, &e[0], C.DPL_ERRLEN)
	if l == nil {
		return nil, fmt.Errorf("rdma listen %s: %w", addr, cErr(e[:]))
	}
	ln := &cListener{listenerCore: newListenerCore(Addr{host, int(bound)}, o.Type), l: l, o: o, loop: make(chan struct{})}
	ln.refused = o.Refused
	go ln.acceptLoop(ln.l, ln.loop)
	if ProviderSimulation == "" {
		// The simulation has one port space; rdma_cm has two.
		other := UC
		if o.Type == UC {
			other = RC
		}
		var altBound C.int
		if alt := C.dpl_listen(ch, bound, C.int(other), &altBound, &e[0], C.DPL_ERRLEN); alt != nil {
			ln.alt, ln.altLoop = alt, make(chan struct{})
			go ln.acceptLoop(alt, ln.altLoop)
		} else if o.Refused != nil {
			// Not fatal: a client of the other type is then rejected
			// without the reason.
			o.Refused("", fmt.Errorf("cannot listen for %s clients on port %d to tell them this server speaks %s: %s",
				strings.ToUpper(other.String()), int(bound), strings.ToUpper(o.Type.String()), C.GoString(&e[0])))
		}
	}
	return ln, nil
}

func (l *cListener) acceptLoop(cl *C.dpl_listener, loop chan struct{}) {
	defer close(loop)
	var e [C.DPL_ERRLEN]C.char
	for {
		select {
		case <-l.done:
			return
		default:
		}
		h := C.dpl_accept(cl, 1000, &e[0], C.DPL_ERRLEN)
		if h == nil {
			if e[0] != 0 {
				// A failing listener (out of descriptors): do not spin.
				select {
				case <-l.done:
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
			continue
		}
		l.deliver(func() (net.Conn, error) { return l.setup(h) })
	}
}

func (l *cListener) setup(h *C.dpl_qp) (net.Conn, error) {
	var e [C.DPL_ERRLEN]C.char
	opts := l.o.c()
	rc := C.dpl_accept_setup(h, &opts, C.int(setupTimeout.Milliseconds()), &e[0], C.DPL_ERRLEN)
	// The peer's real address: protected mode, bind, CLIENT LIST, INFO
	// and the logs read it as they read a TCP peer's.
	var ph [64]C.char
	var pp C.int
	C.dpl_peer(h, &ph[0], C.size_t(len(ph)), &pp)
	remote := peerAddr(C.GoString(&ph[0]), int(pp))
	if rc != 0 {
		C.dpl_destroy(h)
		return nil, l.refuse(remote, cErr(e[:]))
	}
	qp := newCQP(h, l.o.Type, l.o.Poll)
	conn, err := NewConn(qp, l.serverConn(l.o.Conn))
	if err != nil {
		return nil, err
	}
	if err := qp.establish(setupTimeout); err != nil {
		conn.Close()
		return nil, l.refuse(remote, err)
	}
	return &NetConn{Conn: conn, local: tcpAddr(l.addr.Host, l.addr.Port), remote: remote}, nil
}

// Close implements net.Listener.
func (l *cListener) Close() error {
	l.closing(func() {
		C.dpl_wake_listener(l.l)
		<-l.loop
		C.dpl_listener_close(l.l)
		if l.alt != nil {
			C.dpl_wake_listener(l.alt)
			<-l.altLoop
			C.dpl_listener_close(l.alt)
		}
	})
	return nil
}

// Dial connects to an RDMA server at HOST:PORT through the cgo provider
// within ctx (its deadline bounds the setup; 10 s without one).
func Dial(ctx context.Context, addr string, o ProviderOptions) (net.Conn, error) {
	if err := ProviderReady(); err != nil {
		return nil, fmt.Errorf("rdma connect %s: %w", addr, err)
	}
	host, port, err := splitAddr("connect", addr)
	if err != nil {
		return nil, err
	}
	if o.Type == 0 {
		o.Type = RC
	}
	timeout := 10 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	if err := ctx.Err(); err != nil || timeout <= 0 {
		return nil, fmt.Errorf("rdma connect %s: %w", addr, context.DeadlineExceeded)
	}
	start := time.Now()
	ch := C.CString(host)
	defer C.free(unsafe.Pointer(ch))
	src := C.CString(o.SourceAddr)
	defer C.free(unsafe.Pointer(src))
	var e [C.DPL_ERRLEN]C.char
	var lh [64]C.char
	var local C.int
	opts := o.c()
	h := C.dpl_connect(ch, C.int(port), src, &opts, &lh[0], C.size_t(len(lh)), &local, C.int(timeout.Milliseconds()), &e[0], C.DPL_ERRLEN)
	if h == nil {
		return nil, fmt.Errorf("rdma connect %s: %w", addr, rejected(cErr(e[:]), o.Type))
	}
	qp := newCQP(h, o.Type, o.Poll)
	cfg := o.Conn
	cfg.Role = Client
	conn, err := NewConn(qp, cfg)
	if err != nil {
		return nil, fmt.Errorf("rdma connect %s: %w", addr, err)
	}
	if err := qp.establish(max(timeout-time.Since(start), time.Second)); err != nil {
		conn.Close()
		return nil, fmt.Errorf("rdma connect %s: %w", addr, rejected(err, o.Type))
	}
	lp := int(local)
	if lp == 0 {
		lp = 1024 + rand.IntN(60000)
	}
	return &NetConn{Conn: conn, local: tcpAddr(C.GoString(&lh[0]), lp), remote: tcpAddr(host, port)}, nil
}
