package server

import (
	"errors"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/dpulab/dpulab/server/resp"
)

const (
	readBufSize  = 16 << 10
	maxIdleBuf   = 64 << 10 // read buffers grown past this are dropped when drained
	flushAt      = 1 << 20  // flush mid-batch once this much output is pending
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
		s.mu.Lock()
		s.stats.rejectedConns++
		s.mu.Unlock()
		conn.Write([]byte("-ERR max number of clients reached\r\n"))
		conn.Close()
		return
	}
	if protected && pass == "" && !isLoopback(conn.RemoteAddr()) {
		s.nclients.Add(-1)
		s.mu.Lock()
		s.stats.rejectedConns++
		s.mu.Unlock()
		conn.Write([]byte("-" + protectedMsg + "\r\n"))
		conn.Close()
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
	if s.loop != nil {
		if fd, ok := detachFD(conn); ok {
			c.conn, c.fd, c.loop = nil, fd, s.loop
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
	c.rbuf = make([]byte, readBufSize)
	for {
		if !c.makeRoom() {
			return
		}
		n, err := c.conn.Read(c.rbuf[c.wpos:])
		if n == 0 && err != nil {
			return
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
func (c *Client) makeRoom() bool {
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
	s.mu.Unlock()
	if int64(len(c.rbuf)) >= limit {
		s.logf('#', "Closing client that reached max query buffer length: id=%d addr=%s (qbuf initial bytes: %q)", c.id, c.addr, truncate(c.rbuf, 64))
		return false
	}
	// Grow only as data actually arrives: an announced length reserves
	// nothing.
	nb := make([]byte, min(int64(2*len(c.rbuf)), limit))
	copy(nb, c.rbuf[:c.wpos])
	c.rbuf = nb
	return true
}

// settle resets a drained read buffer (dropping one grown past maxIdleBuf)
// and publishes the unparsed length for CLIENT LIST.
func (c *Client) settle() {
	if c.rpos == c.wpos {
		c.rpos, c.wpos = 0, 0
		if len(c.rbuf) > maxIdleBuf {
			c.rbuf = make([]byte, readBufSize)
		}
	}
	c.qbuf.Store(int64(c.wpos - c.rpos))
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
		res, ncmds := c.runCommands(resp.Limits{MaxBulkLen: s.cfg.ProtoMaxBulkLen}, &batch)
		s.chargeTime(batch, ncmds, start)
		s.stats.netOutput += int64(len(c.out))
		s.mu.Unlock()
		if len(c.out) > 0 {
			_, err := c.conn.Write(c.out)
			if cap(c.out) > maxIdleOut {
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
	for c.rpos < c.wpos {
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
		id := c.exec(args)
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
}

// exec runs one command with the server lock held and returns its
// statistics id (-1 when it was rejected before running).
func (c *Client) exec(args [][]byte) int {
	s := c.srv
	s.stats.totalCommands++
	cmd := s.cmds.lookup(args[0])
	if cmd == nil {
		c.writeError(unknownCommand(args))
		return -1
	}
	if cmd.Subcommands != nil {
		parent := cmd
		if len(args) < 2 {
			s.stats.cmd[parent.id].rejected++
			c.writeArityError(parent.Name)
			return -1
		}
		cmd = findSub(parent, args[1])
		if cmd == nil {
			s.stats.cmd[parent.id].rejected++
			c.writeError("ERR unknown subcommand '" + truncate(args[1], 128) + "'. Try " + strings.ToUpper(parent.Name) + " HELP.")
			return -1
		}
	}
	if cmd.Arity > 0 && len(args) != cmd.Arity || cmd.Arity < 0 && len(args) < -cmd.Arity {
		s.stats.cmd[cmd.id].rejected++
		c.writeArityError(cmd.Name)
		return -1
	}
	if !c.authed && cmd.Flags&flagNoAuth == 0 {
		s.stats.cmd[cmd.id].rejected++
		c.writeError(errNoAuth)
		return -1
	}
	if s.cfg.MaxMemory > 0 && cmd.Flags&flagDenyOOM != 0 && !s.freeMemory(c.now) {
		s.stats.cmd[cmd.id].rejected++
		c.writeError(errOOM)
		return -1
	}
	c.cur = cmd
	c.lastCmd = cmd.Name
	c.errors = 0
	cmd.Fn(c, args)
	c.cur = nil
	if len(c.touched) > 0 {
		c.accountTouched()
	}
	st := &s.stats.cmd[cmd.id]
	st.calls++
	if c.errors > 0 {
		st.failed++
	}
	return cmd.id
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
// the first arguments (at most about 128 bytes of them).
func unknownCommand(args [][]byte) string {
	var b strings.Builder
	b.WriteString("ERR unknown command '")
	b.WriteString(truncate(args[0], 128))
	b.WriteString("', with args beginning with: ")
	for _, a := range args[1:] {
		if b.Len() >= 128+len("ERR unknown command '', with args beginning with: ")+len(args[0]) {
			break
		}
		b.WriteByte('\'')
		b.WriteString(truncate(a, 128))
		b.WriteString("' ")
	}
	return b.String()
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
