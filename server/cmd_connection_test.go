package server

import (
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestConnectionCommands(t *testing.T) {
	c, _ := newTestServer(t)
	c.must(`"PONG"`, "PING")
	c.must(`"hi"`, "PING", "hi")
	c.must("(error) ERR wrong number of arguments for 'ping' command", "PING", "a", "b")
	c.must(`"x y"`, "ECHO", "x y")
	c.must(`"OK"`, "SELECT", "3")
	c.must("(error) ERR DB index is out of range", "SELECT", "16")
	c.must("(error) ERR value is not an integer or out of range", "SELECT", "x")
	c.must("(error) ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?", "AUTH", "pw")
	c.must("(nil)", "CLIENT", "GETNAME")
	c.must(`"OK"`, "CLIENT", "SETNAME", "me")
	c.must(`"me"`, "CLIENT", "GETNAME")
	c.must("(error) ERR Client names cannot contain spaces, newlines or special characters.", "CLIENT", "SETNAME", "a b")
	c.must(`"OK"`, "CLIENT", "SETINFO", "LIB-NAME", "go-redis(,go1.26)")
	c.must("(error) ERR unknown subcommand 'NOPE'. Try CLIENT HELP.", "CLIENT", "NOPE")
	c.must("(error) ERR wrong number of arguments for 'client|setname' command", "CLIENT", "SETNAME")
	if got := c.do("CLIENT", "LIST"); !strings.Contains(got, "name=me") || !strings.Contains(got, "db=3") || !strings.Contains(got, "cmd=client|list") {
		t.Errorf("CLIENT LIST = %s", got)
	}
	c.must(`"RESET"`, "RESET")
	c.must("(nil)", "CLIENT", "GETNAME")
	c.must(`"OK"`, "QUIT")
	c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.conn.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("after QUIT read err = %v, want EOF", err)
	}
}

func TestHello(t *testing.T) {
	c, _ := newTestServer(t)
	got := c.do("HELLO", "3")
	if !strings.HasPrefix(got, `%["server" "redis" "version" "7.0.15" "proto" (integer) 3 "id" (integer) `) ||
		!strings.HasSuffix(got, `"mode" "standalone" "role" "master" "modules" *[]]`) {
		t.Errorf("HELLO 3 = %s", got)
	}
	c.must("(nil)", "GET", "missing") // RESP3 null
	c.must("(error) NOPROTO unsupported protocol version", "HELLO", "4")
	c.must("(error) ERR Protocol version is not an integer or out of range", "HELLO", "x")
	c.must("(error) ERR Syntax error in HELLO option 'bogus'", "HELLO", "3", "bogus")
	if got := c.do("HELLO", "2", "SETNAME", "n"); !strings.HasPrefix(got, `*["server"`) {
		t.Errorf("HELLO 2 = %s (want a flat array)", got)
	}
	c.must(`"n"`, "CLIENT", "GETNAME")
}

func TestRequirePass(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RequirePass = "s3cret"
	addr := StartTest(t, cfg)
	c := dialTest(t, addr)
	c.must("(error) NOAUTH Authentication required.", "GET", "k")
	c.must("(error) ERR unknown command 'NOPE', with args beginning with: ", "NOPE")
	c.must("(error) NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time", "HELLO", "3")
	c.must("(error) WRONGPASS invalid username-password pair or user is disabled.", "AUTH", "nope")
	c.must("(error) WRONGPASS invalid username-password pair or user is disabled.", "HELLO", "3", "AUTH", "default", "nope")
	c.must(`"OK"`, "AUTH", "s3cret")
	c.must("(nil)", "GET", "k")
	c2 := dialTest(t, addr)
	if got := c2.do("HELLO", "3", "AUTH", "default", "s3cret"); !strings.HasPrefix(got, "%[") {
		t.Errorf("HELLO 3 AUTH = %s", got)
	}
	c2.must(`"OK"`, "AUTH", "default", "s3cret")
}

// fakeRemote makes a connection look like it comes from another host.
type fakeRemote struct {
	net.Conn
	addr net.Addr
}

func (f fakeRemote) RemoteAddr() net.Addr { return f.addr }

