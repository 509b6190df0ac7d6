package server

import (
	"strconv"
	"time"
)

// SLOWLOG, as Redis 7.0's slowlog.c: a command that ran for
// slowlog-log-slower-than microseconds or more (negative: never; 0: every
// command) is recorded with its arguments (at most 32, each cut at 128
// bytes, AUTH's, HELLO AUTH's and CONFIG SET requirepass/masterauth's
// secrets redacted), the client's address
// and name; the newest slowlog-max-len entries are kept. EXEC is not
// recorded itself, the commands it runs are; a command that blocks is not
// recorded while it waits: it is when served (slowlogUnblocked).
//
// What is timed: the server reads the clock once per batch of pipelined
// commands (chargeTime), not per command: on the 2-core kvm-clock VM this
// was written on, a clock read measured 35 to 300 ns (Go benchmark of
// time.Now/time.Since under load), a visible share of a pipelined GET.
// So, with the slowlog on, a command is timed on its own only when its
// cost can grow with the data it touches: every command that is not
// flagged fast (Redis's O(1)/O(log N) commands), except the plain string
// stores (SET, SETEX, PSETEX, SETNX, GETSET), whose work is a hash insert
// and a copy of the bytes they brought. With slowlog-log-slower-than 0
// every command is timed and recorded, as in Redis. So at a positive
// threshold (10 ms by default) a fast command or a plain SET is never
// recorded, however long it took (a SET of a very large value can).

// slowlogMaxArgs and slowlogMaxArgLen are Redis's SLOWLOG_ENTRY_MAX_ARGC
// and SLOWLOG_ENTRY_MAX_STRING.
const (
	slowlogMaxArgs   = 32
	slowlogMaxArgLen = 128
)

// slowlogState is the server's slow log, guarded by Server.mu.
type slowlogState struct {
	entries []slowEntry // oldest first
	nextID  int64
}

// slowEntry is one recorded command.
type slowEntry struct {
	id     int64
	unix   int64 // seconds
	micros int64
	args   []string
	addr   string
	name   string
}

// slowTimedCmd reports whether, at a positive threshold, cmd is timed on
// its own (see above); commands.go's table sets command.slowTimed from it.
func slowTimedCmd(cmd *command) bool {
	if cmd.Flags&flagFast != 0 || cmd.Name == "exec" {
		return false
	}
	switch cmd.Name {
	case "set", "setex", "psetex", "setnx", "getset":
		return false
	}
	return true
}

// callTimed runs cmd as call does and records it in the slow log when
// it took slowlog-log-slower-than microseconds or more. Call it with s.mu
// held.
func (c *Client) callTimed(cmd *command, args [][]byte) {
	start := time.Now()
	cmd.Fn(c, args)
	d := time.Since(start).Microseconds()
	// The threshold after the command, as Redis reads it: a CONFIG SET
	// of it is judged by its own new value.
	threshold := c.srv.cfg.Tuning.SlowlogLogSlowerThan
	if threshold < 0 || d < threshold || c.blocked != nil || cmd.Name == "exec" {
		return
	}
	c.srv.slowlogPush(c, cmd, args, start.Unix(), d)
}

// slowlogPush records a command, trimming the log to slowlog-max-len.
func (s *Server) slowlogPush(c *Client, cmd *command, args [][]byte, unix, micros int64) {
	s.slowlogAdd(c, slowArgs(cmd, args), unix, micros)
}

// slowlogAdd records an entry with arguments already cut (slowArgs).
func (s *Server) slowlogAdd(c *Client, args []string, unix, micros int64) {
	e := slowEntry{id: s.slow.nextID, unix: unix, micros: micros, args: args, addr: c.addr, name: c.name}
	s.slow.nextID++
	s.slow.entries = append(s.slow.entries, e)
	s.slowlogTrim()
}

