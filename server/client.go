package server

import (
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/dpulab/dpulab/server/resp"
)

// Client is one connection. Fields other than the atomics are only touched
// by the goroutine serving the connection (its own, or the event loop's),
// and those used by commands only while it holds Server.mu.
type Client struct {
	srv  *Server
	conn net.Conn // nil when the event loop serves the connection (loop != nil)
	id   int64

	// Served by the event loop (loop_linux.go): the connection's own
	// descriptor and the loop's state for it. On the goroutine path fd is
	// the socket's descriptor (-1 without one), only for CLIENT LIST.
	loop     *eventLoop
	fd       int
	killed   atomic.Bool // close requested (CLIENT KILL, timeout, shutdown)
	gone     atomic.Bool // fd closed and client dropped
	inReady  bool        // in the loop's ready list this iteration
	moreCmds bool        // stopped at flushAt with commands left in rbuf
	wantOut  bool        // waiting for EPOLLOUT: input is not read meanwhile
	outPos   int         // c.out[:outPos] is already written

	// rbuf[rpos:wpos] is input not yet parsed. rbufTaken: a command
	// stored an argument without copying it (takeArg), so the keyspace
	// owns part of rbuf's array and settle replaces rbuf.
	rbuf       []byte
	rpos, wpos int
	rbufTaken  bool
	grown      int // bytes of the buffers rbuf outgrew since the last settle that replaced it
	cmdLen     int // bytes of the running command, which rbuf[:rpos] ends with

	db      *db
	dbIndex int
	resp    int // protocol: 2 or 3
	authed  bool
	name    string
	libName string
	libVer  string
	now     int64 // unix ms, taken once per batch (like Redis's cached time)

	out        []byte
	args       [][]byte
	closeAfter bool // flush the replies so far, then close (QUIT, protocol error)
	errors     int  // error replies written during the current command
	touched    []*objBox
	cur        *command // the command running

	created         time.Time
	lastCmd         string
	lastInteraction atomic.Int64 // unix ms
	// For CLIENT LIST, published by the goroutine serving the client
	// after each batch (publish).
	qbuf        atomic.Int64 // bytes of input not yet parsed
	qbufFree    atomic.Int64 // room left in the read buffer
	omem        atomic.Int64 // bytes of replies not yet written
	totMem      atomic.Int64 // the client's buffers and itself
	addr, laddr string
	netw        string

	multi    *multiState  // open transaction (MULTI), nil outside one
	watching []watchedKey // WATCHed keys
	dirtyCAS bool         // a watched key changed: EXEC aborts

	scanKeys []string // SCAN's snapshot of the keyspace (see SCAN)
	scanDB   *db

	// Output other goroutines produced for this client (deliver), guarded
	// by Server.mu; the serving goroutine moves it into out before it runs
	// the client's next commands (runCommands).
	async       []byte
	asyncQueued bool  // the serving goroutine has been told about async
	outQueued   bool  // event loop only: in eventLoop.outq, to be flushed
	closeASAP   bool  // past its output buffer limit: closing, deliver nothing more
	softSince   int64 // unix seconds the pending output first passed the soft limit (0: under it)

	pubsub  *clientSubs // channels and patterns subscribed to (pubsub.go); nil: none ever
	blocked *blockState // what the client waits for while a blocking command blocks (blocking.go)
	// denyBlocking makes blocking commands reply as if timed out at once
	// (inside EXEC, as Redis's CLIENT_DENY_BLOCKING).
	denyBlocking bool

	trk   *clientTracking // CLIENT TRACKING (tracking.go); nil: off
	reply replyMode       // CLIENT REPLY (cmd_client_reply.go)
}

// Redis's error replies that commands share.
const (
	errWrongType   = "WRONGTYPE Operation against a key holding the wrong kind of value"
	errNotInt      = "ERR value is not an integer or out of range"
	errNotFloat    = "ERR value is not a valid float"
	errSyntax      = "ERR syntax error"
	errNoSuchKey   = "ERR no such key"
	errOverflow    = "ERR increment or decrement would overflow"
	errOOM         = "OOM command not allowed when used memory > 'maxmemory'."
	errNoAuth      = "NOAUTH Authentication required."
	errInvalidDB   = "ERR DB index is out of range"
	errInvalidExp  = "ERR invalid expire time in '%s' command"
	errStringLimit = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
)

