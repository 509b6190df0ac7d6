//go:build linux

package server

import (
	"net"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/dpulab/dpulab/server/resp"
)

// eventLoop serves connections the way Redis's ae loop does: one thread
// waits in epoll_wait for every client at once, reads once from each ready
// one, runs all their complete commands under one acquisition of Server.mu,
// then writes each client's replies. A request costs a read and a write
// plus a share of one epoll_wait, where a goroutine per connection adds the
// netpoller's wakeups and goroutine switches to every request.
//
// Accepting stays with Go's listeners (handle); handle then gives the loop
// a duplicate of the connection's descriptor (detachFD) through adopt. The
// loop goroutine owns every client's descriptor and buffers; other
// goroutines ask it to close one with kill and to finish with stop, both
// through a queue and an eventfd that wakes epoll_wait.
type eventLoop struct {
	s      *Server
	epfd   int
	wakefd int

	mu      sync.Mutex
	adds    []*Client
	kills   []*Client
	stopped bool

	// asyncq lists clients other goroutines gave output (Client.deliver)
	// or unblocked; guarded by Server.mu, which they hold.
	asyncq []*Client

	// Owned by the loop goroutine.
	outq    []*Client // clients given output by another client's command this iteration
	byFD    []*Client
	events  []unix.EpollEvent
	ready   []*Client // read something this iteration
	pending []*Client // drained output with commands left in their buffer
	ids     []int     // statistics ids of the iteration's commands
}

// newEventLoop creates the loop's epoll instance and wake-up eventfd.
func newEventLoop(s *Server) (*eventLoop, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, &net.OpError{Op: "epoll_create1", Err: err}
	}
	wakefd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(epfd)
		return nil, &net.OpError{Op: "eventfd", Err: err}
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wakefd)}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wakefd, &ev); err != nil {
		unix.Close(epfd)
		unix.Close(wakefd)
		return nil, &net.OpError{Op: "epoll_ctl", Err: err}
	}
	return &eventLoop{
		s:      s,
		epfd:   epfd,
		wakefd: wakefd,
		events: make([]unix.EpollEvent, 256),
		ids:    make([]int, 0, 1024),
	}, nil
}

// release closes the descriptors of a loop that never ran.
func (l *eventLoop) release() {
	unix.Close(l.epfd)
	unix.Close(l.wakefd)
}

// detachFD takes conn's socket out of Go's netpoller: it returns a
// non-blocking close-on-exec duplicate of its descriptor and closes conn.
// ok is false (and conn untouched) for connections without a descriptor,
// such as net.Pipe's.
func detachFD(conn net.Conn) (fd int, ok bool) {
	sc, isSys := conn.(syscall.Conn)
	if !isSys {
		return -1, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1, false
	}
	fd = -1
	cerr := rc.Control(func(sfd uintptr) {
		fd, err = unix.FcntlInt(sfd, unix.F_DUPFD_CLOEXEC, 0)
	})
	if cerr != nil || err != nil || fd < 0 {
		return -1, false
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, false
	}
	// Closing Go's descriptor removes it from the netpoller; the socket
	// stays open through the duplicate.
	conn.Close()
	return fd, true
}

// adopt hands a client whose fd is detached to the loop. After stop the
// client is closed at once.
func (l *eventLoop) adopt(c *Client) {
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		l.closeFD(c)
		return
	}
	l.adds = append(l.adds, c)
	l.mu.Unlock()
	l.wake()
}

// kill asks the loop to close c. Any goroutine may call it, the loop's own
// included (CLIENT KILL runs on it).
func (l *eventLoop) kill(c *Client) {
	if c.killed.Swap(true) {
		return
	}
	l.mu.Lock()
	stopped := l.stopped
	if !stopped {
		l.kills = append(l.kills, c)
	}
	l.mu.Unlock()
	if !stopped {
		l.wake()
	}
}

// stop makes the loop close every client and return.
func (l *eventLoop) stop() {
	l.mu.Lock()
	l.stopped = true
	l.mu.Unlock()
	l.wake()
}

// queueOut has the loop flush c after this iteration's commands: another
// client's command (a PUBLISH, a push that served c) wrote to c.out. Only
// the loop goroutine calls it.
func (l *eventLoop) queueOut(c *Client) {
	if !c.outQueued {
		c.outQueued = true
		l.outq = append(l.outq, c)
	}
}