// slowArgs is what the slow log keeps of a command's arguments.
func slowArgs(cmd *command, args [][]byte) []string {
	n := min(len(args), slowlogMaxArgs)
	out := make([]string, n)
	for i := 0; i < n; i++ {
		switch {
		case n != len(args) && i == n-1:
			out[i] = "... (" + strconv.Itoa(len(args)-n+1) + " more arguments)"
		case redacted(cmd, args, i):
			out[i] = "(redacted)"
		case len(args[i]) > slowlogMaxArgLen:
			out[i] = string(args[i][:slowlogMaxArgLen]) + "... (" + strconv.Itoa(len(args[i])-slowlogMaxArgLen) + " more bytes)"
		default:
			out[i] = string(args[i])
		}
	}
	return out
}

// slowlogUnblocked records a blocked command once it is answered, as
// Redis 7.0's updateStatsOnUnblock: served by a write, with the serving
// time (args as blockOn kept them); released by CLIENT UNBLOCK, with no
// arguments and no time, as 7.0.15 records it (its arguments are gone by
// then). A timed-out command is not recorded. Call it with s.mu held.
func (s *Server) slowlogUnblocked(c *Client, args []string, micros int64) {
	if t := s.cfg.Tuning.SlowlogLogSlowerThan; t < 0 || micros < t {
		return
	}
	s.slowlogAdd(c, args, time.Now().Unix(), micros)
}

// slowlogTrim drops the oldest entries past slowlog-max-len.
func (s *Server) slowlogTrim() {
	max := s.cfg.Tuning.SlowlogMaxLen
	if over := int64(len(s.slow.entries)) - max; over > 0 {
		kept := copy(s.slow.entries, s.slow.entries[over:])
		clear(s.slow.entries[kept:])
		s.slow.entries = s.slow.entries[:kept]
	}
}

// redacted reports whether argument i of cmd is a secret Redis 7.0 hides
// from the slow log: AUTH's arguments, HELLO's AUTH username and
// password, CONFIG SET requirepass's and masterauth's values.
func redacted(cmd *command, args [][]byte, i int) bool {
	switch cmd.Name {
	case "auth":
		return i >= 1
	case "hello":
		for j := 2; j+2 < len(args); j++ {
			if equalFold(args[j], "auth") {
				return i == j+1 || i == j+2
			}
		}
	case "config|set":
		if i >= 3 && i%2 == 1 {
			return equalFold(args[i-1], "requirepass") || equalFold(args[i-1], "masterauth")
		}
	}
	return false
}

func cmdSlowlogGet(c *Client, args [][]byte) {
	if len(args) > 3 {
		c.writeSubcommandArityError(args)
		return
	}
	count := int64(10)
	if len(args) == 3 {
		n, ok := rangeLong(c, args[2], -1, 1<<63-1, "ERR count should be greater than or equal to -1")
		if !ok {
			return
		}
		count = n
	}
	entries := c.srv.slow.entries
	if count == -1 || count > int64(len(entries)) {
		count = int64(len(entries))
	}
	c.writeArray(int(count))
	for i := len(entries) - 1; i >= len(entries)-int(count); i-- {
		e := &entries[i]
		c.writeArray(6)
		c.writeInt(e.id)
		c.writeInt(e.unix)
		c.writeInt(e.micros)
		c.writeArray(len(e.args))
		for _, a := range e.args {
			c.writeBulkString(a)
		}
		c.writeBulkString(e.addr)
		c.writeBulkString(e.name)
	}
}

func cmdSlowlogLen(c *Client, args [][]byte) { c.writeInt(int64(len(c.srv.slow.entries))) }

func cmdSlowlogReset(c *Client, args [][]byte) {
	clear(c.srv.slow.entries)
	c.srv.slow.entries = c.srv.slow.entries[:0]
	c.writeOK()
}

func cmdSlowlogHelp(c *Client, args [][]byte) {
	c.writeHelp([]string{
		"SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"GET [<count>]",
		"    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
		"    Entries are made of:",
		"    id, timestamp, time in microseconds, arguments array, client IP and port,",
		"    client name",
		"LEN",
		"    Return the length of the slowlog.",
		"RESET",
		"    Reset the slowlog.",
		"HELP",
		"    Print this help.",
	})
}
