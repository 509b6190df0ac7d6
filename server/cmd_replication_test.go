package server

import "testing"

// TestWaitTimesOut: WAIT for a replica the server never has replies 0
// when its timeout passes (server_more.txt checks the rest against
// redis-server), and the client's next command runs after it.
func TestWaitTimesOut(t *testing.T) {
	srv, addr := startServer(t, DefaultConfig())
	for _, kind := range []string{"loop", "pipe"} {
		c := dialKind(t, srv, addr, kind)
		c.send("WAIT", "1", "20")
		c.send("PING")
		if got := c.read(); got != "(integer) 0" {
			t.Errorf("%s: WAIT: %s", kind, got)
		}
		if got := c.read(); got != `"PONG"` {
			t.Errorf("%s: after WAIT: %s", kind, got)
		}
	}
}