func TestProtectedMode(t *testing.T) {
	for _, tt := range []struct {
		name     string
		pass     string
		remote   string
		refused  bool
		protectd bool
	}{
		{"loopback allowed", "", "127.0.0.1", false, true},
		{"remote refused", "", "10.1.2.3", true, true},
		{"remote with password allowed", "pw", "10.1.2.3", false, true},
		{"protected mode off", "", "10.1.2.3", false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.RequirePass = tt.pass
			cfg.ProtectedMode = tt.protectd
			srv, err := New(cfg.WithLog(io.Discard))
			if err != nil {
				t.Fatal(err)
			}
			server, client := net.Pipe()
			defer client.Close()
			srv.wg.Add(1)
			go srv.handle(fakeRemote{server, &net.TCPAddr{IP: net.ParseIP(tt.remote), Port: 5555}})
			client.SetDeadline(time.Now().Add(5 * time.Second))
			go client.Write([]byte("PING\r\n"))
			buf := make([]byte, 4096)
			n, _ := client.Read(buf)
			got := string(buf[:n])
			if tt.refused != strings.HasPrefix(got, "-DENIED Redis is running in protected mode") {
				t.Fatalf("reply %q, refused want %v", got, tt.refused)
			}
			if !tt.refused && got != "+PONG\r\n" && !strings.HasPrefix(got, "-NOAUTH") {
				t.Fatalf("reply %q", got)
			}
			srv.stop()
		})
	}
}

func TestMaxClients(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxClients = 1
	addr := StartTest(t, cfg)
	c := dialTest(t, addr)
	c.must(`"PONG"`, "PING")
	c2 := dialTest(t, addr)
	c2.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := c2.read()
	if got != "(error) ERR max number of clients reached" {
		t.Fatalf("second client got %s", got)
	}
}

// A client that announces a huge bulk and sends nothing must cost the
// server nothing like the announced size.
func TestHugeBulkAnnouncedNotAllocated(t *testing.T) {
	c, _ := newTestServer(t)
	c.must(`"PONG"`, "PING")
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	c.conn.Write([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$500000000\r\nabc"))
	time.Sleep(200 * time.Millisecond)
	runtime.ReadMemStats(&after)
	if grew := int64(after.TotalAlloc) - int64(before.TotalAlloc); grew > 50<<20 {
		t.Fatalf("server allocated %d MB after a 500 MB announcement with no data", grew>>20)
	}
}

func TestProtocolLimits(t *testing.T) {
	c, _ := newTestServer(t)
	c.conn.Write([]byte("*1\r\n$600000000\r\n"))
	if got := c.read(); got != "(error) ERR Protocol error: invalid bulk length" {
		t.Fatalf("over proto-max-bulk-len: %s", got)
	}
	c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.conn.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("connection not closed after protocol error: %v", err)
	}
	c2, _ := newTestServer(t)
	c2.conn.Write([]byte("*2147483648\r\n"))
	if got := c2.read(); got != "(error) ERR Protocol error: invalid multibulk length" {
		t.Fatalf("multibulk: %s", got)
	}
}

func TestQueryBufferLimit(t *testing.T) {
	cfg := DefaultConfig()
	cfg.ClientQueryBufferLimit = 1 << 20
	addr := StartTest(t, cfg)
	c := dialTest(t, addr)
	c.conn.Write([]byte("*2\r\n$3\r\nGET\r\n$100000000\r\n"))
	chunk := make([]byte, 64<<10)
	var err error
	for i := 0; i < 64 && err == nil; i++ {
		_, err = c.conn.Write(chunk)
	}
	c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, rerr := c.conn.Read(make([]byte, 1))
	if err == nil && rerr == nil {
		t.Fatal("connection still open after exceeding client-query-buffer-limit")
	}
}

func TestIdleTimeout(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Timeout = time.Second
	cfg.Hz = 50
	addr := StartTest(t, cfg)
	c := dialTest(t, addr)
	c.must(`"PONG"`, "PING")
	c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	if _, err := c.conn.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("idle client: read err = %v, want EOF", err)
	}
	if el := time.Since(start); el < 500*time.Millisecond {
		t.Fatalf("closed after %v, before the 1s timeout", el)
	}
}

func TestPipelineAndInline(t *testing.T) {
	c, _ := newTestServer(t)
	var batch []byte
	for i := 0; i < 100; i++ {
		batch = append(batch, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"...)
	}
	batch = append(batch, "GET k\r\nINCR n\r\n"...)
	c.conn.Write(batch)
	for i := 0; i < 100; i++ {
		if got := c.read(); got != `"OK"` {
			t.Fatalf("reply %d: %s", i, got)
		}
	}
	if got := c.read(); got != `"v"` {
		t.Fatalf("inline GET: %s", got)
	}
	if got := c.read(); got != "(integer) 1" {
		t.Fatalf("inline INCR: %s", got)
	}
}
