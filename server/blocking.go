package server

import (
	"math"
	"math/big"
	"strings"
	"time"
)

// Blocked clients, as Redis 7.0's blocked.c. A blocking command (BLPOP,
// BZPOPMIN, XREAD BLOCK, ...) that finds nothing to serve registers its
// client on each of its keys, in arrival order (db.blocking), and the
// client's remaining input waits (runCommands runs nothing for a blocked
// client). Any change to a key with waiters marks the key ready
// (db.touch); after the command that changed it (after EXEC for a
// transaction) serveReady offers every ready key to its waiters, first
// come first served, each one taking what it can. What serving writes
// (the pop, a BLMOVE's push) can make more keys ready, served in the same
// round. A served, timed-out (a timer per client), CLIENT UNBLOCKed or
// departed client leaves every key it waited on.

// blockingState is the server's side, guarded by Server.mu.
type blockingState struct {
	ready   []readyKey // keys changed since the last serveReady, each once
	blocked int        // blocked clients (INFO blocked_clients)
	timed   int        // of which with a timeout (INFO clients_in_timeout_table)
	scratch *Client    // see Server.replyWriter
}

// readyKey is a key with waiters that changed.
type readyKey struct {
	d   *db
	key string
}

// dbBlocking is a database's waiters; db.blocking is nil while nobody
// waits, so that touch costs one nil check on the hot path.
type dbBlocking struct {
	srv     *blockingState
	clients map[string][]*Client // by key, in the order they blocked
	ready   map[string]bool      // in srv.ready
}

// blockState is what a blocked client waits for.
type blockState struct {
	cmd      *command // the blocking command, which serve runs as
	db       *db
	keys     []string
	deadline int64       // unix ms, 0 = none
	timer    *time.Timer // fires at deadline
	// serve tries to answer the client from key, which changed: it
	// writes the reply with w (Server.replyWriter, acting as the client)
	// and reports true, or reports false when key has nothing for it.
	serve func(w *Client, key string) bool
	// timedOut writes the reply for a timeout (and CLIENT UNBLOCK
	// TIMEOUT).
	timedOut func(w *Client)
	// postponed: held back by CLIENT PAUSE (client_pause.go), waiting
	// for no key; cmd is the command that waits.
	postponed bool
	// slowArgs is the command's arguments for the slow log (slowArgs),
	// kept when it blocked with the slow log on; nil otherwise.
	slowArgs []string
}

// touchBlocked marks key ready when clients wait on it; db.touch calls it
// for every change to a key while d has waiters.
func (d *db) touchBlocked(key string) {
	b := d.blocking
	if _, ok := b.clients[key]; !ok || b.ready[key] {
		return
	}
	// A copy: key often aliases a command's argument, and a parameter
	// that escaped would cost every caller of touch an allocation.
	k := strings.Clone(key)
	b.ready[k] = true
	b.srv.ready = append(b.srv.ready, readyKey{d: d, key: k})
}

// block makes c wait for bs: the command that calls it writes no reply.
// Call it with s.mu held, from c's command.
func (c *Client) block(bs *blockState) {
	s := c.srv
	d := bs.db
	if d.blocking == nil {
		d.blocking = &dbBlocking{srv: &s.blk, clients: make(map[string][]*Client), ready: make(map[string]bool)}
	}
	for _, k := range bs.keys {
		d.blocking.clients[k] = append(d.blocking.clients[k], c)
	}
	c.blocked = bs
	s.blk.blocked++
	if bs.deadline > 0 {
		s.blk.timed++
		wait := time.Duration(bs.deadline-time.Now().UnixMilli()) * time.Millisecond
		bs.timer = time.AfterFunc(max(wait, 0), func() { s.blockTimeout(c, bs) })
	}
}

// blockTimeout answers c with its timeout reply if it still waits for bs.
func (s *Server) blockTimeout(c *Client, bs *blockState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.blocked != bs {
		return
	}
	c.unblock()
	w := s.replyWriter(c)
	bs.timedOut(w)
	s.deliverUnblocked(nil, c, w.out)
}

