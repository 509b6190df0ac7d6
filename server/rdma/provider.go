//go:build linux && (amd64 || arm64) && !nordma

package rdma

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
)

// This file is the provider (linux/amd64 and linux/arm64, with or without
// cgo; left out by -tags nordma): QP over the verbs of verbs_purego.go,
// and the listener and dialer that give net.Listener and net.Conn as sim.go
// does for the Go simulation. rdma-core is loaded at run time, not
// linked: the binary starts and serves TCP on a host without it, and
// ProviderReady says what the host lacks.

// ProviderName names the provider (`dpulab version` shows it).
const ProviderName = "rdma-core (pure Go)"

// ProviderOptions are a connection's settings over the provider: the
// server's rdma-* keys and the load generator's --rdma-* flags.
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

func (o *ProviderOptions) pv() pvOpts {
	t := o.Type
	if t == 0 {
		t = RC
	}
	return pvOpts{typ: int(t), sqSize: o.SendQueueDepth, rqSize: o.RecvQueueDepth,
		inlineSize: o.InlineSize, retryCount: o.RetryCount, compVector: o.CompletionVector}
}

var (
	providerOnce sync.Once
	providerErr  error
)

// ProviderReady says whether this host can use the provider: nil, or what
// it lacks (rdma-core's libraries, an RDMA device), with what to do.
func ProviderReady() error {
	providerOnce.Do(func() {
		probeOnce.Do(func() { probeErr = probe() })
		if providerErr = probeErr; providerErr != nil {
			return
		}
		if err := pvInit(); err != nil {
			providerErr = fmt.Errorf("rdma-core: %w", err)
		}
	})
	if providerErr != nil {
		return providerErr
	}
	return deviceCheck()
}

// pQP implements QP over verbs_purego.go.
type pQP struct {
	mu     sync.Mutex
	h      *pvQP
	typ    QPType
	sq, rq int
	poll   time.Duration
	closed bool

	// ring holds completions the completion goroutine took from the C
	// queue before the Conn asked; Poll hands them out first.
	ring              []Completion
	ringHead, ringLen int
	events            []Event
	cwc               [pvPollMax]Completion

	notify  chan struct{}
	space   chan struct{}
	done    chan struct{}
	started bool
}

func newPQP(h *pvQP, t QPType, poll time.Duration) *pQP {
	q := &pQP{
		h: h, typ: t, poll: poll,
		sq: h.sq, rq: h.rq,
		notify: make(chan struct{}, 1), space: make(chan struct{}, 1), done: make(chan struct{}),
	}
	q.ring = make([]Completion, q.sq+q.rq)
	return q
}

// pRegion is a registered region: mmap'd memory off the Go heap.
type pRegion struct {
	mr    *pvMR
	owner *pQP
	b     []byte
}

func (r *pRegion) Bytes() []byte { return r.b }
func (r *pRegion) Addr() uint64  { return r.mr.addr }
func (r *pRegion) RKey() uint32  { return r.mr.rkey }

// Type implements QP.
func (q *pQP) Type() QPType { return q.typ }

// SendQueueDepth implements QP.
func (q *pQP) SendQueueDepth() int { return q.sq }

// RecvQueueDepth implements QP.
func (q *pQP) RecvQueueDepth() int { return q.rq }

// Notify implements QP.
func (q *pQP) Notify() <-chan struct{} { return q.notify }