// errWrongTypeErr is returned by the typed-value getters; reply with
// c.writeErr(err).
var errWrongTypeErr = replyError(errWrongType)

// replyError is an error whose text is the exact reply (code first).
type replyError string

func (e replyError) Error() string { return string(e) }

// ---- replies ----
// The write methods append to the client's output buffer, which is flushed
// once after the batch. They pick the RESP2 or RESP3 form by c.resp.

func (c *Client) writeOK()                 { c.out = resp.AppendOK(c.out) }
func (c *Client) writeSimple(s string)     { c.out = resp.AppendSimple(c.out, s) }
func (c *Client) writeInt(n int64)         { c.out = resp.AppendInt(c.out, n) }
func (c *Client) writeBulk(b []byte)       { c.out = resp.AppendBulk(c.out, b) }
func (c *Client) writeBulkString(s string) { c.out = resp.AppendBulkString(c.out, s) }
func (c *Client) writeArray(n int)         { c.out = resp.AppendArray(c.out, n) }

// writeError replies an error; msg starts with its code ("ERR ...").
func (c *Client) writeError(msg string) {
	c.errors++
	st := &c.srv.stats
	st.totalErrors++
	code := msg
	for i := 0; i < len(msg); i++ {
		if msg[i] == ' ' {
			code = msg[:i]
			break
		}
	}
	st.errorReplies[code]++
	c.out = resp.AppendError(c.out, msg)
}

// writeErr replies err's text: use with the errors the typed getters return.
func (c *Client) writeErr(err error) { c.writeError(err.Error()) }

// writeNull is a missing value: $-1 in RESP2, _ in RESP3.
func (c *Client) writeNull() {
	if c.resp == 3 {
		c.out = resp.AppendNull(c.out)
	} else {
		c.out = resp.AppendNullBulk(c.out)
	}
}

// writeNullArray is a missing aggregate: *-1 in RESP2, _ in RESP3.
func (c *Client) writeNullArray() {
	if c.resp == 3 {
		c.out = resp.AppendNull(c.out)
	} else {
		c.out = resp.AppendNullArray(c.out)
	}
}

// writeMap starts a map of n pairs: %n in RESP3, *2n in RESP2. Write the n
// keys and values after it.
func (c *Client) writeMap(n int) {
	if c.resp == 3 {
		c.out = resp.AppendMap(c.out, n)
	} else {
		c.out = resp.AppendArray(c.out, 2*n)
	}
}

// writeSet starts a set of n elements: ~n in RESP3, *n in RESP2.
func (c *Client) writeSet(n int) {
	if c.resp == 3 {
		c.out = resp.AppendSet(c.out, n)
	} else {
		c.out = resp.AppendArray(c.out, n)
	}
}

// writeDouble is a double: ,f in RESP3, a bulk string in RESP2.
func (c *Client) writeDouble(f float64) {
	if c.resp == 3 {
		c.out = resp.AppendDouble(c.out, f)
		return
	}
	var tmp [32]byte
	c.out = resp.AppendBulk(c.out, resp.AppendFloat(tmp[:0], f))
}

// writeBool is a boolean: #t/#f in RESP3, :1/:0 in RESP2.
func (c *Client) writeBool(v bool) {
	if c.resp == 3 {
		c.out = resp.AppendBool(c.out, v)
		return
	}
	if v {
		c.out = resp.AppendInt(c.out, 1)
	} else {
		c.out = resp.AppendInt(c.out, 0)
	}
}

// writeVerbatim is a verbatim text (INFO, CLIENT LIST): =len txt: in RESP3,
// a bulk string in RESP2.
func (c *Client) writeVerbatim(s string) {
	if c.resp != 3 {
		c.writeBulkString(s)
		return
	}
	c.out = append(c.out, '=')
	c.out = strconv.AppendInt(c.out, int64(len(s)+4), 10)
	c.out = append(c.out, "\r\ntxt:"...)
	c.out = append(c.out, s...)
	c.out = append(c.out, '\r', '\n')
}

