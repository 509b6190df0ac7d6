package server

import (
	"strings"
	"testing"
)

// TestSlowlogTimedCommands: at a positive threshold only the commands
// whose cost grows with the data are timed on their own (slowlog.go), so
// the pipelined GET/SET path reads no clock per command.
func TestSlowlogTimedCommands(t *testing.T) {
	tab := table()
	for name, want := range map[string]bool{
		"get": false, "set": false, "incr": false, "lpush": false, "ping": false, "exec": false,
		"keys": true, "sort": true, "lrange": true, "sunionstore": true, "flushall": true, "mset": true,
	} {
		if got := tab.byName[name].slowTimed; got != want {
			t.Errorf("%s: timed %v, want %v", name, got, want)
		}
	}
}

// TestSlowlogPathsAndBlocking: with every command recorded, a goroutine-
// path client's entry carries its address and name, and a command that
// blocks is not recorded while it waits.
func TestSlowlogPathsAndBlocking(t *testing.T) {
	srv, addr := startServer(t, DefaultConfig())
	admin := dialTest(t, addr)
	admin.must(`"OK"`, "CONFIG", "SET", "slowlog-log-slower-than", "0")
	p := pipeClient(t, srv)
	p.must(`"OK"`, "CLIENT", "SETNAME", "piped")
	p.must(`"OK"`, "SET", "k", strings.Repeat("x", 130))
	got := admin.do("SLOWLOG", "GET", "1")
	if !strings.Contains(got, `["SET" "k" "`+strings.Repeat("x", 128)+`... (2 more bytes)"] "127.0.0.1:5555" "piped"`) {
		t.Errorf("SLOWLOG GET 1: %s", got)
	}
	admin.must(`"OK"`, "SLOWLOG", "RESET")
	p.send("BLPOP", "nothing", "0")
	waitBlocked(t, admin, 1)
	if got := admin.do("SLOWLOG", "GET"); strings.Contains(got, "BLPOP") {
		t.Errorf("a blocked BLPOP is recorded: %s", got)
	}
	admin.must("(integer) 1", "RPUSH", "nothing", "v")
	if got := p.read(); got != `*["nothing" "v"]` {
		t.Errorf("BLPOP: %s", got)
	}
}
