package rdma

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Sizes and intervals of Valkey's transport (src/rdma.c).
const (
	DefaultRxSize = 1 << 20  // VALKEY_RDMA_DEFAULT_RX_SIZE
	MinRxSize     = 64 << 10 // VALKEY_RDMA_MIN_RX_SIZE
	MaxRxSize     = 16 << 20 // VALKEY_RDMA_MAX_RX_SIZE
	// MaxUCRxSize bounds a UC receive buffer so the 20-bit write sequence
	// in UC immediates cannot wrap within one buffer (see ucImm).
	MaxUCRxSize = 1 << 20
	// RecvSlots is how many 32-byte receives each side keeps posted
	// (VALKEY_RDMA_MAX_WQE); every control message and every WRITE WITH
	// IMM consumes one.
	RecvSlots = 1024
	// DefaultKeepalive is how often a server sends Keepalive.
	DefaultKeepalive = 3 * time.Second
)

// UC immediates (our extension; RC's immediate is the chunk length, as in
// Valkey): bits 31..12 are the write's sequence number modulo 2^20, bits
// 11..0 its length minus one, so a UC chunk is at most ucMaxChunk bytes
// (one packet at the largest MTU: it lands whole or not at all). A lost
// or truncated write never completes at the receiver, so the next write
// that does arrives with a sequence number other than the one expected.
// The check cannot be fooled by a multiple of 2^20 lost writes: one
// buffer generation holds at most MaxUCRxSize = 2^20 one-byte writes, and
// a generation whose bytes did not all arrive is never re-announced.
const (
	ucMaxChunk = 4096
	ucSeqShift = 12
	ucSeqMask  = 1<<20 - 1
	// ucWindow is how many UC writes may be on their way before the
	// receiver's OpUCAck: fewer than its posted receives, with room for
	// the control messages that also consume them. The receiver acks
	// every ucAckEvery writes, and on its tick whatever is left.
	ucWindow   = RecvSlots - 64
	ucAckEvery = ucWindow / 4
	ucAckTick  = 10 * time.Millisecond
	// ucAckRepeats: an ack is lost like any UC message, and a sender
	// stopped at its window writes nothing that would make the receiver
	// ack anew; so the tick sends an unchanged count again after 1, 2, 4,
	// ... ticks, this many times (about 2.5 s of ticks), then rests until
	// the count moves.
	ucAckRepeats = 8
)

// Errors a Conn reports. They are wrapped with detail; test with
// errors.Is.
var (
	// ErrProtocol: the peer broke the protocol (malformed control message,
	// a write past its announced buffer, a feature we do not offer).
	ErrProtocol = errors.New("rdma: protocol error")
	// ErrLostWrite: UC, a write was lost or truncated on the way; the
	// connection is closed rather than let a gap become data.
	ErrLostWrite = errors.New("rdma: write lost on an unreliable (UC) connection")
	// ErrPeerDead: the peer stopped answering (a send failed, or nothing
	// came within Config.PeerTimeout).
	ErrPeerDead = errors.New("rdma: peer is not answering")
)

// Role says which side of the protocol a Conn plays.
type Role uint8

const (
	Client Role = iota + 1
	Server
)

// Config is a Conn's settings.
type Config struct {
	Role Role
	// RxSize is this side's receive buffer (rdma-rx-size): 0 means
	// DefaultRxSize; MinRxSize..MaxRxSize, and at most MaxUCRxSize on UC.
	RxSize int
	// Keepalive is how often a server sends Keepalive: 0 means
	// DefaultKeepalive, negative never. Clients send none, as Valkey's
	// clients do not.
	Keepalive time.Duration
	// PeerTimeout, when positive, declares the peer dead when nothing
	// (data or control) has come from it for this long. Meant for
	// clients of a server that sends keepalives; Valkey's clients send
	// none, so a server should leave it 0 and learn of dead clients from
	// its failing keepalives (RC) or the client's requests' deadlines.
	PeerTimeout time.Duration
	// Counters, when set, also receives this connection's counts (shared
	// by a server's connections, for INFO).
	Counters *Counters
}

