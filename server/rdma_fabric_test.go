package server

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/server/rdma"
	"github.com/dpulab/dpulab/server/resp"
)

// fabricListener is a net.Listener whose connections are the server ends
// of RDMA connections over rdma's in-memory fabric (the hardware's rules
// enforced): dial gives the client end of a new one.
type fabricListener struct {
	typ   rdma.QPType
	f     *rdma.Fabric
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newFabricListener(typ rdma.QPType) *fabricListener {
	return &fabricListener{typ: typ, f: rdma.NewFabric(), conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *fabricListener) dial(t *testing.T) net.Conn {
	t.Helper()
	link := l.f.Pair(l.typ, rdma.FabricOptions{})
	c, err := rdma.NewConn(link.Client, rdma.Config{Role: rdma.Client, RxSize: rdma.MinRxSize})
	if err != nil {
		t.Fatal(err)
	}
	s, err := rdma.NewConn(link.Server, rdma.Config{Role: rdma.Server, RxSize: rdma.MinRxSize})
	if err != nil {
		t.Fatal(err)
	}
	link.Establish()
	select {
	case l.conns <- fabricConn{s}:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not accept the fabric connection")
	}
	return fabricConn{c}
}

func (l *fabricListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *fabricListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *fabricListener) Addr() net.Addr { return fabricAddr }

var fabricAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}

// fabricConn gives an rdma.Conn the addresses of a net.Conn.
type fabricConn struct{ *rdma.Conn }

func (fabricConn) LocalAddr() net.Addr  { return fabricAddr }
func (fabricConn) RemoteAddr() net.Addr { return fabricAddr }

// TestRDMAFabricRepliesMatchTCP: the bundled server serves one script,
// sent pipelined in one go, over TCP and over Valkey's RDMA protocol on
// the in-memory fabric, RC and UC: pipelined SET/GET/APPEND/STRLEN with
// values from empty to three times the 64 KiB receive buffer, about 40
// times the buffer each way in all. The replies are byte-identical to
// TCP's; the fabric saw no broken rule.
func TestRDMAFabricRepliesMatchTCP(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	script := resp.AppendCommand(nil, "FLUSHALL")
	sent := 0
	for i := 0; sent < 40*rdma.MinRxSize; i++ {
		key := "k" + strconv.Itoa(rng.IntN(64))
		switch rng.IntN(4) {
		case 0, 1:
			size := rng.IntN(2000)
			if rng.IntN(20) == 0 {
				size = rng.IntN(3 * rdma.MinRxSize)
			}
			sent += size
			script = resp.AppendCommand(script, "SET", key, strings.Repeat(string(rune('a'+i%26)), size))
		case 2:
			script = resp.AppendCommand(script, "GET", key)
		default:
			script = resp.AppendCommand(script, "APPEND", key, strconv.Itoa(i))
			script = resp.AppendCommand(script, "STRLEN", key)
		}
	}
	script = resp.AppendCommand(script, "PING", "end of script")
	end := []byte("$13\r\nend of script\r\n")

	cfg := DefaultConfig()
	cfg.Bind = []string{"127.0.0.1"}
	cfg.Port = testpeer.FreePorts(t, 1)
	srv, err := New(cfg.WithLog(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	lns, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	rc, uc := newFabricListener(rdma.RC), newFabricListener(rdma.UC)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, append(lns, rc, uc)...) }()
	defer func() { cancel(); <-done }()

	run := func(c net.Conn) []byte {
		t.Helper()
		defer c.Close()
		c.SetDeadline(time.Now().Add(60 * time.Second))
		werr := make(chan error, 1)
		go func() { _, err := c.Write(script); werr <- err }()
		var got []byte
		buf := make([]byte, 64<<10)
		for !bytes.HasSuffix(got, end) {
			n, err := c.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				t.Fatalf("after %d bytes of replies: %v", len(got), err)
			}
		}
		if err := <-werr; err != nil {
			t.Fatal(err)
		}
		return got
	}
	tc, err := net.Dial("tcp", lns[0].Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	want := run(tc)
	for _, l := range []*fabricListener{rc, uc} {
		got := run(l.dial(t))
		if !bytes.Equal(got, want) {
			i := 0
			for i < min(len(got), len(want)) && got[i] == want[i] {
				i++
			}
			t.Errorf("%s: %d bytes of replies, TCP's %d; they differ from byte %d: %.60q against TCP's %.60q", l.typ, len(got), len(want), i, got[i:], want[i:])
		}
		if v := l.f.Violations(); v != 0 {
			t.Errorf("%s: %d broken fabric rules", l.typ, v)
		}
	}
	t.Logf("script %d bytes (values %d bytes, %.0f× the 64 KiB receive buffer), replies %d bytes: byte-identical over TCP, RC and UC",
		len(script), sent, float64(sent)/rdma.MinRxSize, len(want))
}
