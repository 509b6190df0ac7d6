package server

import (
	"errors"
	"net"
	"os"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/dpulab/dpulab/server/resp"
)

const (
	readBufSize  = 16 << 10
	bigArg       = 32 << 10  // Redis's PROTO_MBULK_BIG_ARG: an argument worth storing without a copy
	maxIdleBuf   = 256 << 10 // read buffers grown past this are dropped once (nearly) drained; below, kept (the largest command before AUTH fits)
	flushAt      = 1 << 20   // flush mid-batch once this much output is pending
	maxIdleOut   = 1 << 20
	protectedMsg = "DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Set up an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside."
)

// isLoopback reports whether a peer is local (loopback IP or Unix socket).
func isLoopback(a net.Addr) bool {
	switch v := a.(type) {
	case *net.TCPAddr:
		return v.IP.IsLoopback()
	case *net.UnixAddr:
		return true
	}
	return false
}

// handle admits one connection and serves it: on the event loop when the
// server runs one and the connection has a descriptor, else on this
// goroutine until it closes.
func (s *Server) handle(conn net.Conn) {
	defer s.wg.Done()
	s.mu.Lock()
	s.stats.totalConnections++
	maxClients, protected, pass, keepAlive := s.cfg.MaxClients, s.cfg.ProtectedMode, s.cfg.RequirePass, s.cfg.TCPKeepAlive
	s.mu.Unlock()
	if n := s.nclients.Add(1); n > int64(maxClients) {
		s.nclients.Add(-1)
		s.reject(conn, errMaxClients)
		return
	}
	if protected && pass == "" && !isLoopback(conn.RemoteAddr()) {
		s.nclients.Add(-1)
		s.reject(conn, "-"+protectedMsg+"\r\n")
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
		if keepAlive > 0 {
			tc.SetKeepAlive(true)
			tc.SetKeepAlivePeriod(keepAlive)
		}
	}
	c := &Client{
		srv:     s,
		conn:    conn,
		fd:      socketFD(conn),
		id:      s.nextID.Add(1),
		db:      s.dbs[0],
		resp:    2,
		authed:  pass == "",
		created: time.Now(),
		addr:    conn.RemoteAddr().String(),
		laddr:   conn.LocalAddr().String(),
		netw:    conn.LocalAddr().Network(),
	}
	if c.netw == "unix" {
		c.addr = "/unixsocket:0"
	}
	c.lastInteraction.Store(c.created.UnixMilli())
	// The loop takes the descriptor before the client is listed, so that
	// closeConn (CLIENT KILL, timeouts, shutdown) always sees which path
	// serves it.
	// Under lnMu: Serve sets the loop after its listeners exist, and a
	// connection handed to handle directly (net.Pipe in tests, an
	// embedding program) may arrive meanwhile.
	s.lnMu.Lock()
	loop := s.loop
	s.lnMu.Unlock()
	if loop != nil {
		if fd, ok := detachFD(conn); ok {
			c.conn, c.fd, c.loop = nil, fd, loop
		}
	}
	s.clientsMu.Lock()
	s.clients[c.id] = c
	s.clientsMu.Unlock()
	if c.loop != nil {
		c.loop.adopt(c)
		return
	}
	select {
	case <-s.done:
	default:
		c.serve()
	}
	conn.Close()
	c.release()
	s.dropClient(c)
}

// socketFD returns conn's descriptor for CLIENT LIST, or -1 when it has
// none (net.Pipe), which is also what Redis prints for a client without a
// socket. The event loop replaces it with its own duplicate.
func socketFD(conn net.Conn) int {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return -1
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	if rc.Control(func(s uintptr) { fd = int(s) }) != nil {
		return -1
	}
	return fd
}

// dropClient forgets a closed connection.
func (s *Server) dropClient(c *Client) {
	s.clientsMu.Lock()
	delete(s.clients, c.id)
	s.clientsMu.Unlock()
	s.nclients.Add(-1)
}

// closeConn closes the connection from outside its serving goroutine
// (CLIENT KILL, idle timeout, shutdown).
func (c *Client) closeConn() {
	if c.loop != nil {
		c.loop.kill(c)
		return
	}
	c.conn.Close()
}