// unblock removes c from every key it waits on, without a reply.
func (c *Client) unblock() {
	bs := c.blocked
	if bs == nil {
		return
	}
	c.blocked = nil
	c.srv.blk.blocked--
	if bs.postponed {
		c.srv.leavePause(c)
		return
	}
	if bs.timer != nil {
		c.srv.blk.timed--
		bs.timer.Stop()
	}
	b := bs.db.blocking
	if b == nil {
		return
	}
	for _, k := range bs.keys {
		list := b.clients[k]
		for i, o := range list {
			if o == c {
				list = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(b.clients, k)
		} else {
			b.clients[k] = list
		}
	}
	if len(b.clients) == 0 && len(b.ready) == 0 {
		bs.db.blocking = nil
	}
}

// deliverUnblocked sends an unblocked client its reply and lets it run
// the commands that arrived while it waited.
func (s *Server) deliverUnblocked(from, to *Client, reply []byte) {
	// Delivered directly on the event loop's goroutine, the loop's flush
	// then runs the rest (eventLoop.flush); otherwise the serving
	// goroutine, notified, does.
	if s.deliver(from, to, reply) && to.loop != nil && to.rpos < to.wpos {
		to.moreCmds = true
	}
}

// serveReady serves the clients waiting on the keys that changed, after
// from's command (or EXEC) ran. Call it with s.mu held.
func (s *Server) serveReady(from *Client) {
	for len(s.blk.ready) > 0 {
		ready := s.blk.ready
		s.blk.ready = nil
		for _, rk := range ready {
			b := rk.d.blocking
			if b == nil {
				continue
			}
			delete(b.ready, rk.key)
			// Serving changes the list: walk a copy, skipping clients
			// served meanwhile through another key.
			waiters := append([]*Client(nil), b.clients[rk.key]...)
			for _, c := range waiters {
				bs := c.blocked
				if bs == nil || bs.db != rk.d {
					continue
				}
				w := s.replyWriter(c)
				w.cur = bs.cmd
				var start time.Time
				if bs.slowArgs != nil {
					start = time.Now()
				}
				served := bs.serve(w, rk.key)
				w.accountTouched()
				w.cur = nil
				if !served {
					continue
				}
				c.unblock()
				if bs.slowArgs != nil {
					s.slowlogUnblocked(c, bs.slowArgs, time.Since(start).Microseconds())
				}
				s.deliverUnblocked(from, c, w.out)
			}
			if rk.d.blocking != nil && len(rk.d.blocking.clients) == 0 && len(rk.d.blocking.ready) == 0 {
				rk.d.blocking = nil
			}
		}
	}
}

// unblockByClient is CLIENT UNBLOCK: c, blocked, gets its timeout reply,
// or with withError the UNBLOCKED error. It reports whether c was blocked.
func (s *Server) unblockByClient(from, c *Client, withError bool) bool {
	bs := c.blocked
	if bs == nil || bs.postponed {
		return false
	}
	c.unblock()
	w := s.replyWriter(c)
	if withError {
		w.writeError("UNBLOCKED client unblocked via CLIENT UNBLOCK")
	} else {
		bs.timedOut(w)
	}
	s.slowlogUnblocked(c, []string{}, 0)
	s.deliverUnblocked(from, c, w.out)
	return true
}

// parseBlockTimeout parses a blocking command's timeout as Redis 7.0's
// getTimeoutFromObjectOrReply: seconds as a long double (BLPOP ...), or
// milliseconds as an integer (XREAD BLOCK). It returns the deadline in
// unix ms, 0 for none (a timeout of 0), or replies the error and reports
// false.
func parseBlockTimeout(c *Client, arg []byte, seconds bool) (deadline int64, ok bool) {
	var ms int64
	if seconds {
		f, good := parseLongDouble(arg)
		if !good {
			c.writeError("ERR timeout is not a float or out of range")
			return 0, false
		}
		f.Mul(f, big.NewFloat(1000))
		if f.IsInf() || !fitsInt64(f) {
			// Redis converts with (long long)ceill(x): on x86 a value
			// out of range (infinity too) becomes LLONG_MIN.
			ms = math.MinInt64
		} else {
			i, acc := f.Int64()
			if acc == big.Below { // truncated a positive fraction
				i++
			}
			ms = i
		}
	} else {
		n, good := parseInt(arg)
		if !good {
			c.writeError("ERR timeout is not an integer or out of range")
			return 0, false
		}
		ms = n
	}
	if ms < 0 {
		c.writeError("ERR timeout is negative")
		return 0, false
	}
	if ms == 0 {
		return 0, true
	}
	now := time.Now().UnixMilli()
	if ms > math.MaxInt64-now {
		// Redis's now+timeout wraps and, read as unsigned in its table
		// of timeouts, never comes: the client waits for good.
		return 0, true
	}
	return now + ms, true
}

// fitsInt64 reports whether f (finite) truncates to an int64.
func fitsInt64(f *big.Float) bool {
	_, acc := f.Int64()
	if acc == big.Exact {
		return true
	}
	i, _ := f.Int64()
	return i != math.MinInt64 && i != math.MaxInt64
}

// signalSwapped marks every key of d that has waiters ready, after SWAPDB
// gave d another database's keys (Redis's scanDatabaseForReadyKeys):
// serveReady then finds which of them serve.
func (d *db) signalSwapped() {
	if d.blocking == nil {
		return
	}
	for key := range d.blocking.clients {
		if _, ok := d.keys[key]; ok {
			d.touchBlocked(key)
		}
	}
}