// Counters are a connection's (or a server's) RDMA counts.
type Counters struct {
	BytesIn, BytesOut   atomic.Uint64
	WritesIn, WritesOut atomic.Uint64 // WRITE WITH IMM received, posted
	Reregistrations     atomic.Uint64 // RegisterXferMemory sent after a drain
	KeepalivesSent      atomic.Uint64
	ProtocolErrors      atomic.Uint64
	LostWrites          atomic.Uint64 // UC writes detected lost or truncated
	PeerDead            atomic.Uint64
}

// wrID layout: kind in the top byte; for sends the slot in bits 32..47;
// the number of send-queue entries a signaled request frees in bits 0..31.
const (
	wrRecv  = 1 << 56
	wrSend  = 2 << 56
	wrWrite = 3 << 56
	wrKind  = 0xff << 56
)

// Conn is one RDMA connection speaking Valkey's protocol: Read and Write
// carry RESP bytes, as over a net.Conn. One goroutine may Read while
// another Writes; a background goroutine drives completions, events and
// keepalives.
type Conn struct {
	qp  QP
	cfg Config
	uc  bool

	readMu, writeMu sync.Mutex

	mu          sync.Mutex
	err         error // sticky: the connection is finished
	eof         bool  // peer disconnected in order; Read drains, then io.EOF
	closed      bool
	established bool
	lastHeard   time.Time

	cmd      Region // RecvSlots receive slots, then SendQueueDepth send slots
	cmdBuf   []byte
	freeSend []uint16

	rx                  Region
	rxBuf               []byte
	rxLen, rxOff, rxPos uint32
	rxSeq               uint32

	tx           Region // staging for writes, the size the peer announced
	txBuf        []byte
	txReady      bool
	txAddr       uint64
	txKey        uint32
	txLen, txOff uint32
	txSeq        uint32
	// UC credit: the peer's latest count of our writes taken in; the
	// count we last acked, and last acked from the tick; how often the
	// tick has sent that count again, and the ticks since it last did.
	ucAcked, ucAckSent, ucAckTicked uint32
	ucAckAgain, ucAckIdle           int
	sqDepth, sqOut, sqRun           int
	// backlog[backPos:] is what Write accepted but could not post yet
	// (the peer's buffer full, or not yet re-announced); progress posts
	// it as room comes. So a writer never stops its own reading for the
	// peer's: two sides that block in Write until the other reads (our
	// server answering a client still writing its pipeline) deadlock,
	// which TCP's socket buffers hide. Write blocks only past maxBacklog.
	backlog []byte
	backPos int

	wc [64]Completion

	readWake, writeWake         chan struct{}
	readTimer, writeTimer       *time.Timer
	readDeadline, writeDeadline time.Time

	own  Counters
	done chan struct{}
	wg   sync.WaitGroup
}

// controlReserve send-queue entries are kept for control messages, so a
// writer filling the queue cannot keep a re-registration from going out.
const controlReserve = 16

// maxBacklog is how much Write holds for the peer beyond what its buffer
// takes before Write blocks (four of the largest buffers); closeDrain how
// long Close waits for the backlog to go out, as a TCP close sends what
// its socket buffer holds.
const (
	maxBacklog = 4 * MaxRxSize
	closeDrain = 2 * time.Second
)