// notifyAsync has the loop take c.async and run c's waiting commands; the
// caller holds Server.mu.
func (l *eventLoop) notifyAsync(c *Client) {
	l.asyncq = append(l.asyncq, c)
	l.wake()
}

// takeNotified makes the clients of asyncq ready, so that runReady moves
// their async output into out (runCommands) and runs what they have.
func (l *eventLoop) takeNotified() {
	l.s.mu.Lock()
	q := l.asyncq
	l.asyncq = nil
	l.s.mu.Unlock()
	for _, c := range q {
		if !c.gone.Load() && !c.inReady {
			c.inReady = true
			l.ready = append(l.ready, c)
		}
	}
}

func (l *eventLoop) wake() {
	one := [8]byte{1}
	// EAGAIN means the counter is already non-zero: the loop will wake.
	unix.Write(l.wakefd, one[:])
}

// closeFD closes c's descriptor and forgets the client, once.
func (l *eventLoop) closeFD(c *Client) {
	if c.gone.Swap(true) {
		return
	}
	unix.Close(c.fd)
	l.s.dropClient(c)
}

// drop closes a client the loop has registered (or is about to) and
// releases its buffers.
func (l *eventLoop) drop(c *Client) {
	if c.fd < len(l.byFD) && l.byFD[c.fd] == c {
		l.byFD[c.fd] = nil
	}
	c.release()
	// Closing the only descriptor of the socket also removes it from
	// the epoll set.
	l.closeFD(c)
}

// run is the loop; it returns after stop, with every client closed.
func (l *eventLoop) run() {
	// One thread for the loop's lifetime, as Redis's main thread: the
	// goroutine never parks except in epoll_wait and on Server.mu.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer l.s.wg.Done()
	for {
		timeout := -1
		if len(l.pending) > 0 {
			timeout = 0
		}
		n, err := unix.EpollWait(l.epfd, l.events, timeout)
		if err != nil {
			if err == unix.EINTR {
				continue
			}
			l.s.logf('#', "epoll_wait failed, closing all clients: %v", err)
			l.shutdown()
			return
		}
		for _, c := range l.pending {
			if !c.gone.Load() && !c.inReady {
				c.inReady = true
				l.ready = append(l.ready, c)
			}
		}
		clear(l.pending)
		l.pending = l.pending[:0]
		woken := false
		for _, ev := range l.events[:n] {
			fd := int(ev.Fd)
			if fd == l.wakefd {
				woken = true
				continue
			}
			if fd >= len(l.byFD) || l.byFD[fd] == nil {
				continue
			}
			c := l.byFD[fd]
			if c.wantOut {
				// Only EPOLLOUT (or an error) is registered meanwhile.
				l.flush(c)
				continue
			}
			l.read(c)
		}
		if woken {
			// Reset the eventfd before taking what it announced: a
			// wake-up after this read is seen by the next epoll_wait,
			// while one consumed after the queues were taken would be
			// lost (and with it, a client's asyncq entry).
			var b [8]byte
			unix.Read(l.wakefd, b[:])
			l.takeNotified()
		}
		if len(l.ready) > 0 {
			l.runReady()
			for _, c := range l.ready {
				if !c.gone.Load() && !c.killed.Load() {
					l.flush(c)
				}
			}
			// The lists are reused; clearing them keeps a client that
			// left from staying reachable through a stale slot.
			clear(l.ready)
			l.ready = l.ready[:0]
		}
		if len(l.outq) > 0 {
			for _, c := range l.outq {
				c.outQueued = false
				if !c.gone.Load() && !c.killed.Load() {
					l.flush(c)
				}
			}
			clear(l.outq)
			l.outq = l.outq[:0]
		}
		if woken && l.drainQueue() {
			l.shutdown()
			return
		}
	}
}

// read reads once from a readable client.
func (l *eventLoop) read(c *Client) {
	if !c.makeRoom() {
		l.drop(c)
		return
	}
	n, err := rawIO(unix.SYS_READ, c.fd, c.rbuf[c.wpos:])
	if err == unix.EAGAIN || err == unix.EINTR {
		return
	}
	if n <= 0 {
		l.drop(c) // EOF or error
		return
	}
	c.wpos += n
	if !c.inReady {
		c.inReady = true
		l.ready = append(l.ready, c)
	}
}