// serve is the goroutine-per-connection loop: read, parse every complete
// command in the buffer, run them all under one acquisition of the server
// lock, flush the replies with one write.
func (c *Client) serve() {
	for {
		if !c.makeRoom() {
			return
		}
		n, err := c.conn.Read(c.rbuf[c.wpos:])
		if n == 0 && err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				return
			}
			// Woken by notify: output from elsewhere, or unblocked.
			// The deadline is cleared before the lock is taken, so a
			// notify after it interrupts the next Read instead of
			// being lost.
			c.conn.SetReadDeadline(time.Time{})
		}
		c.wpos += n
		if c.process() {
			return
		}
		c.settle()
	}
}

// makeRoom makes rbuf[wpos:] non-empty for the next read: it moves unparsed
// input to the front or grows the buffer, up to client-query-buffer-limit.
// It reports false (after logging) when the limit is reached and the
// connection must close.
//
// The buffer grows with what has arrived, never with what a length line
// announced: it at most doubles when full, so a client announcing 500 MB
// and sending 1 MB costs about 2 MB. When the command being received is a
// bulk argument of known length, growth stops at that argument's end plus
// one read's worth of room (for the arguments after it), so a 100 MB value
// costs one buffer of 100 MB rather than a 128 MB one, and that buffer can
// become the stored value (see takeArg).
func (c *Client) makeRoom() bool {
	if c.rbuf == nil {
		c.rbuf = make([]byte, readBufSize)
	}
	if c.wpos < len(c.rbuf) {
		return true
	}
	if c.rpos > 0 {
		c.wpos = copy(c.rbuf, c.rbuf[c.rpos:c.wpos])
		c.rpos = 0
		return true
	}
	s := c.srv
	s.mu.Lock()
	limit := s.cfg.ClientQueryBufferLimit
	lim := resp.Limits{MaxBulkLen: s.maxBulk(), Unauthenticated: c.authRequired()}
	s.mu.Unlock()
	if int64(len(c.rbuf)) >= limit {
		s.logf('#', "Closing client that reached max query buffer length: id=%d addr=%s (qbuf initial bytes: %q)", c.id, c.addr, truncate(c.rbuf, 64))
		return false
	}
	size := 2 * len(c.rbuf)
	if need := resp.Needed(c.rbuf[:c.wpos], lim); need > len(c.rbuf) {
		size = min(size, need+readBufSize)
	}
	nb := make([]byte, min(int64(size), limit))
	copy(nb, c.rbuf[:c.wpos])
	c.grown += len(c.rbuf)
	c.rbuf = nb
	return true
}

// settle runs after every batch. It resets a drained read buffer (dropping
// one grown past maxIdleBuf, and the arguments that still point into it),
// replaces a buffer that became a stored value (takeArg), and publishes the
// buffers' sizes for CLIENT LIST.
func (c *Client) settle() {
	rest := c.wpos - c.rpos
	// A buffer grown for a big command is not kept for the small ones
	// after it; one that became a value (takeArg) must not be written
	// again: the keyspace owns part of its array.
	if c.rbufTaken || len(c.rbuf) > maxIdleBuf && rest <= len(c.rbuf)/4 {
		if !c.rbufTaken && len(c.rbuf) >= bigRelease || c.grown >= bigRelease {
			returnMemory()
		}
		c.grown = 0
		var nb []byte
		if rest > 0 {
			nb = make([]byte, max(readBufSize, 2*rest))
			copy(nb, c.rbuf[c.rpos:c.wpos])
		}
		c.rbuf, c.rpos, c.wpos = nb, 0, rest
		c.rbufTaken = false
		clear(c.args[:cap(c.args)])
	} else if rest == 0 {
		c.rpos, c.wpos = 0, 0
	}
	c.publish()
}

// publish records the client's buffer sizes for CLIENT LIST, which other
// goroutines read.
func (c *Client) publish() {
	c.qbuf.Store(int64(c.wpos - c.rpos))
	c.qbufFree.Store(int64(len(c.rbuf) - c.wpos))
	c.omem.Store(int64(len(c.out) - c.outPos))
	c.totMem.Store(int64(clientSize + cap(c.rbuf) + cap(c.out) + cap(c.args)*int(unsafe.Sizeof([]byte(nil)))))
}

// clientSize is what CLIENT LIST's tot-mem counts for a client beyond its
// buffers.
const clientSize = int(unsafe.Sizeof(Client{}))