// NewConn sets up the protocol on qp, which must not be established yet:
// it registers the buffers, posts the receives, and starts the goroutine
// that announces the receive buffer once the connection is established.
// The Conn owns qp from then on (Close closes it); when NewConn fails, it
// has closed qp.
func NewConn(qp QP, cfg Config) (*Conn, error) {
	if cfg.Role != Client && cfg.Role != Server {
		qp.Close()
		return nil, fmt.Errorf("rdma: config: role must be Client or Server")
	}
	if cfg.RxSize == 0 {
		cfg.RxSize = DefaultRxSize
	}
	uc := qp.Type() == UC
	maxRx := MaxRxSize
	if uc {
		maxRx = MaxUCRxSize
	}
	if cfg.RxSize < MinRxSize || cfg.RxSize > maxRx {
		qp.Close()
		return nil, fmt.Errorf("rdma: rdma-rx-size %d out of range: use %d..%d bytes on %s", cfg.RxSize, MinRxSize, maxRx, qp.Type())
	}
	if cfg.Keepalive == 0 {
		cfg.Keepalive = DefaultKeepalive
	}
	sq := qp.SendQueueDepth()
	if sq <= 2*controlReserve || qp.RecvQueueDepth() < RecvSlots {
		qp.Close()
		return nil, fmt.Errorf("rdma: queues too small: send %d (need more than %d), receive %d (need %d)", sq, 2*controlReserve, qp.RecvQueueDepth(), RecvSlots)
	}
	c := &Conn{
		qp: qp, cfg: cfg, uc: uc, sqDepth: sq,
		ucAckAgain: ucAckRepeats, // nothing taken in yet: nothing to repeat
		readWake:   make(chan struct{}, 1), writeWake: make(chan struct{}, 1),
		readTimer: stoppedTimer(), writeTimer: stoppedTimer(),
		done: make(chan struct{}),
	}
	sendSlots := min(sq, 1<<16)
	var err error
	if c.cmd, err = qp.Register(MsgSize*(RecvSlots+sendSlots), false); err != nil {
		qp.Close()
		return nil, fmt.Errorf("rdma: registering control buffers: %w", err)
	}
	c.cmdBuf = c.cmd.Bytes()
	if c.rx, err = qp.Register(cfg.RxSize, true); err != nil {
		qp.Close()
		return nil, fmt.Errorf("rdma: registering the %d-byte receive buffer: %w", cfg.RxSize, err)
	}
	c.rxBuf, c.rxLen = c.rx.Bytes(), uint32(cfg.RxSize)
	c.freeSend = make([]uint16, 0, sendSlots)
	for i := sendSlots - 1; i >= 0; i-- {
		c.freeSend = append(c.freeSend, uint16(RecvSlots+i))
	}
	for i := range RecvSlots {
		if err := qp.PostRecv(wrRecv|uint64(i), c.cmd, i*MsgSize, MsgSize); err != nil {
			qp.Close()
			return nil, fmt.Errorf("rdma: posting receive %d: %w", i, err)
		}
	}
	c.wg.Add(1)
	go c.run()
	return c, nil
}

func stoppedTimer() *time.Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}

