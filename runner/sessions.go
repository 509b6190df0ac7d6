package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// sessionSlots keeps the sessions open at once on one SSH connection within
// what the server allows. OpenSSH refuses a session channel beyond
// MaxSessions (10 by default) with "open failed" and logs "no more
// sessions"; the limit is not announced, so it is learnt from the first
// refusal: the number of our sessions open at that moment. From then on an
// open waits for a slot instead of being refused. The sftp subsystem is a
// session too and holds a slot while it is open; keepalives are global
// requests and hold none.
//
// The count can only be approximate: the server frees a session when our
// close reaches it and its main loop next runs, so an open sent right after
// a close may still be refused. Such refusals are retried, never reported,
// while any other session of ours is open.
type sessionSlots struct {
	mu sync.Mutex
	// limit is the most sessions to have open at once; 0 until learnt.
	limit int
	// held counts slots taken (sessions open or being opened), open the
	// sessions whose open succeeded, maxOpen the most seen open at once:
	// the server allows at least that many.
	held, open, maxOpen int
	// wake is closed (and replaced) whenever a slot is given back.
	wake chan struct{}
	// released is when a session of ours last ended: the server may
	// count it a while longer (an sftp subsystem exits after we close
	// it, then the server reaps it).
	released time.Time
	// nextProbe is when one open may go past the learnt limit, to find
	// out whether the server allows more: a refusal right after one of
	// our closes makes the learnt limit too low.
	nextProbe time.Time
	// reclaim, when set, closes an idle session kept for reuse (sftp) to
	// free its slot; it reports whether it did.
	reclaim func() bool
}

// probeEvery spaces the opens that test whether the server allows more
// sessions than learnt: each may cost one refusal (retried).
const probeEvery = 2 * time.Second

func newSessionSlots(limit int) *sessionSlots {
	return &sessionSlots{limit: limit, wake: make(chan struct{})}
}

// errConnFull sends an open back to pickConn: this connection is full
// and the target may open another.
var errConnFull = errors.New("connection has no free session")

// errConnDead stops a wait for a slot when the connection died; the caller
// dials again.
var errConnDead = errors.New("connection closed")

// acquire takes a slot, waiting while the learnt limit is reached.
func (s *sessionSlots) acquire(ctx context.Context, dead <-chan struct{}) error {
	for {
		s.mu.Lock()
		if s.limit == 0 || s.held < s.limit {
			s.held++
			s.mu.Unlock()
			return nil
		}
		if s.held == s.limit && time.Now().After(s.nextProbe) {
			s.nextProbe = time.Now().Add(probeEvery)
			s.held++
			s.mu.Unlock()
			return nil
		}
		w := s.wake
		reclaim := s.reclaim
		s.mu.Unlock()
		if reclaim != nil && reclaim() {
			continue
		}
		select {
		case <-w:
		case <-ctx.Done():
			return ctx.Err()
		case <-dead:
			return errConnDead
		}
	}
}

// opened records that the session of a taken slot is open.
func (s *sessionSlots) opened() {
	s.mu.Lock()
	s.open++
	s.maxOpen = max(s.maxOpen, s.open)
	if s.limit > 0 && s.open > s.limit {
		// An open in flight when the limit was learnt, or a probe past
		// it, worked: the server allows more.
		s.limit = s.open
	}
	s.mu.Unlock()
}

// release gives a slot back; wasOpen says its session had opened.
func (s *sessionSlots) release(wasOpen bool) {
	s.mu.Lock()
	s.held--
	if wasOpen {
		s.open--
		s.released = time.Now()
	}
	close(s.wake)
	s.wake = make(chan struct{})
	s.mu.Unlock()
}

// refused gives back the slot of an open the server refused and learns the
// limit from it. It returns how many of our sessions were open (0: the
// refusal is not about a limit we can wait out), the learnt limit, and a
// channel closed at the next release.
func (s *sessionSlots) refused() (others int, wake <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held--
	others = s.open
	if others == 0 && time.Since(s.released) < lingering {
		// One of ours that just ended may still count on the server.
		return -1, s.wake
	}
	if others > 0 {
		// The server had at least `others` of ours open, and allowed
		// maxOpen at some point: never learn less than either.
		l := max(others, s.maxOpen)
		if s.limit == 0 || l < s.limit {
			s.limit = l
		}
	}
	s.nextProbe = time.Now().Add(probeEvery)
	return others, s.wake
}

// free reports whether a slot can be taken without waiting.
func (s *sessionSlots) free() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limit == 0 || s.held < s.limit
}

func (s *sessionSlots) learnt() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limit
}

// maxLonelyRefusals bounds the retries of a session open the server
// refuses while none of ours is open: after a close it may take a moment
// to free the session, but a server that never allows one must be
// reported.
const maxLonelyRefusals = 8

// lingering is how long after one of our sessions ended a refusal is put
// down to the server still counting it.
const lingering = 5 * time.Second

// isChannelRefusal reports whether err is the server declining a channel
// open (as opposed to the connection failing).
func isChannelRefusal(err error) bool {
	var oce *ssh.OpenChannelError
	return errors.As(err, &oce)
}