// writeArityError is Redis's wrong-number-of-arguments error.
func (c *Client) writeArityError(name string) {
	c.writeError("ERR wrong number of arguments for '" + name + "' command")
}

// ---- keyspace access for commands ----

// lookup returns key's live entry in the selected database and counts a
// keyspace hit or miss.
func (c *Client) lookup(key []byte) (entry, bool) {
	e, ok := c.db.get(key, c.now)
	if ok {
		c.srv.stats.keyspaceHits++
		// Writing the entry back costs a second hash, so it is only done
		// when the clock bits change: for a busy key, once a second.
		if bits := c.srv.accessed(e.lru()); bits != e.lru() {
			e.meta = e.meta&^lruMask | bits
			c.db.keys[string(key)] = e
		}
	} else {
		c.srv.stats.keyspaceMisses++
	}
	return e, ok
}

// peek is lookup without updating the key's access clock (Redis's
// LOOKUP_NOTOUCH), for commands that inspect a key: OBJECT, TYPE.
func (c *Client) peek(key []byte) (entry, bool) {
	e, ok := c.db.get(key, c.now)
	if ok {
		c.srv.stats.keyspaceHits++
	} else {
		c.srv.stats.keyspaceMisses++
	}
	return e, ok
}

// getString returns the string at key. found is false when the key does
// not exist; err is the WRONGTYPE error when it holds another kind. The
// slice aliases the stored value: reply with it or copy it, never keep it.
func (c *Client) getString(key []byte) (val []byte, found bool, err error) {
	e, ok := c.lookup(key)
	if !ok {
		return nil, false, nil
	}
	if e.kind() != kindString {
		return nil, true, errWrongTypeErr
	}
	return e.bytes(), true, nil
}

// setString stores val at key, replacing any value of any kind: a copy of
// it, or, for a big argument of the running command, the argument itself
// (takeArg).
// keepTTL keeps an existing TTL (SET KEEPTTL); otherwise it is removed. It
// returns the keyspace's own copy of the key when the key was new (pass it
// to setExpire to share it), else "".
func (c *Client) setString(key, val []byte, keepTTL bool) string {
	return c.storeString(key, c.takeArg(val), keepTTL)
}

// storeString is setString without the copy: v must be owned by the
// keyspace from now on.
func (c *Client) storeString(key, v []byte, keepTTL bool) string {
	d := c.db
	bits := c.srv.newClock
	if c.srv.lfu {
		// Redis keeps an overwritten key's access frequency.
		if old, ok := d.keys[string(key)]; ok {
			bits = c.srv.accessed(old.lru())
		}
	}
	k := d.put(key, stringEntry(v, bits))
	if !keepTTL && k == "" && len(d.expires) > 0 {
		delete(d.expires, string(key))
	}
	c.srv.stats.dirty++
	return k
}

// getObject returns the value of kind k at key as T (the type that
// type_<kind>.go stores for k). found is false when the key does not exist;
// err is the WRONGTYPE error when it holds another kind. Modify the value
// in place: if the command is a write command its memory is re-accounted
// after it runs.
func getObject[T object](c *Client, key []byte, k kind) (v T, found bool, err error) {
	e, ok := c.lookup(key)
	if !ok {
		return v, false, nil
	}
	if e.kind() != k {
		return v, true, errWrongTypeErr
	}
	b := e.box()
	if c.cur != nil && c.cur.Flags&flagWrite != 0 {
		c.touched = append(c.touched, b)
		// A write command may change the value in place: count it as a
		// change for WATCH (Redis signals only actual changes; this
		// can only abort more transactions, never fewer).
		c.db.touch(string(key))
	}
	return b.o.(T), true, nil
}

// getOrCreateObject is getObject that stores create() at key when the key
// does not exist.
func getOrCreateObject[T object](c *Client, key []byte, k kind, create func() T) (T, error) {
	v, found, err := getObject[T](c, key, k)
	if err != nil || found {
		return v, err
	}
	v = create()
	b := &objBox{o: v}
	c.db.put(key, objectEntry(b, k, c.srv.newClock))
	c.touched = append(c.touched, b)
	return v, nil
}