// run drives the connection when nobody is reading or writing: it
// handles completions and events as they come, sends keepalives, and
// watches for a silent peer.
func (c *Conn) run() {
	defer c.wg.Done()
	tick := c.cfg.Keepalive
	if c.cfg.Role == Client || tick < 0 {
		tick = time.Hour
	}
	if c.cfg.PeerTimeout > 0 {
		tick = min(tick, max(c.cfg.PeerTimeout/4, time.Millisecond))
	}
	if c.uc {
		tick = min(tick, ucAckTick)
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	var lastKeepalive time.Time
	for {
		select {
		case <-c.done:
			return
		case <-c.qp.Notify():
			c.mu.Lock()
			c.progress()
			c.mu.Unlock()
		case now := <-t.C:
			c.mu.Lock()
			c.progress()
			if c.err == nil && c.established {
				if c.cfg.Role == Server && c.cfg.Keepalive > 0 && now.Sub(lastKeepalive) >= c.cfg.Keepalive {
					lastKeepalive = now
					if err := c.sendControl(Msg{Op: OpKeepalive}); err != nil {
						c.fail(fmt.Errorf("%w: keepalive: %v", ErrPeerDead, err))
					} else {
						c.count(func(k *Counters) { k.KeepalivesSent.Add(1) })
					}
				}
				if c.uc && c.err == nil {
					if err := c.tickAck(); err != nil {
						c.fail(err)
					}
				}
				if c.err == nil && c.cfg.PeerTimeout > 0 && now.Sub(c.lastHeard) > c.cfg.PeerTimeout {
					c.count(func(k *Counters) { k.PeerDead.Add(1) })
					c.fail(fmt.Errorf("%w: nothing received for %v", ErrPeerDead, c.cfg.PeerTimeout))
				}
			}
			c.mu.Unlock()
		}
	}
}

// count applies f to this connection's counters and the shared ones; for
// the rare counts (the per-message ones are written out, closure-free).
func (c *Conn) count(f func(*Counters)) {
	f(&c.own)
	if c.cfg.Counters != nil {
		f(c.cfg.Counters)
	}
}

// fail finishes the connection with err (the first error sticks) and
// disconnects, so the peer learns of it.
func (c *Conn) fail(err error) {
	if c.err != nil {
		return
	}
	c.err = err
	if errors.Is(err, ErrProtocol) {
		c.count(func(k *Counters) { k.ProtocolErrors.Add(1) })
	}
	c.qp.Disconnect()
	wake(c.readWake)
	wake(c.writeWake)
}

func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// progress handles every pending event and completion, then posts what
// the backlog holds as far as the peer's buffer allows. c.mu is held.
func (c *Conn) progress() {
	c.poll()
	c.flush()
}

// flush posts the backlog while there is room. c.mu is held.
func (c *Conn) flush() {
	if c.backPos == len(c.backlog) || c.err != nil || c.eof || c.closed {
		return
	}
	n, err := c.postFrom(c.backlog[c.backPos:])
	c.backPos += n
	if err != nil {
		if c.err == nil && !c.eof {
			c.fail(err)
		}
		return
	}
	if c.backPos == len(c.backlog) {
		if cap(c.backlog) > 4*DefaultRxSize {
			c.backlog = nil // a burst's buffer is not kept
		}
		c.backlog, c.backPos = c.backlog[:0], 0
	}
}

// queued is how many accepted bytes wait in the backlog. c.mu is held.
func (c *Conn) queued() int { return len(c.backlog) - c.backPos }

// poll handles every pending event and completion. c.mu is held.
func (c *Conn) poll() {
	for {
		ev, ok := c.qp.PollEvent()
		if !ok {
			break
		}
		c.handleEvent(ev)
	}
	for {
		n, err := c.qp.Poll(c.wc[:])
		if err != nil {
			c.fail(fmt.Errorf("rdma: polling completions: %w", err))
			return
		}
		for i := range n {
			c.handle(&c.wc[i])
		}
		if n < len(c.wc) {
			return
		}
	}
}

func (c *Conn) handleEvent(ev Event) {
	switch ev {
	case EventEstablished:
		if c.established || c.err != nil || c.closed {
			return
		}
		c.established = true
		c.lastHeard = time.Now()
		if err := c.announce(); err != nil {
			c.fail(err)
		}
	case EventDisconnected:
		if c.err == nil && !c.eof {
			c.eof = true
			wake(c.readWake)
			wake(c.writeWake)
		}
	}
}

// announce resets the receive buffer and tells the peer to write from
// its start.
func (c *Conn) announce() error {
	c.rxOff, c.rxPos = 0, 0
	err := c.sendControl(Msg{Op: OpRegisterXferMemory, Addr: c.rx.Addr(), Length: c.rxLen, RKey: c.rx.RKey()})
	if err != nil {
		return fmt.Errorf("rdma: announcing the receive buffer: %w", err)
	}
	return nil
}

// sendControl posts one control message from a free send slot.
func (c *Conn) sendControl(m Msg) error {
	if len(c.freeSend) == 0 {
		return fmt.Errorf("rdma: no free control buffer")
	}
	if c.sqOut >= c.sqDepth {
		return fmt.Errorf("rdma: sending %s: %w", m.Op, ErrQueueFull)
	}
	slot := c.freeSend[len(c.freeSend)-1]
	off := int(slot) * MsgSize
	if err := m.Put(c.cmdBuf[off : off+MsgSize]); err != nil {
		return err
	}
	covered := uint64(c.sqRun + 1)
	if err := c.qp.PostSend(wrSend|uint64(slot)<<32|covered, c.cmd, off, MsgSize, true); err != nil {
		return fmt.Errorf("rdma: sending %s: %w", m.Op, err)
	}
	c.freeSend = c.freeSend[:len(c.freeSend)-1]
	c.sqRun = 0
	c.sqOut++
	return nil
}

// handle is one completion.
func (c *Conn) handle(wc *Completion) {
	kind := wc.WRID & wrKind
	if kind == wrSend || kind == wrWrite {
		c.sqOut -= int(uint32(wc.WRID))
		if kind == wrSend {
			c.freeSend = append(c.freeSend, uint16(wc.WRID>>32))
		}
		wake(c.writeWake)
	}
	if wc.Status != StatusSuccess {
		if wc.Status == StatusFlushed && (c.closed || c.eof || c.err != nil) {
			return
		}
		err := fmt.Errorf("rdma: %s failed: %s", wc.Op, wc.Status)
		switch wc.Status {
		case StatusRetryExceeded, StatusRNRRetryExceeded:
			c.count(func(k *Counters) { k.PeerDead.Add(1) })
			err = fmt.Errorf("%w: %s failed: %s", ErrPeerDead, wc.Op, wc.Status)
		case StatusRemoteAccess, StatusRemoteInvalidRequest, StatusLocalLength:
			err = fmt.Errorf("%w: %s failed: %s", ErrProtocol, wc.Op, wc.Status)
		}
		c.fail(err)
		return
	}
	if kind != wrRecv || c.err != nil {
		return
	}
	if c.cfg.PeerTimeout > 0 {
		c.lastHeard = time.Now()
	}
	slot := int(uint32(wc.WRID))
	switch wc.Op {
	case OpRecv:
		if wc.ByteLen != MsgSize {
			c.fail(fmt.Errorf("%w: %v", ErrProtocol, fmt.Errorf("control message of %d bytes: %w", wc.ByteLen, ErrMsgLength)))
			return
		}
		m, err := ParseMsg(c.cmdBuf[slot*MsgSize : (slot+1)*MsgSize])
		if err != nil {
			c.fail(fmt.Errorf("%w: %w", ErrProtocol, err))
			return
		}
		if err := c.control(m); err != nil {
			c.fail(err)
			return
		}
	case OpRecvWriteImm:
		if err := c.data(wc.Imm); err != nil {
			c.fail(err)
			return
		}
	default:
		c.fail(fmt.Errorf("%w: unexpected completion %s on a receive", ErrProtocol, wc.Op))
		return
	}
	if err := c.qp.PostRecv(wc.WRID, c.cmd, slot*MsgSize, MsgSize); err != nil {
		// A queue pair leaving the connected state says why itself (an
		// event or an error completion, possibly still in the queue).
		if !errors.Is(err, ErrQPState) {
			c.fail(fmt.Errorf("rdma: re-posting receive %d: %w", slot, err))
		}
		return
	}
	// Acked only once its receive is back.
	if c.uc && c.rxSeq-c.ucAckSent >= ucAckEvery {
		if err := c.sendAck(); err != nil {
			c.fail(err)
		}
	}
}

// data accounts for one WRITE WITH IMM that landed in the receive buffer.
func (c *Conn) data(imm uint32) error {
	n := imm
	if c.uc {
		seq := imm >> ucSeqShift
		n = imm&(ucMaxChunk-1) + 1
		if want := c.rxSeq & ucSeqMask; seq != want {
			c.count(func(k *Counters) { k.LostWrites.Add(1) })
			return fmt.Errorf("%w: write %d arrived where write %d was expected (offset %d of %d)", ErrLostWrite, seq, want, c.rxOff, c.rxLen)
		}
		c.rxSeq++
	}
	if n == 0 || n > c.rxLen-c.rxOff {
		return fmt.Errorf("%w: peer wrote %d bytes at offset %d of its %d-byte buffer", ErrProtocol, n, c.rxOff, c.rxLen)
	}
	c.rxOff += n
	c.own.BytesIn.Add(uint64(n))
	c.own.WritesIn.Add(1)
	if k := c.cfg.Counters; k != nil {
		k.BytesIn.Add(uint64(n))
		k.WritesIn.Add(1)
	}
	wake(c.readWake)
	return nil
}

// control handles one control message from the peer.
func (c *Conn) control(m Msg) error {
	switch m.Op {
	case OpKeepalive:
		return nil
	case OpGetServerFeature:
		if c.cfg.Role == Client {
			return nil // an answer; we never ask, and want nothing from it
		}
		// No features, as Valkey answers today.
		if err := c.sendControl(Msg{Op: OpGetServerFeature, Select: m.Select}); err != nil {
			return fmt.Errorf("rdma: answering GetServerFeature: %w", err)
		}
		return nil
	case OpSetClientFeature:
		if c.cfg.Role == Client {
			return fmt.Errorf("%w: the server sent SetClientFeature", ErrProtocol)
		}
		if m.Features != 0 {
			// Valkey ignores this; a client using a feature we never
			// offered would send data we would misread.
			return fmt.Errorf("%w: client set features %#x; this server offers none", ErrProtocol, m.Features)
		}
		return nil
	case OpRegisterXferMemory:
		return c.peerBuffer(m)
	case OpUCAck:
		if !c.uc {
			return fmt.Errorf("%w: UCAck on an RC connection", ErrProtocol)
		}
		// Newer than what we know, and not beyond what we wrote; an
		// older ack overtaken by a newer one is ignored.
		if d := m.Count - c.ucAcked; d > 0 && d <= c.txSeq-c.ucAcked {
			c.ucAcked = m.Count
			wake(c.writeWake)
		}
		return nil
	}
	return fmt.Errorf("%w: %s", ErrProtocol, m.Op)
}

// peerBuffer takes the peer's announced receive buffer: writes restart at
// its offset 0.
func (c *Conn) peerBuffer(m Msg) error {
	maxLen := uint32(MaxRxSize)
	if c.uc {
		maxLen = MaxUCRxSize
	}
	if m.Length == 0 || m.Length > maxLen || m.Addr+uint64(m.Length) < m.Addr {
		return fmt.Errorf("%w: peer announced a %d-byte buffer at %#x (allowed 1..%d bytes)", ErrProtocol, m.Length, m.Addr, maxLen)
	}
	if c.tx == nil || m.Length != c.txLen {
		if c.tx != nil {
			if err := c.qp.Deregister(c.tx); err != nil {
				return fmt.Errorf("rdma: releasing the send buffer: %w", err)
			}
			c.tx, c.txBuf = nil, nil
		}
		r, err := c.qp.Register(int(m.Length), false)
		if err != nil {
			return fmt.Errorf("rdma: registering a %d-byte send buffer: %w", m.Length, err)
		}
		c.tx, c.txBuf = r, r.Bytes()
	}
	c.txAddr, c.txKey, c.txLen, c.txOff = m.Addr, m.RKey, m.Length, 0
	c.txReady = true
	wake(c.writeWake)
	return nil
}

// tickAck is the tick's UC ack. An ack can be lost too: what the
// threshold did not ack, or acked into the void, goes on the next tick;
// a count that has not moved goes again after 1, 2, 4, ... ticks,
// ucAckRepeats times, since two losses in a row would otherwise leave a
// sender at its window waiting for good (the peer ignores a count it
// has). c.mu is held.
func (c *Conn) tickAck() error {
	if c.rxSeq != c.ucAckTicked {
		c.ucAckTicked, c.ucAckAgain, c.ucAckIdle = c.rxSeq, 0, 0
		return c.sendAck()
	}
	if c.ucAckAgain >= ucAckRepeats {
		return nil
	}
	if c.ucAckIdle++; c.ucAckIdle < 1<<c.ucAckAgain {
		return nil
	}
	c.ucAckAgain, c.ucAckIdle = c.ucAckAgain+1, 0
	return c.sendAck()
}

// sendAck gives a UC peer credit for the writes taken in so far.
func (c *Conn) sendAck() error {
	if err := c.sendControl(Msg{Op: OpUCAck, Count: c.rxSeq}); err != nil {
		return fmt.Errorf("rdma: acknowledging writes: %w", err)
	}
	c.ucAckSent = c.rxSeq
	return nil
}

// canWrite says whether a write may be posted now: the peer's buffer is
// known and has room, the send queue has room, and on UC the peer has
// receives posted for it.
func (c *Conn) canWrite() bool {
	return c.txReady && c.txOff < c.txLen && c.sqOut < c.sqDepth-controlReserve &&
		(!c.uc || c.txSeq-c.ucAcked < ucWindow)
}

// Read reads RESP bytes the peer wrote. When this side's buffer has been
// filled and read to its end, Read announces it again so the peer can
// restart at offset 0.
func (c *Conn) Read(p []byte) (int, error) {
	c.readMu.Lock()
	defer c.readMu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if c.closed {
			return 0, net.ErrClosed
		}
		c.progress()
		if c.rxPos < c.rxOff {
			if len(p) == 0 {
				return 0, nil
			}
			n := copy(p, c.rxBuf[c.rxPos:c.rxOff])
			c.rxPos += uint32(n)
			if c.rxPos == c.rxLen && c.err == nil && !c.eof {
				if err := c.announce(); err != nil {
					c.fail(err)
				} else {
					c.count(func(k *Counters) { k.Reregistrations.Add(1) })
				}
			}
			return n, nil
		}
		if c.err != nil {
			return 0, c.err
		}
		if c.eof {
			return 0, io.EOF
		}
		if err := c.wait(c.readWake, c.readTimer, &c.readDeadline); err != nil {
			return 0, err
		}
	}
}