func wakeCh(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Register implements QP.
func (q *pQP) Register(size int, remoteWrite bool) (Region, error) {
	if size <= 0 {
		return nil, fmt.Errorf("rdma: register %d bytes: size out of range", size)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return nil, ErrQPState
	}
	mr, err := pvReg(q.h, size, remoteWrite)
	if err != nil {
		return nil, fmt.Errorf("rdma: register %d bytes: %w", size, err)
	}
	return &pRegion{mr: mr, owner: q, b: mr.buf}, nil
}

// Deregister implements QP.
func (q *pQP) Deregister(r Region) error {
	cr, ok := r.(*pRegion)
	if !ok || cr.owner != q {
		return errors.New("rdma: deregister: not a region of this queue pair")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return nil // released with the queue pair
	}
	cr.b = nil
	if pvDereg(q.h, cr.mr) != 0 {
		return errors.New("rdma: deregister: not a region of this queue pair")
	}
	return nil
}

func postErr(rc int) error {
	switch rc {
	case 0:
		return nil
	case dplEQPState:
		return ErrQPState
	case dplEFull:
		return ErrQueueFull
	case dplELocal:
		return ErrLocalRegion
	}
	return fmt.Errorf("rdma: post failed (%d)", int(rc))
}

func (q *pQP) region(r Region, off, n int) (*pRegion, error) {
	cr, ok := r.(*pRegion)
	if !ok || cr.owner != q || off < 0 || n < 0 || off > len(cr.b)-n {
		return nil, ErrLocalRegion
	}
	return cr, nil
}

// PostRecv implements QP.
func (q *pQP) PostRecv(wrID uint64, r Region, off, n int) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return ErrQPState
	}
	cr, err := q.region(r, off, n)
	if err != nil {
		return err
	}
	return postErr(pvPostRecv(q.h, wrID, cr.mr, off, n))
}

// PostSend implements QP.
func (q *pQP) PostSend(wrID uint64, r Region, off, n int, signaled bool) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return ErrQPState
	}
	cr, err := q.region(r, off, n)
	if err != nil {
		return err
	}
	return postErr(pvPostSend(q.h, wrID, cr.mr, off, n, signaled))
}

// PostWriteImm implements QP.
func (q *pQP) PostWriteImm(wrID uint64, r Region, off, n int, remoteAddr uint64, rkey, imm uint32, signaled bool) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return ErrQPState
	}
	cr, err := q.region(r, off, n)
	if err != nil {
		return err
	}
	return postErr(pvPostWriteImm(q.h, wrID, cr.mr, off, n, remoteAddr, rkey, imm, signaled))
}

// Poll implements QP: what the completion goroutine took first, then the
// completion queue itself.
func (q *pQP) Poll(wc []Completion) (int, error) {
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
	k := pvPoll(q.h, wc[n:])
	if k < 0 {
		return n, postErr(k)
	}
	return n + k, nil
}

// PollEvent implements QP.
func (q *pQP) PollEvent() (Event, bool) {
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
	if e := pvEvent(q.h); e != 0 {
		return Event(e), true
	}
	return 0, false
}

// pump moves what the verbs have (events, completions while the ring has
// room) to this side; under mu. It says whether anything came and whether
// the ring is full.
func (q *pQP) pump() (got, full bool) {
	for {
		e := pvEvent(q.h)
		if e == 0 {
			break
		}
		q.events = append(q.events, Event(e))
		got = true
	}
	for q.ringLen < len(q.ring) {
		room := min(len(q.ring)-q.ringLen, len(q.cwc))
		k := pvPoll(q.h, q.cwc[:room])
		if k <= 0 {
			break
		}
		for i := range k {
			q.ring[(q.ringHead+q.ringLen)%len(q.ring)] = q.cwc[i]
			q.ringLen++
		}
		got = true
	}
	return got, q.ringLen == len(q.ring)
}

// run feeds Notify: it spins on the completion queue for the poll time
// after the last completion, then arms the queue's notification and
// sleeps on the fds (completion channel, connection events, a
// wake-up for Close).
func (q *pQP) run() {
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
			// the CQ and takes its notifications (in pvWait), so no
			// Poll from the Conn can eat the wake-up it sleeps on.
			pvArm(q.h)
			// A completion that came between the poll and the arm raised
			// no notification: look once more.
			got, full = q.pump()
			if !got && !full {
				h := q.h
				q.mu.Unlock()
				pvWait(h, -1)
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
func (q *pQP) establish(timeout time.Duration) error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return ErrQPState
	}
	err := pvEstablish(q.h, timeout)
	if err == nil {
		q.started = true
		go q.run()
	}
	q.mu.Unlock()
	if err != nil {
		return err
	}
	wakeCh(q.notify)
	return nil
}

