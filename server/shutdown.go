package server

import (
	"strconv"
	"time"
)

// shutdownGrace bounds how long Serve, once told to stop (SIGTERM through
// its context, SHUTDOWN, Shutdown), waits for the event loop and the
// connection goroutines. They finish at once unless a command is running:
// it holds Server.mu, and nothing can interrupt it. Redis checks for a
// shutdown signal from its cron and its hooks in long operations and may
// exit mid-command; we do the same after the grace: Serve does the whole
// normal cleanup (pid file, Unix socket, log) and returns, and the program
// exits while the command still runs. Nothing is persisted, so nothing is
// left half-written on disk.
const shutdownGrace = 500 * time.Millisecond

// waitServed waits up to grace for the event loop and the connection
// goroutines to end, and reports whether they did.
func (s *Server) waitServed(grace time.Duration) bool {
	ch := make(chan struct{})
	go func() { s.wg.Wait(); close(ch) }()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// debugSleep is DEBUG SLEEP seconds (Redis's debugCommand): the server
// does nothing else meanwhile, which is what tests of latency and of
// shutdown during a long command want. Like Redis it reads the seconds
// with strtod and sleeps for nothing if they are not a number; a sleep
// is bounded by the client only through enable-debug-command.
func debugSleep(c *Client, args [][]byte) {
	secs, err := strconv.ParseFloat(string(args[2]), 64)
	if err == nil && secs > 0 {
		d := time.Duration(secs * float64(time.Second))
		if secs >= float64(1<<62)/float64(time.Second) {
			d = 1<<63 - 1
		}
		time.Sleep(d)
	}
	c.writeOK()
}