// Write writes RESP bytes into the peer's announced buffer with RDMA WRITE
// WITH IMM, waiting while the buffer is full until the peer announces it
// again. It returns when all of p is posted (the bytes are copied: p may
// be reused), or with an error.
func (c *Conn) Write(p []byte) (int, error) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.writeErr(); err != nil {
		return 0, err
	}
	rest := p
	if c.queued() == 0 {
		// Nothing waits before these bytes: post what fits now.
		n, err := c.postFrom(p)
		if err != nil {
			return n, err
		}
		rest = p[n:]
	}
	if len(rest) > 0 {
		c.backlog = append(c.backlog, rest...)
	}
	for c.queued() > maxBacklog {
		c.progress()
		if err := c.writeErr(); err != nil {
			return len(p) - len(rest), err
		}
		if c.queued() <= maxBacklog {
			break
		}
		if err := c.wait(c.writeWake, c.writeTimer, &c.writeDeadline); err != nil {
			return len(p) - len(rest), err
		}
	}
	return len(p), nil
}

// writeErr is why nothing more can be written, or nil. c.mu is held.
func (c *Conn) writeErr() error {
	switch {
	case c.closed:
		return net.ErrClosed
	case c.err != nil:
		return c.err
	case c.eof:
		return fmt.Errorf("rdma: write: peer disconnected: %w", io.ErrClosedPipe)
	}
	return nil
}