// withSlot runs open (which opens one session channel) within c's slots,
// retrying while the server refuses for lack of sessions. With spill, a
// refusal on a full connection returns errConnFull when the target may
// open another connection. On success the
// returned release gives the slot back; call it once the session is closed.
func (t *SSHTarget) withSlot(ctx context.Context, c *sshConn, spill bool, open func() error) (release func(), err error) {
	backoff := 10 * time.Millisecond
	lonely := 0
	start := time.Now()
	for {
		if err := c.slots.acquire(ctx, c.dead); err != nil {
			return nil, t.slotWaitErr(c, start, err)
		}
		err := open()
		if err == nil {
			c.slots.opened()
			var once sync.Once
			return func() { once.Do(func() { c.slots.release(true) }) }, nil
		}
		if !isChannelRefusal(err) {
			c.slots.release(false)
			return nil, err
		}
		others, wake := c.slots.refused()
		if others == 0 {
			// Nothing of ours open, nothing ended lately: the server
			// refuses sessions outright.
			lonely++
			if lonely > maxLonelyRefusals {
				return nil, &ConnError{Host: t.cfg.Name, Addr: t.cfg.addr(), User: t.cfg.User, Op: "open session", Cause: CauseSessionRefused, Err: err}
			}
		} else {
			lonely = 0
			if others > 0 && spill && t.mayAddConn() {
				// Full: another connection may have room.
				return nil, errConnFull
			}
		}
		// Wait for one of ours to end, or a moment for the server to
		// free one we closed.
		timer := time.NewTimer(backoff)
		select {
		case <-wake:
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return nil, t.slotWaitErr(c, start, ctx.Err())
		case <-c.dead:
			timer.Stop()
			return nil, errConnDead
		}
		timer.Stop()
		backoff = min(2*backoff, 500*time.Millisecond)
	}
}

// slotWaitErr says what a session open that ctx ended was waiting for
// (every session the host's sshd allows on the connection taken), when it
// waited for one at all.
func (t *SSHTarget) slotWaitErr(c *sshConn, start time.Time, err error) error {
	if err == errConnDead || (!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)) {
		return err
	}
	limit := c.slots.learnt()
	if limit == 0 {
		return err
	}
	return fmt.Errorf("gave up after %s waiting for a free SSH session on %s (its sshd allows %d at once on a connection, MaxSessions, and all were taken): %w", time.Since(start).Round(100*time.Millisecond), t.cfg.Name, limit, err)
}

// SessionLimit reports the most sessions the host's sshd was found to allow
// at once on one connection (its MaxSessions), or 0 while no session has
// been refused.
func (t *SSHTarget) SessionLimit() int {
	t.mu.Lock()
	c := t.conn
	t.mu.Unlock()
	if c == nil {
		return 0
	}
	return c.slots.learnt()
}

// maxConns bounds the connections an SSHTarget opens to one host.
const maxConns = 4

// pickConn returns a connection with a free session slot: primary, else
// one of the extra connections, else a new one (dialled without asking
// anyone anything: only what the first dial learnt, a saved or accepted
// host key, a password or passphrase given then, is used). When none can
// be had, primary, to queue on. More connections keep a few long commands
// (samplers, a bench) from holding every session the server allows, and
// add throughput when many commands run at once.
func (t *SSHTarget) pickConn(ctx context.Context, primary *sshConn) *sshConn {
	if primary.slots.free() {
		return primary
	}
	t.mu.Lock()
	live := t.extra[:0]
	for _, x := range t.extra {
		if !x.isDead() {
			live = append(live, x)
		}
	}
	clear(t.extra[len(live):])
	t.extra = live
	for _, x := range t.extra {
		if x.slots.free() {
			t.mu.Unlock()
			return x
		}
	}
	if t.closed || t.extraDialing || len(t.extra)+1 >= maxConns || time.Since(t.extraFailed) < extraRetry {
		t.mu.Unlock()
		return primary
	}
	t.extraDialing = true
	t.mu.Unlock()

	c, err := t.dial(ctx, primary.slots.learnt(), noPrompter{})

	t.mu.Lock()
	defer t.mu.Unlock()
	t.extraDialing = false
	if err != nil {
		if ctx.Err() == nil {
			t.extraFailed = time.Now()
		}
		return primary
	}
	if t.closed {
		c.client.Close()
		return primary
	}
	t.extra = append(t.extra, c)
	return c
}

// mayAddConn reports whether pickConn could open another connection now.
func (t *SSHTarget) mayAddConn() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.closed && !t.extraDialing && len(t.extra)+1 < maxConns && time.Since(t.extraFailed) >= extraRetry
}

// extraRetry spaces attempts at an extra connection after one failed (the
// server's MaxStartups, a password nobody can be asked for again).
const extraRetry = 30 * time.Second

// noPrompter asks nobody: extra connections use only what is known.
type noPrompter struct{}

var errNoPrompt = errors.New("no one is asked for an extra connection")

func (noPrompter) HostKey(context.Context, HostKeyPrompt) (HostKeyDecision, error) {
	// An error, not Refuse: a refusal would be remembered as the person's.
	return Refuse, errNoPrompt
}

func (noPrompter) Secret(context.Context, SecretPrompt) (string, error) {
	return "", errNoPrompt
}

// Conns reports how many connections the target has open to its host.
func (t *SSHTarget) Conns() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	if t.conn != nil && !t.conn.isDead() {
		n++
	}
	for _, x := range t.extra {
		if !x.isDead() {
			n++
		}
	}
	return n
}
