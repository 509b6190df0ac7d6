package rdma

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// ErrModeMismatch is wrapped by a connect error whose server named itself
// as speaking the other queue-pair type (RC against UC).
var ErrModeMismatch = errors.New("queue-pair type mismatch")

// mismatchText is how a server of ours words a refusal of the other
// queue-pair type, in the reject's private data (the rdma-core provider
// writes it too): "the server on HOST:PORT speaks RC; this client asked
// for UC".
const mismatchText = "; this client asked for "

// modeMismatch is the refusal's text.
func modeMismatch(server Addr, want, asked QPType) string {
	return fmt.Sprintf("the server on %s speaks %s%s%s", server, strings.ToUpper(want.String()), mismatchText, strings.ToUpper(asked.String()))
}

// rejected gives a connect error its meaning: a refusal that names the
// server's queue-pair type wraps ErrModeMismatch; a bare reject (no
// reason: nothing of ours accepted it) lists what it may be.
func rejected(err error, asked QPType) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, mismatchText):
		return fmt.Errorf("%w: %v", ErrModeMismatch, err)
	case msg == "rejected by the server":
		other := UC
		if asked == UC {
			other = RC
		}
		return fmt.Errorf("%v without a reason: nothing accepts RDMA %s connections on that port (no server listens there; "+
			"a server of %s only, since RC and UC are separate rdma_cm port spaces; or a server that refused it)",
			err, strings.ToUpper(asked.String()), strings.ToUpper(other.String()))
	}
	return err
}

// splitAddr parses an RDMA address HOST:PORT for op ("listen" or
// "connect"): a listener may ask for port 0 (a free one), a client may not.
func splitAddr(op, addr string) (string, int, error) {
	host, ps, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("rdma %s %s: %w", op, addr, err)
	}
	low := 1
	if op == "listen" {
		low = 0
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < low || port > 65535 {
		return "", 0, fmt.Errorf("rdma %s %s: bad port", op, addr)
	}
	return host, port, nil
}

// listenerCore is what every RDMA listener (the rdma-core provider's, the
// simulation's) shares: its address, the connections set up and waiting
// for Accept, the close signal and INFO's figures. A listener's accept
// loop takes each new connection to deliver, which sets it up beside
// accepting.
type listenerCore struct {
	addr  Addr
	typ   QPType
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once

	counters Counters
	accepted atomic.Uint64
	// refused, when set, hears of every connection refused or failed in
	// setup (the server logs it).
	refused func(peer string, err error)
}

// refuse reports a connection that was not served and returns err.
func (l *listenerCore) refuse(peer net.Addr, err error) error {
	if l.refused != nil {
		l.refused(peer.String(), err)
	}
	return err
}

func newListenerCore(addr Addr, typ QPType) listenerCore {
	return listenerCore{addr: addr, typ: typ, conns: make(chan net.Conn), done: make(chan struct{})}
}

// deliver runs setup in its own goroutine, so that a client that connects
// and says nothing holds up no one else, and hands the connection it gives
// to Accept (or closes it when the listener closes first).
func (l *listenerCore) deliver(setup func() (net.Conn, error)) {
	go func() {
		nc, err := setup()
		if err != nil {
			return
		}
		l.accepted.Add(1)
		select {
		case l.conns <- nc:
		case <-l.done:
			nc.Close()
		}
	}()
}

// closing ends Accept once (stop: what else the listener closes, called
// once after done is closed).
func (l *listenerCore) closing(stop func()) {
	l.once.Do(func() {
		close(l.done)
		stop()
	})
}

// serverConn is a set-up connection's Conn configuration: the listener's
// with the server's role and the listener's counters.
func (l *listenerCore) serverConn(cfg Config) Config {
	cfg.Role = Server
	cfg.Counters = &l.counters
	return cfg
}

// RDMAStats implements StatsListener.
func (l *listenerCore) RDMAStats() (QPType, uint64, *Counters) {
	return l.typ, l.accepted.Load(), &l.counters
}

// Accept implements net.Listener.
func (l *listenerCore) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Addr implements net.Listener.
func (l *listenerCore) Addr() net.Addr { return l.addr }
