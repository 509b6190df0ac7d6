package server

import (
	"net"
	"testing"
	"time"

	"github.com/dpulab/dpulab/server/resp"
)

// testConn is a raw RESP connection for tests: commands go out as RESP
// arrays, replies come back rendered by resp.Value.String, e.g.
// `"v"`, `(nil)`, `(integer) 1`, `(error) ERR syntax error`, `*["a" "b"]`.
type testConn struct {
	t    testing.TB
	conn net.Conn
	r    *resp.Reader
}

func dialTest(t testing.TB, addr string) *testConn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { conn.Close() })
	return &testConn{t: t, conn: conn, r: resp.NewReader(conn)}
}

// newTestServer starts a server with default config and returns a client.
func newTestServer(t testing.TB) (*testConn, string) {
	t.Helper()
	addr := StartTest(t, DefaultConfig())
	return dialTest(t, addr), addr
}

// do sends one command and returns its reply rendered as a string.
func (tc *testConn) do(args ...string) string {
	tc.t.Helper()
	tc.conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := tc.conn.Write(resp.AppendCommand(nil, args...)); err != nil {
		tc.t.Fatalf("write %q: %v", args, err)
	}
	return tc.read()
}

func (tc *testConn) read() string {
	tc.t.Helper()
	v, err := tc.r.ReadReply()
	if err != nil {
		tc.t.Fatalf("read reply: %v", err)
	}
	return v.String()
}

// must sends a command and checks its rendered reply.
func (tc *testConn) must(want string, args ...string) {
	tc.t.Helper()
	if got := tc.do(args...); got != want {
		tc.t.Errorf("%q: got %s, want %s", args, got, want)
	}
}

func dialRaw(addr string) (net.Conn, error) { return net.DialTimeout("tcp", addr, time.Second) }
