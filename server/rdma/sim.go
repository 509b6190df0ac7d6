package rdma

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// This file is the simulated provider's connection setup (what rdma_cm
// does on hardware): an RDMA address HOST:PORT is a Unix socket in one
// directory of this host, a listener accepts on it, and each connection's
// queue pairs (WireQP) talk over the accepted socket. It serves the
// rdmasim build (server/transport/rdma_sim.go) and the tests: two processes
// on this machine speak the real protocol to each other, with no NIC.

// SimDirEnv names the directory of the simulated fabric's sockets
// (default: dpulab-rdmasim-UID under the temporary directory). Server and
// client must agree on it.
const SimDirEnv = "DPULAB_RDMASIM_DIR"

// SimNote labels whatever is measured over the simulated provider.
const SimNote = "simulated RDMA (rdmasim build: the verbs carried over Unix sockets on this host, no NIC; figures are not RDMA's)"

// SimOptions are a simulated connection's settings.
type SimOptions struct {
	// Type is RC or UC (default RC). A listener refuses a client of the
	// other type, as a server's rdma-transport-mode decides.
	Type QPType
	// Conn is the protocol's configuration (Role is set by Listen and
	// Dial).
	Conn Config
	// Queues are the queue depths.
	Queues WireOptions
	// Refused, for ListenSim, is told of every connection refused before
	// it was served: the peer's address and why.
	Refused func(peer string, err error)
}

// StatsListener is a listener of RDMA connections that reports, for the
// server's INFO, its queue-pair type, how many connections it accepted and
// their counts together.
type StatsListener interface {
	RDMAStats() (QPType, uint64, *Counters)
}

// Addr is an RDMA address.
type Addr struct {
	Host string
	Port int
}

// Network implements net.Addr.
func (a Addr) Network() string { return "rdma" }

func (a Addr) String() string { return net.JoinHostPort(a.Host, strconv.Itoa(a.Port)) }

// NetConn is a Conn with its addresses: a net.Conn. The addresses are
// *net.TCPAddr, since rdma_cm addresses live in the TCP port space
// (RDMA_PS_TCP): the server's protected mode and CLIENT LIST read them as
// they read TCP peers'.
type NetConn struct {
	*Conn
	local, remote net.Addr
}

// LocalAddr implements net.Conn.
func (c *NetConn) LocalAddr() net.Addr { return c.local }

// RemoteAddr implements net.Conn.
func (c *NetConn) RemoteAddr() net.Addr { return c.remote }

func tcpAddr(host string, port int) *net.TCPAddr {
	ip := net.ParseIP(host)
	if ip == nil {
		ip = net.IPv4(127, 0, 0, 1)
	}
	return &net.TCPAddr{IP: ip, Port: port}
}

func simDir() (string, error) {
	dir := os.Getenv(SimDirEnv)
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "dpulab-rdmasim-"+strconv.Itoa(os.Getuid()))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("simulated rdma: %w", err)
	}
	return dir, nil
}

// simSocket is where HOST:PORT listens: every-address listeners under
// "any", so a client of any address finds them.
func simSocket(dir, host string, port int) string {
	switch host {
	case "", "*", "0.0.0.0", "::":
		host = "any"
	}
	return filepath.Join(dir, strings.NewReplacer(":", "-", "/", "-", "%", "-").Replace(host)+"_"+strconv.Itoa(port)+".sock")
}

// Handshake: the client sends simHello (magic, QP type, its port); the
// server answers one status byte, then a length and a message when it
// refuses.
var simMagic = [8]byte{'D', 'P', 'L', 'R', 'S', 'I', 'M', '1'}

const simHello = 12

// ListenSim listens on HOST:PORT of the simulated fabric (port 0: a free
// one). A socket left by a listener that died is replaced.
func ListenSim(addr string, o SimOptions) (net.Listener, error) {
	host, port, err := splitAddr("listen", addr)
	if err != nil {
		return nil, err
	}
	if o.Type == 0 {
		o.Type = RC
	}
	dir, err := simDir()
	if err != nil {
		return nil, err
	}
	var ln net.Listener
	for try := 0; ; try++ {
		p := port
		if port == 0 {
			p = 20000 + rand.IntN(40000)
		}
		path := simSocket(dir, host, p)
		if port != 0 {
			if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
				if c, err := net.Dial("unix", path); err == nil {
					c.Close()
					return nil, fmt.Errorf("rdma listen %s: address already in use (simulated: %s)", addr, path)
				}
				os.Remove(path)
			}
		}
		ln, err = net.Listen("unix", path)
		if err == nil {
			port = p
			break
		}
		if port != 0 || try > 100 {
			return nil, fmt.Errorf("rdma listen %s (simulated: %s): %w", addr, path, err)
		}
	}
	l := &simListener{listenerCore: newListenerCore(Addr{host, port}, o.Type), ln: ln, o: o}
	l.refused = o.Refused
	go l.acceptLoop()
	return l, nil
}