// postFrom posts b from its start while the peer's buffer and the send
// queue have room, and returns how many bytes it posted. c.mu is held.
func (c *Conn) postFrom(b []byte) (int, error) {
	written := 0
	for written < len(b) {
		if !c.canWrite() {
			c.poll()
			if err := c.writeErr(); err != nil {
				return written, err
			}
			if !c.canWrite() {
				return written, nil
			}
		}
		chunk := min(len(b)-written, int(c.txLen-c.txOff))
		if c.uc {
			chunk = min(chunk, ucMaxChunk)
		}
		if err := c.post(b[written : written+chunk]); err != nil {
			if errors.Is(err, ErrQPState) {
				// Disconnected or failed under us: the event or
				// completion saying which is in the queue.
				c.poll()
				if err := c.writeErr(); err != nil {
					return written, err
				}
			}
			c.fail(err)
			return written, err
		}
		written += chunk
	}
	return written, nil
}

// post writes one chunk at the current offset of the peer's buffer.
func (c *Conn) post(b []byte) error {
	off := c.txOff
	n := copy(c.txBuf[off:], b)
	imm := uint32(n)
	if c.uc {
		imm = (c.txSeq&ucSeqMask)<<ucSeqShift | uint32(n-1)
	}
	// Signal one write in half a queue, as Valkey does: enough to free
	// send-queue entries, without a completion per write.
	c.sqRun++
	signaled := c.sqRun >= c.sqDepth/2
	var wrID uint64 = wrWrite
	if signaled {
		wrID |= uint64(c.sqRun)
	}
	if err := c.qp.PostWriteImm(wrID, c.tx, int(off), n, c.txAddr+uint64(off), c.txKey, imm, signaled); err != nil {
		c.sqRun--
		return fmt.Errorf("rdma: posting a %d-byte write: %w", n, err)
	}
	if signaled {
		c.sqRun = 0
	}
	c.sqOut++
	c.txOff += uint32(n)
	c.txSeq++
	c.own.BytesOut.Add(uint64(n))
	c.own.WritesOut.Add(1)
	if k := c.cfg.Counters; k != nil {
		k.BytesOut.Add(uint64(n))
		k.WritesOut.Add(1)
	}
	return nil
}

