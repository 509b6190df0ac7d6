//go:build linux

package server

import (
	"context"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/server/resp"
)

// startLoopServer serves cfg on a free loopback port and returns the
// server, its address and a stop function that waits for Serve to return.
func startLoopServer(t *testing.T, cfg Config) (*Server, string, func()) {
	t.Helper()
	srv, err := New(cfg.WithLog(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), ln) }()
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}
	return srv, ln.Addr().String(), stop
}

func (s *Server) clientByName(name string) *Client {
	s.clientsMu.Lock()
	defer s.clientsMu.Unlock()
	for _, c := range s.clients {
		s.mu.Lock()
		n := c.name
		s.mu.Unlock()
		if n == name {
			return c
		}
	}
	return nil
}

func TestEventLoopServesTCPClients(t *testing.T) {
	if os.Getenv(loopEnv) == "goroutine" {
		t.Skip(loopEnv + "=goroutine")
	}
	srv, addr, stop := startLoopServer(t, DefaultConfig())
	defer stop()
	c := dialTest(t, addr)
	c.must(`"OK"`, "CLIENT", "SETNAME", "probe")
	if got := srv.clientByName("probe"); got == nil || got.loop == nil || got.conn != nil {
		t.Fatalf("client not served by the event loop: %+v", got)
	}
}

// Replies larger than the socket buffers must arrive whole and in order
// while the client reads slowly, and other clients must be served
// meanwhile.
func TestEventLoopSlowReaderBigReplies(t *testing.T) {
	_, addr, stop := startLoopServer(t, DefaultConfig())
	defer stop()
	c := dialTest(t, addr)
	val := strings.Repeat("v", 256<<10)
	if got := c.do("SET", "big", val); got != `"OK"` {
		t.Fatalf("SET: %.40s", got)
	}
	const n = 40 // 10 MB of replies, well past flushAt and the socket buffers
	var req []byte
	for i := 0; i < n; i++ {
		req = resp.AppendCommand(req, "GET", "big")
		req = resp.AppendCommand(req, "ECHO", strconv.Itoa(i))
	}
	if _, err := c.conn.Write(req); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // let the server hit a full socket
	other := dialTest(t, addr)
	other.must(`"PONG"`, "PING")
	c.conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	for i := 0; i < n; i++ {
		v, err := c.r.ReadReply()
		if err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		if got := v.String(); len(got) != len(val)+2 {
			t.Fatalf("reply %d: %d bytes", i, len(got))
		}
		if got := c.read(); got != strconv.Quote(strconv.Itoa(i)) {
			t.Fatalf("echo %d: %s", i, got)
		}
	}
	c.must(`"PONG"`, "PING")
}

// Many pipelined commands split across reads, with partial commands at the
// read boundaries, are all answered in order.
func TestEventLoopPipelineAcrossReads(t *testing.T) {
	_, addr, stop := startLoopServer(t, DefaultConfig())
	defer stop()
	c := dialTest(t, addr)
	const n = 20000
	var req []byte
	for i := 0; i < n; i++ {
		req = resp.AppendCommand(req, "SET", "k"+strconv.Itoa(i), strconv.Itoa(i))
		req = resp.AppendCommand(req, "GET", "k"+strconv.Itoa(i))
	}
	go func() {
		for len(req) > 0 {
			m := min(len(req), 1000+len(req)%777)
			c.conn.Write(req[:m])
			req = req[m:]
		}
	}()
	c.conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	for i := 0; i < n; i++ {
		if got := c.read(); got != `"OK"` {
			t.Fatalf("SET %d: %s", i, got)
		}
		if got := c.read(); got != strconv.Quote(strconv.Itoa(i)) {
			t.Fatalf("GET %d: %s", i, got)
		}
	}
}

func TestEventLoopClientKill(t *testing.T) {
	_, addr, stop := startLoopServer(t, DefaultConfig())
	defer stop()
	victim := dialTest(t, addr)
	victim.must(`"OK"`, "CLIENT", "SETNAME", "victim")
	id := victim.do("CLIENT", "ID")
	killer := dialTest(t, addr)
	killer.must(`(integer) 1`, "CLIENT", "KILL", "ID", strings.TrimPrefix(id, "(integer) "))
	victim.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := victim.conn.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("killed client's connection: %v, want EOF", err)
	}
	killer.must(`(integer) 1`, "CLIENT", "KILL", "SKIPME", "no", "ID", strings.TrimPrefix(killer.do("CLIENT", "ID"), "(integer) "))
	killer.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := killer.conn.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("self-killed client's connection: %v, want EOF", err)
	}
}

// Shutdown closes every client descriptor and ends the loop's goroutine.
func TestEventLoopShutdownLeavesNothing(t *testing.T) {
	countFDs := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd")
		}
		return len(ents)
	}
	runtime.GC()
	fds, gs := countFDs(), runtime.NumGoroutine()
	srv, addr, stop := startLoopServer(t, DefaultConfig())
	var conns []*testConn
	for i := 0; i < 20; i++ {
		c := dialTest(t, addr)
		c.must(`"PONG"`, "PING")
		conns = append(conns, c)
	}
	// A client with unread replies pending at shutdown.
	conns[0].conn.Write(resp.AppendCommand(nil, "SET", "big", strings.Repeat("x", 4<<20)))
	conns[0].read()
	var req []byte
	for i := 0; i < 10; i++ {
		req = resp.AppendCommand(req, "GET", "big")
	}
	conns[0].conn.Write(req)
	time.Sleep(50 * time.Millisecond)
	stop()
	for _, c := range conns {
		c.conn.Close()
	}
	if n := srv.nclients.Load(); n != 0 {
		t.Errorf("%d clients counted after shutdown", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		nf, ng := countFDs(), runtime.NumGoroutine()
		if nf <= fds && ng <= gs {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after shutdown: %d fds (was %d), %d goroutines (was %d)", nf, fds, ng, gs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A client gone while the server still writes to it is dropped, and the
// server goes on.
func TestEventLoopPeerResetMidReply(t *testing.T) {
	srv, addr, stop := startLoopServer(t, DefaultConfig())
	defer stop()
	c := dialTest(t, addr)
	if got := c.do("SET", "big", strings.Repeat("x", 1<<20)); got != `"OK"` {
		t.Fatalf("SET: %.40s", got)
	}
	var req []byte
	for i := 0; i < 20; i++ {
		req = resp.AppendCommand(req, "GET", "big")
	}
	c.conn.Write(req)
	time.Sleep(50 * time.Millisecond)
	c.conn.(*net.TCPConn).SetLinger(0)
	c.conn.Close()
	deadline := time.Now().Add(5 * time.Second)
	for srv.nclients.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d clients still counted", srv.nclients.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	dialTest(t, addr).must(`(integer) 1048576`, "STRLEN", "big")
}