// simListener accepts connections of the simulated fabric.
type simListener struct {
	listenerCore
	ln net.Listener
	o  SimOptions
}

func (l *simListener) acceptLoop() {
	for {
		c, err := l.ln.Accept()
		if err != nil {
			l.Close()
			return
		}
		l.deliver(func() (net.Conn, error) { return l.setup(c) })
	}
}

func (l *simListener) setup(c net.Conn) (net.Conn, error) {
	c.SetDeadline(time.Now().Add(5 * time.Second))
	var h [simHello]byte
	if _, err := io.ReadFull(c, h[:]); err != nil || [8]byte(h[:8]) != simMagic {
		c.Close()
		return nil, errors.New("not a simulated rdma client")
	}
	typ, port := QPType(h[8]), int(binary.BigEndian.Uint16(h[10:]))
	if typ != l.o.Type {
		msg := modeMismatch(l.addr, l.o.Type, typ)
		b := append([]byte{1, byte(len(msg) >> 8), byte(len(msg))}, msg...)
		c.Write(b)
		c.Close()
		return nil, l.refuse(tcpAddr("127.0.0.1", port), errors.New(msg))
	}
	if _, err := c.Write([]byte{0}); err != nil {
		c.Close()
		return nil, err
	}
	c.SetDeadline(time.Time{})
	qp := NewWireQP(c, typ, l.o.Queues, rand.Uint32())
	conn, err := NewConn(qp, l.serverConn(l.o.Conn))
	if err != nil {
		return nil, err
	}
	qp.Establish()
	return &NetConn{Conn: conn, local: tcpAddr(l.addr.Host, l.addr.Port), remote: tcpAddr("127.0.0.1", port)}, nil
}

// Close implements net.Listener; the socket file goes with it.
func (l *simListener) Close() error {
	l.closing(func() { l.ln.Close() })
	return nil
}

// DialSim connects to HOST:PORT of the simulated fabric within ctx.
func DialSim(ctx context.Context, addr string, o SimOptions) (net.Conn, error) {
	host, port, err := splitAddr("connect", addr)
	if err != nil {
		return nil, err
	}
	if o.Type == 0 {
		o.Type = RC
	}
	dir, err := simDir()
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	var c net.Conn
	for _, path := range []string{simSocket(dir, host, port), simSocket(dir, "", port)} {
		if c, err = d.DialContext(ctx, "unix", path); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("rdma connect %s: connection refused (simulated: nothing listens in %s)", addr, dir)
	}
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	local := 1024 + rand.IntN(60000)
	var h [simHello]byte
	copy(h[:], simMagic[:])
	h[8] = byte(o.Type)
	binary.BigEndian.PutUint16(h[10:], uint16(local))
	var st [3]byte
	_, err = c.Write(h[:])
	if err == nil {
		_, err = io.ReadFull(c, st[:1])
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("rdma connect %s: %w", addr, err)
	}
	if st[0] != 0 {
		io.ReadFull(c, st[1:])
		msg := make([]byte, int(st[1])<<8|int(st[2]))
		io.ReadFull(c, msg)
		c.Close()
		return nil, fmt.Errorf("rdma connect %s: %w", addr, rejected(fmt.Errorf("refused: %s", msg), o.Type))
	}
	c.SetDeadline(time.Time{})
	cfg := o.Conn
	cfg.Role = Client
	qp := NewWireQP(c, o.Type, o.Queues, rand.Uint32())
	conn, err := NewConn(qp, cfg)
	if err != nil {
		return nil, fmt.Errorf("rdma connect %s: %w", addr, err)
	}
	qp.Establish()
	return &NetConn{Conn: conn, local: tcpAddr("127.0.0.1", local), remote: tcpAddr(host, port)}, nil
}