// wait releases c.mu until woken or the deadline passes. c.mu is held.
func (c *Conn) wait(ch chan struct{}, t *time.Timer, deadline *time.Time) error {
	var expired <-chan time.Time
	if !deadline.IsZero() {
		d := time.Until(*deadline)
		if d <= 0 {
			return os.ErrDeadlineExceeded
		}
		t.Reset(d)
		expired = t.C
	}
	c.mu.Unlock()
	notified := false
	select {
	case <-ch:
	case <-c.qp.Notify():
		// Handled here rather than by run, a goroutine switch sooner.
		// Whoever takes the token must progress, or completions would
		// wait for the next one.
		notified = true
	case <-expired:
	}
	c.mu.Lock()
	t.Stop()
	if notified {
		c.progress()
	}
	return nil
}

// Close disconnects and releases the queue pair; blocked Reads and Writes
// return net.ErrClosed.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return net.ErrClosed
	}
	c.drain()
	c.closed = true
	c.qp.Disconnect()
	wake(c.readWake)
	wake(c.writeWake)
	c.mu.Unlock()
	close(c.done)
	c.wg.Wait()
	// Readers and writers hold readMu/writeMu while blocked; they see
	// closed and leave before the queue pair goes.
	c.readMu.Lock()
	c.writeMu.Lock()
	defer c.readMu.Unlock()
	defer c.writeMu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.qp.Close(); err != nil {
		return fmt.Errorf("rdma: closing the queue pair: %w", err)
	}
	return nil
}

