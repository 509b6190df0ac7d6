package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/dpulab/dpulab/server/rdma"
	"github.com/dpulab/dpulab/server/resp"
	"github.com/dpulab/dpulab/server/transport"
)

// base anchors every timestamp of the hot loop: monotonic nanoseconds since
// package start are cheap to compute and to subtract.
var base = time.Now()

func nanotime() int64 { return int64(time.Since(base)) }

// op is one request to send.
type op struct {
	cmd  uint8
	size int32
	key  int64
	// exp is a SET's expiry in seconds (0: none).
	exp int32
}

// Reply outcomes.
const (
	rOK = iota
	rHit
	rMiss
	rErr
)

// reply is what came back for one op.
type reply struct {
	at   int64 // nanotime when the reply was read
	kind uint8
	// errKind is the error reply's first word ("ERR", "NOAUTH", ...);
	// errMsg its whole text. Both only for rErr.
	errKind string
	errMsg  string
}

// client is one connection's hot loop: do sends ops as one pipeline and
// fills res with their replies. It returns how many replies it read; a
// non-nil error means the connection is broken and res[n:] got no reply.
type client interface {
	do(ops []op, res []reply) (n int, err error)
	close() error
}

// connSet remembers every raw connection so that they can all be closed at
// once: on Ctrl-C, on a stall after the run's end, on a failed connect.
type connSet struct {
	mu     sync.Mutex
	conns  []net.Conn
	closed bool
}

func (s *connSet) add(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		c.Close()
		return false
	}
	s.conns = append(s.conns, c)
	return true
}

func (s *connSet) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for _, c := range s.conns {
		c.Close()
	}
	s.conns = nil
}

// countConn counts bytes on the wire into its target's counters.
type countConn struct {
	net.Conn
	io *ioCounters
}

func (c *countConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.io.recv.Add(int64(n))
	return n, err
}

func (c *countConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.io.sent.Add(int64(n))
	return n, err
}

// dial connects to ep through the transport seam within timeout, counted
// and remembered in set.
func dial(ctx context.Context, cfg *Config, ep transport.Endpoint, ioc *ioCounters, set *connSet) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.ConnectTimeoutFor(ep))
	defer cancel()
	nc, err := transport.Dial(ctx, ep, transport.Options{RDMA: cfg.RDMA, SourceAddr: cfg.SourceAddr})
	if err != nil {
		return nil, err
	}
	if !set.add(nc) {
		return nil, context.Canceled
	}
	return &countConn{Conn: nc, io: ioc}, nil
}

// errKindOf names a connection-level error for errors_by_kind.
func errKindOf(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, net.ErrClosed), errors.Is(err, io.ErrUnexpectedEOF):
		return "closed"
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, resp.ErrProtocol), errors.Is(err, rdma.ErrProtocol):
		return "protocol"
	case errors.Is(err, rdma.ErrLostWrite):
		// UC: a write lost or truncated on the way, detected (issue 12).
		return "lost_write"
	case errors.Is(err, rdma.ErrPeerDead):
		return "timeout"
	}
	return "io"
}

// kindCache interns error kinds and messages so that counting an error
// reply allocates only the first time a text is seen on a connection.
type kindCache struct {
	kinds map[string]string
	msgs  map[string]string
}

func newKindCache() kindCache {
	return kindCache{kinds: map[string]string{}, msgs: map[string]string{}}
}

// of returns the error's first word ("ERR", "WRONGTYPE", "NOAUTH").
func (k kindCache) of(msg []byte) string {
	word := msg
	for i, c := range msg {
		if c == ' ' {
			word = msg[:i]
			break
		}
	}
	if len(word) == 0 {
		word = []byte("ERR")
	}
	if s, ok := k.kinds[string(word)]; ok {
		return s
	}
	s := string(word)
	k.kinds[s] = s
	return s
}

// msg interns a whole error message; past 64 distinct ones it returns the
// kind alone rather than grow without bound.
func (k kindCache) msg(m []byte) string {
	if s, ok := k.msgs[string(m)]; ok {
		return s
	}
	if len(k.msgs) >= 64 {
		return k.of(m)
	}
	s := string(m)
	k.msgs[s] = s
	return s
}

// stampReader timestamps reads: a reply arrived when the read that
// completed it returned. Every reply resp.Reader parses out of one read
// shares that time, which is both more exact (parsing is not server
// latency) and cheaper than a clock read per reply.
type stampReader struct {
	rd io.Reader
	at int64 // nanotime when the last read returned
}

func (s *stampReader) Read(p []byte) (int, error) {
	n, err := s.rd.Read(p)
	s.at = nanotime()
	return n, err
}

// replyBuf is where a connection's reply buffer starts: resp.NewReader's
// 64 KiB for each of 80 targets × 50 clients would be 256 MB before a
// single request; the buffer doubles to what the pipeline's replies need.
const replyBuf = 4 << 10