// release drops the client's buffers when its connection has closed, so
// that nothing a departed client sent stays in memory however long the
// Client itself stays referenced (a CLIENT LIST in progress, the event
// loop's lists until their next use).
func (c *Client) release() {
	if cap(c.rbuf)+cap(c.out)+c.grown >= bigRelease {
		returnMemory()
	}
	c.grown = 0
	c.rbuf, c.out, c.args = nil, nil, nil
	c.rpos, c.wpos, c.outPos = 0, 0, 0
	c.touched, c.scanKeys, c.scanDB = nil, nil, nil
	// Under the lock: the server's watch, subscription and blocking
	// tables list the client, and CLIENT LIST reads its state.
	c.srv.mu.Lock()
	c.unwatchAll()
	c.multi = nil
	c.unblock()
	c.resetPubSub()
	c.disableTracking()
	c.async = nil
	c.srv.mu.Unlock()
	c.publish()
}

// takeArg returns val, an argument of the running command, as a slice the
// caller may keep: the argument itself when it is a big bulk that fills
// most of the read buffer (Redis's big-argument optimisation: the value is
// stored without a copy and the client moves on to a fresh buffer), else a
// copy.
func (c *Client) takeArg(val []byte) []byte {
	if len(val) >= bigArg && !c.rbufTaken && cap(c.rbuf)-len(val) <= len(val)/8 && within(val, c.rbuf) {
		c.rbufTaken = true
		return val[:len(val):len(val)]
	}
	v := make([]byte, len(val))
	copy(v, val)
	return v
}