// drain gives the backlog up to closeDrain to go out before Close
// disconnects. c.mu is held.
func (c *Conn) drain() {
	if c.queued() == 0 {
		return
	}
	t := time.NewTimer(closeDrain)
	defer t.Stop()
	for c.queued() > 0 && c.writeErr() == nil {
		c.mu.Unlock()
		expired := false
		select {
		case <-c.writeWake:
		case <-c.qp.Notify():
		case <-t.C:
			expired = true
		}
		c.mu.Lock()
		c.progress()
		if expired {
			return
		}
	}
}

// Err is the error that finished the connection, nil while it is up (or
// after an orderly disconnect).
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Counters are this connection's own counts.
func (c *Conn) Counters() *Counters { return &c.own }

// SetDeadline sets both deadlines, as net.Conn's does.
func (c *Conn) SetDeadline(t time.Time) error {
	c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}

// SetReadDeadline bounds blocked Reads: past it they return
// os.ErrDeadlineExceeded. On UC this is how a lost reply shows: the
// request's answer does not come.
func (c *Conn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.readDeadline = t
	c.mu.Unlock()
	wake(c.readWake)
	return nil
}

// SetWriteDeadline bounds blocked Writes (a full peer buffer that is not
// announced again: a slow reader, or on UC a lost announcement).
func (c *Conn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	c.writeDeadline = t
	c.mu.Unlock()
	wake(c.writeWake)
	return nil
}