// leanConn is the lean client path: requests are appended into one buffer
// and written with one syscall per pipeline; replies are parsed in place.
// Nothing is allocated per request.
type leanConn struct {
	nc    net.Conn
	stamp stampReader
	rd    *resp.Reader
	wbuf  []byte
	key   []byte // prefix + number, rewritten per request
	num   []byte // scratch for an expiry's digits
	plen  int
	val   []byte
	kinds kindCache
}

var (
	setHead   = []byte("*3\r\n$3\r\nSET\r\n")
	setExHead = []byte("*5\r\n$3\r\nSET\r\n")
	exArg     = []byte("$2\r\nEX\r\n")
	getHead   = []byte("*2\r\n$3\r\nGET\r\n")
)

func dialLean(ctx context.Context, cfg *Config, ep transport.Endpoint, ioc *ioCounters, set *connSet, val []byte) (*leanConn, error) {
	nc, err := dial(ctx, cfg, ep, ioc, set)
	if err != nil {
		return nil, err
	}
	c := &leanConn{
		nc:    nc,
		stamp: stampReader{rd: nc},
		key:   []byte(cfg.KeyPrefix),
		plen:  len(cfg.KeyPrefix),
		val:   val,
		kinds: newKindCache(),
	}
	c.rd = resp.NewReaderSize(&c.stamp, replyBuf)
	if err := c.handshake(ctx, cfg, ep); err != nil {
		nc.Close()
		return nil, err
	}
	return c, nil
}

// handshake authenticates, picks the protocol and selects the database,
// within the connect timeout: a server that accepts and never answers is as
// unreachable as one that refuses.
func (c *leanConn) handshake(ctx context.Context, cfg *Config, ep transport.Endpoint) error {
	user := cfg.User
	if user == "" {
		user = "default"
	}
	var cmds [][]string
	switch {
	case cfg.Protocol == 3 && cfg.Password != "":
		cmds = append(cmds, []string{"HELLO", "3", "AUTH", user, cfg.Password})
	case cfg.Protocol == 3:
		cmds = append(cmds, []string{"HELLO", "3"})
	case cfg.Password != "" && cfg.User != "":
		cmds = append(cmds, []string{"AUTH", cfg.User, cfg.Password})
	case cfg.Password != "":
		cmds = append(cmds, []string{"AUTH", cfg.Password})
	}
	if cfg.SelectDB != 0 {
		cmds = append(cmds, []string{"SELECT", strconv.Itoa(cfg.SelectDB)})
	}
	if len(cmds) == 0 {
		return nil
	}
	dl := time.Now().Add(cfg.ConnectTimeoutFor(ep))
	if d, ok := ctx.Deadline(); ok && d.Before(dl) {
		dl = d
	}
	c.nc.SetDeadline(dl)
	defer c.nc.SetDeadline(time.Time{})
	for _, cmd := range cmds {
		if _, err := c.nc.Write(resp.AppendCommand(nil, cmd...)); err != nil {
			return err
		}
		v, err := c.rd.ReadReply()
		if err != nil {
			return err
		}
		if !v.IsError() {
			continue
		}
		switch kind := c.kinds.of(v.Str); {
		case cmd[0] == "SELECT":
			return fmt.Errorf("SELECT %d refused: %s", cfg.SelectDB, v.Str)
		case cmd[0] == "HELLO" && kind != "NOAUTH" && kind != "WRONGPASS":
			return fmt.Errorf("HELLO 3 refused (%s); the server may not speak RESP3: try --protocol resp2", v.Str)
		default:
			return fmt.Errorf("authentication failed: %s", v.Str)
		}
	}
	return nil
}

func (c *leanConn) do(ops []op, res []reply) (int, error) {
	b := c.wbuf[:0]
	for _, o := range ops {
		c.key = strconv.AppendInt(c.key[:c.plen], o.key, 10)
		switch {
		case o.cmd == cmdSet && o.exp > 0:
			// memtier's form: SET key value EX seconds.
			b = append(b, setExHead...)
			b = resp.AppendBulk(b, c.key)
			b = resp.AppendBulk(b, c.val[:o.size])
			b = append(b, exArg...)
			c.num = strconv.AppendInt(c.num[:0], int64(o.exp), 10)
			b = resp.AppendBulk(b, c.num)
		case o.cmd == cmdSet:
			b = append(b, setHead...)
			b = resp.AppendBulk(b, c.key)
			b = resp.AppendBulk(b, c.val[:o.size])
		default:
			b = append(b, getHead...)
			b = resp.AppendBulk(b, c.key)
		}
	}
	c.wbuf = b
	if _, err := c.nc.Write(b); err != nil {
		return 0, err
	}
	for i := range ops {
		v, err := c.rd.ReadReply()
		if err != nil {
			return i, err
		}
		r := &res[i]
		r.at = c.stamp.at
		switch {
		case v.IsError():
			r.kind = rErr
			r.errKind = c.kinds.of(v.Str)
			r.errMsg = c.kinds.msg(v.Str)
		case ops[i].cmd == cmdGet && v.Null:
			r.kind = rMiss
		case ops[i].cmd == cmdGet:
			r.kind = rHit
		default:
			r.kind = rOK
		}
	}
	return len(ops), nil
}

func (c *leanConn) close() error { return c.nc.Close() }