// deleteKey removes key (and its TTL) from the selected database; it
// reports whether the key existed. Call it when a command empties a
// container: Redis never keeps empty lists, hashes, sets or sorted sets.
func (c *Client) deleteKey(key []byte) bool {
	e, ok := c.db.get(key, c.now)
	if !ok {
		return false
	}
	c.db.remove(string(key), e)
	c.srv.stats.dirty++
	return true
}

// signalModified counts a change to the dataset (INFO's dirty counter and,
// later, WATCH). Write commands call it once per changed key.
func (c *Client) signalModified(key []byte) {
	c.srv.stats.dirty++
	c.db.touch(string(key))
}

// accountTouched re-measures the containers a write command touched.
func (c *Client) accountTouched() {
	for _, b := range c.touched {
		if b.gone {
			continue
		}
		m := b.o.memUsage()
		c.db.used += int64(m - b.mem)
		b.mem = m
	}
	c.touched = c.touched[:0]
}

// ---- output for a client produced elsewhere ----
//
// A PUBLISH writes to its subscribers, a list push answers the clients
// blocked on the list, a timer answers a BLPOP that timed out. All of it
// happens with Server.mu held, but a client's out buffer belongs to the
// goroutine serving the client, which writes it to the socket without the
// lock. So deliver appends to out directly only when the caller runs on
// that goroutine: the client itself, or another client of the same event
// loop (the loop runs all its clients' commands on its one goroutine).
// Otherwise it appends to async and tells the serving goroutine, which
// moves async into out before the client's next commands run: the client
// sees everything in the order it happened under the lock.

// deliver appends msg, already encoded in to's protocol, to to's output.
// from is the client whose command produces it (nil for a timer). It
// reports whether msg went into out directly. Call it with s.mu held.
func (s *Server) deliver(from, to *Client, msg []byte) (direct bool) {
	if to.closeASAP || to.gone.Load() || to.killed.Load() {
		return false
	}
	var pending int
	if to == from || from != nil && from.loop != nil && from.loop == to.loop {
		to.out = append(to.out, msg...)
		if to.loop != nil && to != from {
			to.loop.queueOut(to)
		}
		pending = len(to.out) - to.outPos + len(to.async)
		direct = true
	} else {
		to.async = append(to.async, msg...)
		if !to.asyncQueued {
			to.asyncQueued = true
			to.notify()
		}
		pending = len(to.async) + int(to.omem.Load())
	}
	s.checkOutputLimit(to, pending)
	return direct
}

// notify tells the goroutine serving c that c.async has output (or that a
// blocked c was unblocked). On the goroutine path it interrupts the
// connection's pending Read with a deadline in the past; serve then runs
// process, which takes the output under the lock.
func (c *Client) notify() {
	if c.loop != nil {
		c.loop.notifyAsync(c)
		return
	}
	c.conn.SetReadDeadline(aLongTimeAgo)
}

// aLongTimeAgo is a read deadline that has passed (as net/http uses), to
// wake a goroutine blocked in Read.
var aLongTimeAgo = time.Unix(1, 0)

// takeAsync moves output produced for c elsewhere into c.out, with s.mu
// held, by the goroutine serving c.
func (c *Client) takeAsync() {
	c.asyncQueued = false
	if len(c.async) == 0 {
		return
	}
	c.out = append(c.out, c.async...)
	if cap(c.async) > maxIdleOut {
		c.async = nil
	} else {
		c.async = c.async[:0]
	}
}

// replyWriter returns the server's scratch client for encoding a reply
// for to outside to's own command (a blocked client served by another
// client's write, a timeout): the reply methods append to its out, in
// to's protocol, and the result goes to to through deliver. It acts in
// to's database as to would. Call it with s.mu held; the result is valid
// until the next call.
func (s *Server) replyWriter(to *Client) *Client {
	w := s.blk.scratch
	if w == nil {
		w = &Client{srv: s}
		s.blk.scratch = w
	}
	// A big reply (a long XREAD) is not kept for every later one.
	if cap(w.out) > maxIdleOut {
		w.out = nil
	}
	w.out = w.out[:0]
	clear(w.touched[:cap(w.touched)])
	w.touched = w.touched[:0]
	w.resp, w.db, w.dbIndex, w.now, w.id = to.resp, to.db, to.dbIndex, to.now, to.id
	w.errors = 0
	return w
}
