package server

import (
	"math"
	"time"
)

// CLIENT PAUSE and CLIENT UNPAUSE, as Redis 7.0's pauseClients and
// blockPostponeClient (networking.c, server.c's processCommand).
//
// A pause holds back commands, it never fails them: a command the pause
// covers is postponed, the client waits exactly as a blocked client does
// (CLIENT LIST's b flag, INFO's blocked_clients), and its remaining input
// stays in its buffer. The dispatcher (conn.go's exec) asks postpone once
// the command has passed arity, auth, OOM and subscribed-mode checks, as
// Redis does; postpone rewinds the client's read position to the start of
// the command, so when the pause ends the command is parsed and run again
// from its own bytes, as if it had just arrived, in the order the clients
// were postponed. Nothing is copied while paused.
//
// Which commands wait: under ALL every command of every client (CLIENT
// UNPAUSE included: Redis 7.0 lets only the timeout end an ALL pause);
// under WRITE the commands that write (flagWrite, the blocking ones among
// them), PUBLISH and SPUBLISH (Redis's may-replicate), and an EXEC whose
// queue holds one of those; a MULTI's write is postponed before it is
// queued. A new pause takes the stricter mode and the later end of the two.
//
// Blocked clients (BLPOP...) keep waiting through a pause and time out as
// usual; a write that would serve them is itself postponed under WRITE.
// CLIENT UNBLOCK does not release a postponed client (it replies 0: Redis
// 7.0.15 aborts with "Unknown btype" there, later versions refuse).
//
// The SET/GET hot path pays one comparison per command (pause.mode, next
// to the maxmemory and subscribed-mode checks it already makes).

// pauseMode is what a CLIENT PAUSE holds back, in order of strictness.
type pauseMode uint8

const (
	pauseOff   pauseMode = iota
	pauseWrite           // writes and may-replicate commands
	pauseAll             // every command
)

// pauseState is the server's pause, guarded by Server.mu.
type pauseState struct {
	mode    pauseMode
	end     int64       // unix ms; the pause is over at end
	timer   *time.Timer // ends the pause at end
	waiting []*Client   // postponed clients, in the order they were
}

// postpone holds c's command back when a pause covers it, and reports
// whether it did; the dispatcher then writes no reply. Call it only while
// s.pause.mode != pauseOff, with s.mu held, from exec (c.cmdLen is the
// command's length in rbuf).
func (c *Client) postpone(cmd *command) bool {
	s := c.srv
	p := &s.pause
	if c.now >= p.end {
		// The timer has not run yet; the pause is over all the same.
		s.endPause(c)
		return false
	}
	if p.mode == pauseWrite && !pausedByWrite(c, cmd) {
		return false
	}
	// Run again from its own bytes once the pause ends: uncount it now.
	c.rpos -= c.cmdLen
	s.stats.netInput -= int64(c.cmdLen)
	s.stats.totalCommands--
	c.lastCmd = cmd.Name
	c.blocked = &blockState{cmd: cmd, postponed: true}
	s.blk.blocked++
	p.waiting = append(p.waiting, c)
	return true
}

// pausedByWrite reports whether a WRITE pause holds cmd back (Redis's
// is_may_replicate_command: write or may-replicate, or an EXEC queueing
// one).
func pausedByWrite(c *Client, cmd *command) bool {
	if mayReplicate(cmd) {
		return true
	}
	if cmd.Name == "exec" && c.multi != nil {
		for _, q := range c.multi.cmds {
			if mayReplicate(q.cmd) {
				return true
			}
		}
	}
	return false
}

// mayReplicate reports whether Redis would propagate cmd to replicas:
// writes, and PUBLISH/SPUBLISH (the scripting commands Redis also counts
// are refused here anyway).
func mayReplicate(cmd *command) bool {
	return cmd.Flags&flagWrite != 0 || cmd.Name == "publish" || cmd.Name == "spublish"
}

// startPause is CLIENT PAUSE's effect: the stricter mode and the later end
// win (Redis 7.0's pauseClients). end 0 pauses until the next check.
func (s *Server) startPause(from *Client, mode pauseMode, end int64) {
	p := &s.pause
	if p.mode != pauseOff && from.now >= p.end {
		s.endPause(from) // an expired pause is not extended
	}
	p.mode = max(p.mode, mode)
	if end > p.end {
		p.end = end
		if p.timer != nil {
			p.timer.Stop()
		}
		p.timer = nil
		// A pause past what a timer counts (292 years) ends by
		// CLIENT UNPAUSE only.
		if wait := end - time.Now().UnixMilli(); wait < math.MaxInt64/int64(time.Millisecond) {
			p.timer = time.AfterFunc(time.Duration(max(wait, 0))*time.Millisecond, s.pauseTimeout)
		}
	}
}

// pauseTimeout ends the pause when its time has come (a later pause may
// have moved the end meanwhile).
func (s *Server) pauseTimeout() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pause.mode != pauseOff && time.Now().UnixMilli() >= s.pause.end {
		s.endPause(nil)
	}
}

// endPause lifts the pause and lets every postponed client run its
// command, in the order they were postponed. from is the client whose
// command ends it (nil for the timer). Call it with s.mu held.
func (s *Server) endPause(from *Client) {
	p := &s.pause
	waiting := p.waiting
	p.mode, p.end, p.waiting = pauseOff, 0, nil
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	for _, c := range waiting {
		if c.blocked == nil || !c.blocked.postponed {
			continue // left meanwhile (release unblocked it)
		}
		c.blocked = nil
		s.blk.blocked--
		// No reply: deliverUnblocked has the client's owner run what
		// waits in its buffer, the postponed command first.
		s.deliverUnblocked(from, c, nil)
	}
}

// leavePause forgets a postponed client that leaves (Client.unblock).
func (s *Server) leavePause(c *Client) {
	w := s.pause.waiting
	for i, o := range w {
		if o == c {
			s.pause.waiting = append(w[:i], w[i+1:]...)
			return
		}
	}
}

// cmdClientPause is CLIENT PAUSE timeout [WRITE|ALL].
func cmdClientPause(c *Client, args [][]byte) {
	if len(args) > 4 {
		c.writeSubcommandArityError(args)
		return
	}
	ms, ok := parseInt(args[2])
	if !ok {
		c.writeError("ERR timeout is not an integer or out of range")
		return
	}
	if ms < 0 {
		c.writeError("ERR timeout is negative")
		return
	}
	mode := pauseAll
	if len(args) == 4 {
		switch {
		case equalFold(args[3], "all"):
		case equalFold(args[3], "write"):
			mode = pauseWrite
		default:
			c.writeError("ERR CLIENT PAUSE mode must be WRITE or ALL")
			return
		}
	}
	// Redis's getTimeoutFromObjectOrReply: 0 stays 0 (over at once), a
	// sum past the largest time waits for good.
	var end int64
	if ms > 0 {
		now := time.Now().UnixMilli()
		end = now + min(ms, 1<<62-now)
	}
	c.srv.startPause(c, mode, end)
	c.writeOK()
}

// cmdClientUnpause is CLIENT UNPAUSE: the pause ends now.
func cmdClientUnpause(c *Client, args [][]byte) {
	if c.srv.pause.mode != pauseOff {
		c.srv.endPause(c)
	}
	c.writeOK()
}
