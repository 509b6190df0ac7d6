package server

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// withCommands returns a copy of srv's command table with cmds added, and
// sizes srv's statistics to it: a test-only registration that leaves the
// shared table alone.
func withCommands(srv *Server, cmds ...*command) {
	base := srv.cmds
	t := &commandTable{byName: make(map[string]*command, len(base.byName)+len(cmds))}
	for k, v := range base.byName {
		t.byName[k] = v
	}
	t.list = append(t.list, base.list...)
	t.all = append(t.all, base.all...)
	for _, c := range cmds {
		c.id = len(t.all)
		t.byName[c.Name] = c
		t.list = append(t.list, c)
		t.all = append(t.all, c)
	}
	srv.cmds = t
	srv.stats.init(len(t.all))
}

// startWith serves srv on a free loopback port until the test ends.
func startWith(t *testing.T, srv *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("server did not stop")
		}
	})
	return ln.Addr().String()
}

// A command that panics answers its client an internal error and closes
// it; every other client, and the keyspace, carry on; the panic is logged
// once and counted in INFO errorstats. On both connection paths, and for
// a panic inside EXEC and after the command half-wrote its reply.
func TestPanicContained(t *testing.T) {
	for _, path := range []string{"loop", "goroutine"} {
		t.Run(path, func(t *testing.T) {
			if path == "goroutine" {
				t.Setenv(loopEnv, "goroutine")
			}
			log := &syncBuffer{}
			cfg := DefaultConfig().WithLog(log)
			cfg.Port, cfg.Bind = 6379, []string{"127.0.0.1"}
			srv, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			withCommands(srv,
				&command{Name: "testpanic", Arity: 1, Flags: flagReadonly, Group: "server", Since: "7.0.0",
					Fn: func(c *Client, args [][]byte) {
						c.writeArray(2) // a half-written reply is dropped
						c.writeInt(1)
						var none []int
						_ = none[len(args)] // index out of range: a runtime panic
					}},
			)
			addr := startWith(t, srv)
			other := dialTest(t, addr)
			other.must(`"OK"`, "SET", "k", "v")
			for _, seq := range [][][]string{
				{{"TESTPANIC"}},
				{{"MULTI"}, {"SET", "k2", "v2"}, {"TESTPANIC"}, {"EXEC"}},
			} {
				bad := dialTest(t, addr)
				want := "(error) ERR internal error in TESTPANIC"
				var got string
				for _, cmd := range seq {
					got = bad.do(cmd...)
				}
				if got != want {
					t.Fatalf("%v: got %s, want %s", seq, got, want)
				}
				// Closed after the reply.
				bad.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
				if _, err := bad.r.ReadReply(); err == nil {
					t.Fatalf("%v: connection still open after an internal error", seq)
				}
				// Every other client keeps working, and the server still
				// takes new ones.
				other.must(`"v"`, "GET", "k")
				fresh := dialTest(t, addr)
				fresh.must(`"PONG"`, "PING")
				fresh.must(`"v"`, "GET", "k")
			}
			info := other.do("INFO", "errorstats")
			if !strings.Contains(info, "errorstat_INTERNAL:count=2") {
				t.Errorf("INFO errorstats has no errorstat_INTERNAL:count=2:\n%s", info)
			}
			// The stack is logged once per command name within a minute.
			if n := strings.Count(log.String(), "Internal error in command 'testpanic'"); n != 1 {
				t.Errorf("logged %d times, want once:\n%s", n, log.String())
			}
			if !strings.Contains(log.String(), "contain_test.go") {
				t.Errorf("the log has no stack:\n%s", log.String())
			}
		})
	}
}