// within reports whether b lies inside buf's array.
func within(b, buf []byte) bool {
	if len(b) == 0 || len(buf) == 0 {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	return p >= lo && p+uintptr(len(b)) <= lo+uintptr(cap(buf))
}

// process runs every complete command in rbuf[rpos:wpos] and flushes the
// replies; it is the goroutine path's batch. It reports whether the
// connection must close.
func (c *Client) process() (closeConn bool) {
	s := c.srv
	var ids [64]int
	for {
		s.mu.Lock()
		start := time.Now()
		c.now = start.UnixMilli()
		c.lastInteraction.Store(c.now)
		batch := ids[:0]
		res, ncmds := c.runCommands(resp.Limits{MaxBulkLen: s.maxBulk()}, &batch)
		s.chargeTime(batch, ncmds, start)
		s.stats.netOutput += int64(len(c.out))
		s.mu.Unlock()
		if len(c.out) > 0 {
			c.omem.Store(int64(len(c.out)))
			_, err := c.conn.Write(c.out)
			c.omem.Store(0)
			if cap(c.out) > maxIdleOut {
				if cap(c.out) >= bigRelease {
					returnMemory()
				}
				c.out = nil
			} else {
				c.out = c.out[:0]
			}
			if err != nil {
				return true
			}
		}
		// At flushAt a huge pipelined reply was written out without the
		// lock, so a slow reader does not stall everyone; run the rest.
		if res != runFlush {
			return res == runClose
		}
	}
}

// runResult says why runCommands stopped.
type runResult int

const (
	runNeedInput runResult = iota // no complete command left in rbuf
	runFlush                      // output reached flushAt: write it, then run the rest
	runClose                      // flush the output, then close (QUIT, protocol error)
)

// runCommands runs the complete commands in rbuf[rpos:wpos], advancing
// rpos, with s.mu held and c.now set by the caller. It appends the
// statistics ids of the commands that ran to *batch (up to its capacity)
// and returns why it stopped and how many commands ran. Both connection
// paths share it.
func (c *Client) runCommands(limits resp.Limits, batch *[]int) (runResult, int) {
	s := c.srv
	ncmds := 0
	if c.asyncQueued {
		c.takeAsync()
	}
	// A blocked client's commands wait in rbuf until it is served.
	for c.rpos < c.wpos && c.blocked == nil {
		// Checked per command: an AUTH earlier in the batch lifts the
		// limits for the commands after it, as in Redis.
		limits.Unauthenticated = c.authRequired()
		args, n, err := resp.ParseCommand(c.rbuf[c.rpos:c.wpos], c.args, limits)
		c.args = args
		if err != nil {
			var pe *resp.ProtocolError
			if errors.As(err, &pe) {
				s.logf('-', "Protocol error (%s) from client: id=%d addr=%s", pe.Msg, c.id, c.addr)
			}
			c.writeError("ERR " + err.Error())
			c.closeAfter = true
			return runClose, ncmds
		}
		if n == 0 {
			break
		}
		c.rpos += n
		s.stats.netInput += int64(n)
		if len(args) == 0 {
			continue
		}
		c.cmdLen = n
		if s.trk.srv != nil {
			s.trackingBefore(c)
		}
		mark := len(c.out)
		id := c.exec(args)
		if c.reply != replyOn {
			c.suppressReply(mark)
		}
		if s.trk.srv != nil {
			s.trackingAfter(c, id)
		}
		ncmds++
		if id >= 0 && len(*batch) < cap(*batch) {
			*batch = append(*batch, id)
		}
		if c.closeAfter {
			return runClose, ncmds
		}
		if len(c.out) >= flushAt && c.rpos < c.wpos {
			return runFlush, ncmds
		}
	}
	if c.closeAfter {
		return runClose, ncmds
	}
	return runNeedInput, ncmds
}

// chargeTime spreads the time since start evenly over the ncmds commands
// of a batch (INFO commandstats' usec), as one clock read per batch is
// much cheaper than two per command.
func (s *Server) chargeTime(batch []int, ncmds int, start time.Time) {
	if ncmds == 0 || len(batch) == 0 {
		return
	}
	per := time.Since(start).Microseconds() / int64(ncmds)
	for _, id := range batch {
		s.stats.cmd[id].usec += per
	}
	s.recordLatency(batch, per)
}

// exec runs one command with the server lock held and returns its
// statistics id (-1 when it was rejected before running). A panic in the
// command is contained (contain.go): the client is answered and closed,
// the lock stays held for the caller.
func (c *Client) exec(args [][]byte) (id int) {
	outStart := len(c.out)
	defer func() {
		if v := recover(); v != nil {
			c.contain(args, v, outStart)
			id = -1
		}
	}()
	s := c.srv
	s.stats.totalCommands++
	cmd := s.cmds.lookup(args[0])
	if cmd == nil {
		c.rejectInMulti()
		c.writeError(unknownCommand(args))
		return -1
	}
	// A container runs itself when called bare if it has a function
	// (COMMAND: every command's COMMAND INFO); others need a subcommand.
	if cmd.Subcommands != nil && (len(args) >= 2 || cmd.Fn == nil) {
		parent := cmd
		if len(args) < 2 {
			s.stats.cmd[parent.id].rejected++
			c.rejectInMulti()
			c.writeArityError(parent.Name)
			return -1
		}
		cmd = findSub(parent, args[1])
		if cmd == nil {
			s.stats.cmd[parent.id].rejected++
			c.rejectInMulti()
			c.writeError("ERR unknown subcommand '" + truncate(args[1], 128) + "'. Try " + strings.ToUpper(parent.Name) + " HELP.")
			return -1
		}
	}
	if cmd.Arity > 0 && len(args) != cmd.Arity || cmd.Arity < 0 && len(args) < -cmd.Arity {
		s.stats.cmd[cmd.id].rejected++
		c.rejectInMulti()
		if cmd.Fn != nil && cmd.Name == "exec" {
			// Redis's rejectCommand answers a refused EXEC with
			// execCommandAbort, discarding the transaction.
			c.execAbort("wrong number of arguments for 'exec' command")
			return -1
		}
		c.writeArityError(cmd.Name)
		return -1
	}
	if cmd.Flags&flagNoAuth == 0 && c.authRequired() {
		s.stats.cmd[cmd.id].rejected++
		c.rejectInMulti()
		c.writeError(errNoAuth)
		return -1
	}
	if c.multi != nil && cmd.Flags&flagNoMulti != 0 {
		s.stats.cmd[cmd.id].rejected++
		c.rejectInMulti()
		c.writeError("ERR Command not allowed inside a transaction")
		return -1
	}
	if s.cfg.MaxMemory > 0 && cmd.Flags&flagDenyOOM != 0 && !s.freeMemory(c.now) {
		s.stats.cmd[cmd.id].rejected++
		c.rejectInMulti()
		c.writeError(errOOM)
		return -1
	}
	if c.pubsub != nil && c.resp == 2 && c.subscribed() && !allowedSubscribed(cmd) {
		s.stats.cmd[cmd.id].rejected++
		c.rejectInMulti()
		c.writeError("ERR Can't execute '" + cmd.Name + "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
		return -1
	}
	if s.pause.mode != pauseOff && c.postpone(cmd) {
		// Held back by CLIENT PAUSE: it runs again when the pause ends.
		return -1
	}
	if c.multi != nil {
		if cmd.Name == "debug" && !c.debugAllowed() {
			// Refused before it is queued, as Redis refuses a
			// protected command (EXECABORT follows).
			s.stats.cmd[cmd.id].rejected++
			c.rejectInMulti()
			c.writeError(errDebugRefused)
			return -1
		}
		if !runsInMulti(cmd) {
			c.multi.queue(cmd, args)
			c.writeSimple("QUEUED")
			return -1
		}
		if cmd.Name == "exec" {
			// A transaction never blocks: its blocking commands answer
			// as if timed out (Redis's CLIENT_DENY_BLOCKING).
			c.denyBlocking = true
			c.call(cmd, args)
			c.denyBlocking = false
			if len(s.blk.ready) > 0 {
				s.serveReady(c)
			}
			return cmd.id
		}
	}
	c.call(cmd, args)
	// Keys the command changed may serve blocked clients; Redis serves
	// them after each command (after EXEC as a whole).
	if len(s.blk.ready) > 0 {
		s.serveReady(c)
	}
	return cmd.id
}

// allowedSubscribed reports whether a RESP2 client in subscribed mode may
// run cmd (Redis's processCommand list).
func allowedSubscribed(cmd *command) bool {
	switch cmd.Name {
	case "ping", "subscribe", "ssubscribe", "unsubscribe", "sunsubscribe", "psubscribe", "punsubscribe", "quit", "reset":
		return true
	}
	return false
}

// call runs a command that passed the dispatcher's checks (exec, or EXEC
// for a queued one) and counts it.
func (c *Client) call(cmd *command, args [][]byte) {
	c.cur = cmd
	c.lastCmd = cmd.Name
	c.errors = 0
	// The slow log times a command on its own only when asked to
	// (slowlog.go): the hot path pays these two comparisons.
	if t := c.srv.cfg.Tuning.SlowlogLogSlowerThan; t == 0 || t > 0 && cmd.slowTimed {
		c.callTimed(cmd, args)
	} else {
		cmd.Fn(c, args)
	}
	if c.trk != nil && c.trk.on && cmd.Flags&flagReadonly != 0 {
		c.rememberKeys(cmd, args) // CLIENT TRACKING (tracking.go)
	}
	c.cur = nil
	if len(c.touched) > 0 {
		c.accountTouched()
	}
	st := &c.srv.stats.cmd[cmd.id]
	st.calls++
	if c.errors > 0 {
		st.failed++
	}
}

// maxStringLen bounds a string value: the keyspace stores lengths in 32
// bits. Redis's own bound is proto-max-bulk-len alone.
const maxStringLen = 1<<32 - 1

// maxBulk is the largest bulk argument and string value: proto-max-bulk-len
// within maxStringLen. Call it with s.mu held.
func (s *Server) maxBulk() int64 { return min(s.cfg.ProtoMaxBulkLen, maxStringLen) }

// authRequired reports whether the client must still AUTH (Redis's
// authRequired): a password is set and the client has not given it. With
// the password removed by CONFIG SET, nobody needs to.
func (c *Client) authRequired() bool {
	return !c.authed && c.srv.cfg.RequirePass != ""
}

// findSub finds a subcommand of parent by name, case-insensitively.
func findSub(parent *command, name []byte) *command {
	for _, sc := range parent.Subcommands {
		if strings.EqualFold(sc.Name[len(parent.Name)+1:], string(name)) {
			return sc
		}
	}
	return nil
}

// unknownCommand is Redis's reply for a command it does not know, listing
// the first arguments: each is cut to what is left of 128 bytes, and the
// list stops once it reaches 128.
func unknownCommand(args [][]byte) string {
	var list strings.Builder
	for _, a := range args[1:] {
		if list.Len() >= 128 {
			break
		}
		list.WriteByte('\'')
		list.WriteString(truncate(a, 128-list.Len()+1))
		list.WriteString("' ")
	}
	return "ERR unknown command '" + truncate(args[0], 128) + "', with args beginning with: " + list.String()
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		b = b[:n]
	}
	return string(b)
}

// freeMemory evicts keys per maxmemory-policy until the dataset fits. It
// reports false when it cannot (noeviction, or nothing left to evict).
func (s *Server) freeMemory(now int64) bool {
	for i := 0; s.usedMemory() > s.cfg.MaxMemory; i++ {
		if s.cfg.MaxMemoryPolicy == "noeviction" {
			return false
		}
		if !evictOne(s.dbs, s.cfg.MaxMemoryPolicy, s.cfg.MaxMemorySamples, now) {
			return false
		}
		s.stats.evictedKeys++
	}
	return true
}

// usedMemory is the dataset estimate maxmemory is compared with.
func (s *Server) usedMemory() int64 {
	var n int64
	for _, d := range s.dbs {
		n += d.used
	}
	return n
}