// Disconnect implements QP.
func (q *pQP) Disconnect() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return nil
	}
	pvDisconnect(q.h)
	pvWake(q.h)
	return nil
}

// Close implements QP: the completion goroutine stops, then the verbs
// layer disconnects and releases everything (regions included).
func (q *pQP) Close() error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return nil
	}
	q.closed = true
	pvWake(q.h)
	started := q.started
	q.mu.Unlock()
	if started {
		<-q.done
	}
	q.mu.Lock()
	pvDestroy(q.h)
	q.h = nil
	q.mu.Unlock()
	return nil
}

// pListener accepts connections through the verbs layer.
type pListener struct {
	listenerCore
	l    *pvListener
	o    ProviderOptions
	loop chan struct{}
	// alt listens on the same port for the other queue-pair type (RC and
	// UC ids live in different rdma_cm port spaces), only to refuse its
	// clients with the reason rather than leave them to a bare reject.
	alt     *pvListener
	altLoop chan struct{}
}

// Listen listens for RDMA connections on HOST:PORT through the pure-Go
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
	l, bound, err := pvListen(host, port, int(o.Type))
	if err != nil {
		return nil, fmt.Errorf("rdma listen %s: %w", addr, err)
	}
	ln := &pListener{listenerCore: newListenerCore(Addr{host, bound}, o.Type), l: l, o: o, loop: make(chan struct{})}
	ln.refused = o.Refused
	go ln.acceptLoop(ln.l, ln.loop)
	// RC and UC ids live in different rdma_cm port spaces.
	other := UC
	if o.Type == UC {
		other = RC
	}
	if alt, _, err := pvListen(host, bound, int(other)); err == nil {
		ln.alt, ln.altLoop = alt, make(chan struct{})
		go ln.acceptLoop(alt, ln.altLoop)
	} else if o.Refused != nil {
		// Not fatal: a client of the other type is then rejected
		// without the reason.
		o.Refused("", fmt.Errorf("cannot listen for %s clients on port %d to tell them this server speaks %s: %v",
			strings.ToUpper(other.String()), bound, strings.ToUpper(o.Type.String()), err))
	}
	return ln, nil
}

func (l *pListener) acceptLoop(cl *pvListener, loop chan struct{}) {
	defer close(loop)
	for {
		select {
		case <-l.done:
			return
		default:
		}
		h, err := pvAccept(cl, 1000)
		if h == nil {
			if err != nil {
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

func (l *pListener) setup(h *pvQP) (net.Conn, error) {
	opts := l.o.pv()
	serr := pvAcceptSetup(h, &opts)
	// The peer's real address: protected mode, bind, CLIENT LIST, INFO
	// and the logs read it as they read a TCP peer's.
	remote := peerAddr(pvPeer(h))
	if serr != nil {
		pvDestroy(h)
		return nil, l.refuse(remote, serr)
	}
	qp := newPQP(h, l.o.Type, l.o.Poll)
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
func (l *pListener) Close() error {
	l.closing(func() {
		pvWakeListener(l.l)
		<-l.loop
		pvListenerClose(l.l)
		if l.alt != nil {
			pvWakeListener(l.alt)
			<-l.altLoop
			pvListenerClose(l.alt)
		}
	})
	return nil
}

// Dial connects to an RDMA server at HOST:PORT through the pure-Go
// provider within ctx (its deadline bounds the setup; 10 s without one).
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
	opts := o.pv()
	h, lh, local, err := pvConnect(host, port, o.SourceAddr, &opts)
	if err != nil {
		return nil, fmt.Errorf("rdma connect %s: %w", addr, rejected(err, o.Type))
	}
	qp := newPQP(h, o.Type, o.Poll)
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
	lp := local
	if lp == 0 {
		lp = 1024 + rand.IntN(60000)
	}
	return &NetConn{Conn: conn, local: tcpAddr(lh, lp), remote: tcpAddr(host, port)}, nil
}