// runReady runs the complete commands of every ready client under one
// acquisition of the server lock.
func (l *eventLoop) runReady() {
	s := l.s
	s.mu.Lock()
	// One clock read per iteration, as Redis caches the time per event
	// loop cycle.
	start := time.Now()
	now := start.UnixMilli()
	limits := resp.Limits{MaxBulkLen: s.maxBulk()}
	batch := l.ids[:0]
	ncmds := 0
	for _, c := range l.ready {
		c.inReady = false
		if c.gone.Load() || c.killed.Load() {
			continue
		}
		c.now = now
		c.lastInteraction.Store(now)
		res, n := c.runCommands(limits, &batch)
		ncmds += n
		c.moreCmds = res == runFlush
		s.stats.netOutput += int64(len(c.out))
		c.settle()
	}
	s.chargeTime(batch, ncmds, start)
	s.mu.Unlock()
}

// flush writes c's pending output. On a short write it waits for EPOLLOUT
// and reads nothing from c meanwhile, so a client that does not read its
// replies holds at most one batch of them (about flushAt) in memory.
func (l *eventLoop) flush(c *Client) {
	for c.outPos < len(c.out) {
		n, err := rawIO(unix.SYS_WRITE, c.fd, c.out[c.outPos:])
		if n > 0 {
			c.outPos += n
		}
		switch {
		case err == nil || err == unix.EINTR:
		case err == unix.EAGAIN:
			c.omem.Store(int64(len(c.out) - c.outPos))
			if !c.wantOut {
				if !l.watch(c, unix.EPOLLOUT) {
					return
				}
				c.wantOut = true
			}
			return
		default:
			l.drop(c)
			return
		}
	}
	if cap(c.out) > maxIdleOut {
		if cap(c.out) >= bigRelease {
			returnMemory()
		}
		c.out = nil
	} else {
		c.out = c.out[:0]
	}
	c.outPos = 0
	c.omem.Store(0)
	if c.wantOut {
		if !l.watch(c, unix.EPOLLIN) {
			return
		}
		c.wantOut = false
	}
	if c.closeAfter {
		l.drop(c)
		return
	}
	if c.moreCmds {
		c.moreCmds = false
		l.pending = append(l.pending, c)
	}
}

// rawIO is read(2) or write(2) on a non-blocking descriptor without the
// runtime's syscall bookkeeping (entersyscall/exitsyscall): the call never
// blocks, and two of them per request made that bookkeeping a visible
// share of the loop's time.
func rawIO(trap uintptr, fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, e := unix.RawSyscall(trap, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}

// watch sets the events epoll reports for c; on failure c is closed.
func (l *eventLoop) watch(c *Client, events uint32) bool {
	ev := unix.EpollEvent{Events: events, Fd: int32(c.fd)}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_MOD, c.fd, &ev); err != nil {
		l.drop(c)
		return false
	}
	return true
}

// drainQueue registers adopted clients and closes killed ones. It reports
// whether the loop must stop.
func (l *eventLoop) drainQueue() (stop bool) {
	l.mu.Lock()
	adds, kills, stopped := l.adds, l.kills, l.stopped
	l.adds, l.kills = nil, nil
	l.mu.Unlock()
	for _, c := range kills {
		l.drop(c)
	}
	for _, c := range adds {
		if c.gone.Load() {
			continue
		}
		if c.killed.Load() {
			l.drop(c)
			continue
		}
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(c.fd)}
		if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, c.fd, &ev); err != nil {
			l.s.logf('#', "Error registering a client with the event loop: id=%d addr=%s: %v", c.id, c.addr, err)
			l.drop(c)
			continue
		}
		for c.fd >= len(l.byFD) {
			l.byFD = append(l.byFD, make([]*Client, len(l.byFD)+64)...)
		}
		l.byFD[c.fd] = c
	}
	return stopped
}

// shutdown closes every client and the loop's own descriptors.
func (l *eventLoop) shutdown() {
	l.mu.Lock()
	l.stopped = true
	adds, kills := l.adds, l.kills
	l.adds, l.kills = nil, nil
	l.mu.Unlock()
	for _, c := range append(adds, kills...) {
		l.drop(c)
	}
	for _, c := range l.byFD {
		if c != nil {
			l.drop(c)
		}
	}
	l.release()
}
