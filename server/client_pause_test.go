package server

import (
	"strings"
	"testing"
)

// TestPauseAcrossPaths: clients of the event loop and of the goroutine
// path, paused by either, wait (never fail) and run their commands in
// order when CLIENT UNPAUSE from either path or the pause's timer ends the
// pause. testdata/diff/pause.txt checks the replies against redis-server; this
// checks the paths and the timer.
func TestPauseAcrossPaths(t *testing.T) {
	srv, addr := startServer(t, DefaultConfig())
	admin := dialTest(t, addr)
	for _, waiter := range []string{"loop", "pipe"} {
		for _, ender := range []string{"loop", "pipe", "timer"} {
			t.Run(waiter+"-released-by-"+ender, func(t *testing.T) {
				key := "p-" + waiter + ender
				w := dialKind(t, srv, addr, waiter)
				ms := "100000"
				if ender == "timer" {
					ms = "50"
				}
				admin.must(`"OK"`, "CLIENT", "PAUSE", ms, "WRITE")
				w.send("SET", key, "1")
				w.send("INCR", key)
				w.send("GET", key)
				if ender != "timer" {
					waitBlocked(t, admin, 1)
					if got := admin.do("INFO", "clients"); !strings.Contains(got, `blocked_clients:1\r\n`) {
						t.Errorf("INFO clients while paused:\n%s", got)
					}
					admin.must("(nil)", "GET", key) // reads run meanwhile
					dialKind(t, srv, addr, ender).must(`"OK"`, "CLIENT", "UNPAUSE")
				}
				for _, want := range []string{`"OK"`, "(integer) 2", `"2"`} {
					if got := w.read(); got != want {
						t.Errorf("after the pause: %s, want %s", got, want)
					}
				}
				waitBlocked(t, admin, 0)
			})
		}
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.blk.blocked != 0 || srv.pause.mode != pauseOff || len(srv.pause.waiting) != 0 {
		t.Errorf("after every pause: blocked %d, mode %d, waiting %d", srv.blk.blocked, srv.pause.mode, len(srv.pause.waiting))
	}
}

// TestPausedClientLeaves: a postponed client that disconnects is
// forgotten, CLIENT UNBLOCK does not release a postponed client (Redis
// 7.0.15 aborts there), and the pause ends cleanly.
func TestPausedClientLeaves(t *testing.T) {
	srv, addr := startServer(t, DefaultConfig())
	admin := dialTest(t, addr)
	admin.must(`"OK"`, "CLIENT", "PAUSE", "100000", "WRITE")
	for _, kind := range []string{"loop", "pipe"} {
		c := dialKind(t, srv, addr, kind)
		c.send("SET", "gone-"+kind, "1")
		waitBlocked(t, admin, 1)
		c.conn.Close()
		waitBlocked(t, admin, 0)
	}
	stay := dialTest(t, addr)
	id := strings.TrimPrefix(stay.do("CLIENT", "ID"), "(integer) ")
	stay.send("DEL", "x")
	waitBlocked(t, admin, 1)
	admin.must("(integer) 0", "CLIENT", "UNBLOCK", id)
	admin.must("(integer) 0", "CLIENT", "UNBLOCK", id, "ERROR")
	admin.must(`"OK"`, "CLIENT", "UNPAUSE")
	if got := stay.read(); got != "(integer) 0" {
		t.Errorf("DEL after the pause: %s", got)
	}
	admin.must("(integer) 0", "EXISTS", "gone-loop", "gone-pipe")
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.blk.blocked != 0 || len(srv.pause.waiting) != 0 {
		t.Errorf("blocked %d, waiting %d after the pause", srv.blk.blocked, len(srv.pause.waiting))
	}
}

// TestPauseAllHoldsEveryone: under ALL the pausing client's own next
// command waits for the timeout, and so does CLIENT UNPAUSE from another
// client, as in Redis 7.0.
func TestPauseAllHoldsEveryone(t *testing.T) {
	srv, addr := startServer(t, DefaultConfig())
	a, b := dialTest(t, addr), dialKind(t, srv, addr, "pipe")
	a.must(`"OK"`, "CLIENT", "PAUSE", "100", "ALL")
	b.send("CLIENT", "UNPAUSE")
	a.send("PING")
	if got := b.read(); got != `"OK"` {
		t.Errorf("UNPAUSE: %s", got)
	}
	if got := a.read(); got != `"PONG"` {
		t.Errorf("PING: %s", got)
	}
	// A pause too long for a timer still ends with CLIENT UNPAUSE.
	a.must(`"OK"`, "CLIENT", "PAUSE", "9223372036854775807", "WRITE")
	a.must(`"OK"`, "CLIENT", "UNPAUSE")
	a.must(`"OK"`, "SET", "k", "v")
}
