package server

import (
	"runtime/debug"
	"strings"
	"time"

	"github.com/dpulab/dpulab/server/resp"
)

// Containment: a panic inside one command must not take the server down
// for every client. exec recovers it (see contain), answers the client
// "-ERR internal error in NAME", closes that connection, logs the command
// and stack (once per command name per panicLogEvery) and counts it in
// INFO errorstats as errorstat_INTERNAL. Commands run with Server.mu held
// by the connection path, and recovering inside exec leaves it held, so
// the caller unlocks it as usual. See doc.go's "When a command panics".

// panicLogEvery rate-limits the stack a command's panics log.
const panicLogEvery = time.Minute

// panicState is what the server remembers of contained panics, guarded by
// Server.mu.
type panicState struct {
	count   int64                // panics contained since start
	logged  map[string]time.Time // by command name: when its stack was last logged
	last    any                  // the last panic's value and stack (tests read them)
	lastCmd string
	stack   []byte
}

// contain handles a panic v recovered from the command args that c was
// running; the command's reply started at out[outStart]. It drops the
// partial reply, answers the error, marks the client to be closed after
// its output is written and puts back what the command left set on c.
func (c *Client) contain(args [][]byte, v any, outStart int) {
	s := c.srv
	name := strings.ToLower(string(args[0]))
	if c.cur != nil {
		name = c.cur.Name // the command inside EXEC, "client|kill" for a subcommand
	}
	stack := debug.Stack()
	p := &s.panics
	p.count++
	p.last, p.lastCmd, p.stack = v, name, stack
	now := time.Now()
	if p.logged == nil {
		p.logged = make(map[string]time.Time)
	}
	if at, ok := p.logged[name]; !ok || now.Sub(at) >= panicLogEvery {
		p.logged[name] = now
		s.logf('#', "Internal error in command '%s' from client id=%d addr=%s: %v (the client is closed; the server keeps serving)\n%s",
			name, c.id, c.addr, v, stack)
	}
	// The client's state as a finished command leaves it.
	c.cur = nil
	c.denyBlocking = false
	c.multi = nil
	if len(c.touched) > 0 {
		c.accountTouched()
	}
	if outStart < c.outPos {
		outStart = c.outPos // already written by the event loop
	}
	if outStart <= len(c.out) {
		c.out = c.out[:outStart]
	}
	msg := "ERR internal error in " + strings.ToUpper(strings.ReplaceAll(name, "|", " "))
	c.errors++
	s.stats.totalErrors++
	s.stats.errorReplies["INTERNAL"]++
	c.out = resp.AppendError(c.out, msg)
	c.closeAfter = true
}
