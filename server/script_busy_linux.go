//go:build linux

package server

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/dpulab/dpulab/server/resp"
)

// serveBusy answers the other clients while a script runs past
// busy-reply-threshold, as Redis's processEventsWhileBlocked does: it is
// called from inside the script (scriptEngine.tick), on the goroutine
// running it, with Server.mu held. When the script runs on the event loop,
// the loop's other clients are read and their commands answered with
// BUSY, except SCRIPT KILL, FUNCTION KILL, FUNCTION STATS and SHUTDOWN
// NOSAVE, which run. The script's own client is not read. Clients on the
// goroutine path (and the loop, when the script runs on one of those) wait
// for the lock until the script ends.
func (s *Server) serveBusy(running *Client) {
	if l := running.loop; l != nil {
		l.serveBusy(running)
	}
}

func (l *eventLoop) serveBusy(running *Client) {
	var events [64]unix.EpollEvent
	n, err := unix.EpollWait(l.epfd, events[:], 0)
	if err != nil {
		return
	}
	s := l.s
	limits := resp.Limits{MaxBulkLen: s.maxBulk()}
	for _, ev := range events[:n] {
		fd := int(ev.Fd)
		if fd == l.wakefd || fd >= len(l.byFD) {
			continue
		}
		c := l.byFD[fd]
		if c == nil || c == running || c.wantOut || c.blocked != nil || c.closeAfter || c.gone.Load() || c.killed.Load() {
			continue
		}
		// Read what fits without growing the buffer (makeRoom takes
		// the lock this goroutine holds); the rest waits for the loop.
		if c.rbuf == nil {
			c.rbuf = make([]byte, readBufSize)
		}
		if c.wpos == len(c.rbuf) && c.rpos > 0 {
			c.wpos = copy(c.rbuf, c.rbuf[c.rpos:c.wpos])
			c.rpos = 0
		}
		if c.wpos < len(c.rbuf) {
			// EOF and errors are left for the loop, which sees them
			// again after the script.
			if m, err := rawIO(unix.SYS_READ, c.fd, c.rbuf[c.wpos:]); err == nil && m > 0 {
				c.wpos += m
			}
		}
		now := running.now
		for c.rpos < c.wpos && !c.closeAfter {
			limits.Unauthenticated = c.authRequired()
			args, m, err := resp.ParseCommand(c.rbuf[c.rpos:c.wpos], c.args, limits)
			c.args = args
			if err != nil {
				var pe *resp.ProtocolError
				if errors.As(err, &pe) {
					s.logf('-', "Protocol error (%s) from client: id=%d addr=%s", pe.Msg, c.id, c.addr)
				}
				c.writeError("ERR " + err.Error())
				c.closeAfter = true
				break
			}
			if m == 0 {
				break
			}
			c.rpos += m
			if len(args) == 0 {
				continue
			}
			c.now = now
			c.lastInteraction.Store(now)
			if allowedWhileBusy(args) {
				if isShutdownNoSave(args) {
					if r := s.lua.run; r != nil {
						r.killed, r.shutdown = true, true
					}
				}
				c.exec(args)
				continue
			}
			s.stats.totalCommands++
			c.rejectInMulti()
			c.writeError(errScriptBusy)
		}
		c.publish()
		if c.closeAfter {
			l.queueOut(c)
			continue
		}
		for c.outPos < len(c.out) {
			m, err := rawIO(unix.SYS_WRITE, c.fd, c.out[c.outPos:])
			if m <= 0 || err != nil {
				break
			}
			c.outPos += m
		}
		if c.outPos < len(c.out) {
			l.queueOut(c)
		} else {
			c.out, c.outPos = c.out[:0], 0
		}
	}
}
