package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dpulab/dpulab/server/transport"
)

// Version is the Redis version the server reports (INFO redis_version,
// HELLO version): the Redis release whose behaviour it follows, so clients
// that gate features on it choose the right ones.
const Version = "7.0.15"

// Server is one instance: its own keyspace, clients, statistics and
// listeners. Several can run in one process (dpulab server --instances N).
type Server struct {
	// mu guards the keyspace, the config, the statistics and every
	// Client's per-command state. A connection holds it for a whole batch
	// of pipelined commands, not per command: one lock round trip per read.
	mu  sync.Mutex
	cfg Config
	// sysRoot is where /sys is read from for INFO's RDMA ports ("/"; a
	// fixture tree in tests).
	sysRoot string
	dbs     []*db
	stats   stats
	panics  panicState // contained command panics (contain.go)

	logw   io.Writer
	logMu  sync.Mutex
	closer io.Closer // log file

	clientsMu sync.Mutex
	clients   map[int64]*Client
	nclients  atomic.Int64
	nextID    atomic.Int64

	// loop serves the connections that have a file descriptor (Linux,
	// see loop_linux.go); nil when connections get a goroutine each.
	loop *eventLoop

	lnMu      sync.Mutex
	listeners []net.Listener
	addrs     []net.Addr
	wg        sync.WaitGroup

	// spare is a descriptor held in reserve while serving: when accept
	// fails for lack of descriptors, closing it lets acceptLoop take the
	// waiting client and tell it the server is full (shed) instead of
	// leaving it in the backlog, unanswered.
	spareMu sync.Mutex
	spare   *os.File

	cmds *commandTable

	// Pub/sub subscriptions and blocked clients (pubsub.go, blocking.go),
	// guarded by mu.
	ps    pubsubState
	blk   blockingState
	pause pauseState    // CLIENT PAUSE (client_pause.go)
	slow  slowlogState  // SLOWLOG (slowlog.go)
	lua   *scriptEngine // EVAL and FCALL's Lua state (script.go), created on first use
	// Every key's 24 clock bits record its last access, as in Redis
	// (OBJECT IDLETIME, LRU eviction), or under an LFU policy its access
	// frequency (OBJECT FREQ, LFU eviction); see Client.lookup.
	lfu        bool   // an LFU maxmemory policy is selected
	lruClock   uint32 // lruClock(now), refreshed by cron
	lfuMinutes uint32 // lfuMinutes(now), refreshed by cron
	newClock   uint32 // the clock bits of a key created now

	// CLIENT TRACKING's table (tracking.go), guarded by mu.
	trk trackingState
	// latencyTracking: latency-tracking is on (latency.go).
	latencyTracking bool

	// logLevel is cfg.LogLevel as the order of the least important level
	// logged (4 = nothing), readable without mu: logf is called with and
	// without it.
	logLevel atomic.Int32

	start    time.Time
	done     chan struct{} // closed by Shutdown
	doneOnce sync.Once
}

// New checks cfg and returns a server ready to ListenAndServe (or Serve on
// listeners of your own).
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("server config: %w", err)
	}
	if cfg.RDMA.RDMARequested() {
		if err := transport.Available(transport.RDMA); err != nil {
			return nil, fmt.Errorf("server config: rdma-port/rdma-enabled: %w; or remove rdma-port and rdma-enabled from the config", err)
		}
	}
	s := &Server{
		cfg:     cfg,
		clients: make(map[int64]*Client),
		start:   time.Now(),
		done:    make(chan struct{}),
		logw:    os.Stdout,
		cmds:    table(),
		sysRoot: "/",
	}
	s.applyDerived()
	if cfg.LogFile != "" {
		f, err := os.OpenFile(cfg.LogFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("open logfile: %w", err)
		}
		s.logw, s.closer = f, f
	}
	if cfg.logWriter != nil {
		s.logw = cfg.logWriter
	}
	s.dbs = make([]*db, cfg.Databases)
	for i := range s.dbs {
		s.dbs[i] = newDB()
	}
	s.stats.init(len(s.cmds.all))
	for _, d := range cfg.Ignored {
		s.logf('#', "config directive %q is accepted but has no effect in dpulab server", d)
	}
	// As Redis at start: a client past the descriptor limit would hang in
	// the listen backlog, so maxclients must fit the limit.
	fitted, err := s.fitDescriptors(cfg.MaxClients)
	if err != nil {
		if s.closer != nil {
			s.closer.Close()
		}
		return nil, fmt.Errorf("server config: maxclients: %w", err)
	}
	s.cfg.MaxClients = fitted
	return s, nil
}

// WithLog returns cfg with the log sent to w instead of LogFile/stdout
// (tests pass io.Discard or a buffer).
func (c Config) WithLog(w io.Writer) Config {
	c.logWriter = w
	return c
}

// logf writes a Redis-style log line ("pid:M 02 Jan 2006 15:04:05.000 * msg").
// level is one of '.', '-', '*', '#' (debug, verbose, notice, warning).
func (s *Server) logf(level byte, format string, a ...any) {
	if logOrder(level) < s.logLevel.Load() {
		return
	}
	line := fmt.Sprintf("%d:M %s %c %s\n", os.Getpid(), time.Now().Format("02 Jan 2006 15:04:05.000"), level, fmt.Sprintf(format, a...))
	s.logMu.Lock()
	io.WriteString(s.logw, line)
	s.logMu.Unlock()
}

// Addrs returns the addresses being listened on (useful with port 0 when a
// listener was passed to Serve).
func (s *Server) Addrs() []net.Addr {
	s.lnMu.Lock()
	defer s.lnMu.Unlock()
	return append([]net.Addr(nil), s.addrs...)
}

// listenSpec is one listener the configuration asks for.
type listenSpec struct {
	ep transport.Endpoint
	// optional: a bind address written "-ADDR", which may be missing
	// (Redis's "-::1"): failing to listen there is a warning.
	optional bool
}

// listenSpecs lists the listeners cfg asks for: TCP on every bind address
// at port, the Unix socket, and RDMA on rdma-bind (or bind) at rdma-port,
// or at port when only rdma-enabled is set.
func (c *Config) listenSpecs() []listenSpec {
	var out []listenSpec
	add := func(n transport.Name, binds []string, port int) {
		for _, b := range binds {
			host := strings.TrimPrefix(b, "-")
			if host == "*" {
				host = ""
			}
			out = append(out, listenSpec{
				ep:       transport.Endpoint{Transport: n, Address: net.JoinHostPort(host, strconv.Itoa(port))},
				optional: strings.HasPrefix(b, "-"),
			})
		}
	}
	if c.Port != 0 {
		add(transport.TCP, c.Bind, c.Port)
	}
	if c.UnixSocket != "" {
		out = append(out, listenSpec{ep: transport.UnixEndpoint(c.UnixSocket)})
	}
	if c.RDMA.RDMARequested() {
		binds, port := c.RDMA.Bind, c.RDMA.Port
		if len(binds) == 0 {
			binds = c.Bind
		}
		if port == 0 {
			port = c.Port
		}
		add(transport.RDMA, binds, port)
	}
	return out
}

// transportOptions are the listeners' settings from cfg.
func (c *Config) transportOptions() transport.Options {
	r := &c.RDMA
	return transport.Options{
		UnixPerm: os.FileMode(c.UnixSocketPerm),
		RDMA: transport.RDMAOptions{
			UC:               r.TransportMode == "unreliable-connected",
			RxSize:           int(r.RxSize),
			InlineSize:       r.InlineSize,
			SQSize:           r.SQSize,
			RQSize:           r.RQSize,
			Poll:             time.Duration(r.PollUS) * time.Microsecond,
			RetryCount:       r.RetryCount,
			CompletionVector: r.CompletionVector,
		},
	}
}

// Listen opens the configured listeners (TCP, Unix, RDMA) through the
// transport seam, without serving them.
func (s *Server) Listen() ([]net.Listener, error) {
	var lns []net.Listener
	opts := s.cfg.transportOptions()
	opts.Refused = func(peer string, err error) {
		if peer == "" {
			s.logf('#', "RDMA: %v", err)
			return
		}
		s.logf('*', "Refused RDMA connection from %s: %v", peer, err)
	}
	for _, sp := range s.cfg.listenSpecs() {
		ln, err := transport.Listen(context.Background(), sp.ep, opts)
		if err != nil {
			if sp.optional {
				s.logf('#', "Warning: Could not create server listening socket %s: %v", sp.ep, err)
				continue
			}
			for _, l := range lns {
				l.Close()
			}
			return nil, fmt.Errorf("listen on %s: %w", sp.ep, err)
		}
		lns = append(lns, ln)
	}
	if len(lns) == 0 {
		return nil, errors.New("no listening socket could be opened; check bind and port")
	}
	return lns, nil
}

// ListenAndServe opens the configured listeners and serves until ctx is
// done, Shutdown is called or a client sends SHUTDOWN.
func (s *Server) ListenAndServe(ctx context.Context) error {
	lns, err := s.Listen()
	if err != nil {
		return err
	}
	return s.Serve(ctx, lns...)
}

// Serve serves clients on lns until ctx is done, Shutdown is called or a
// client sends SHUTDOWN; then it closes everything and returns. The
// listeners are closed on return.
func (s *Server) Serve(ctx context.Context, lns ...net.Listener) error {
	if s.cfg.PidFile != "" {
		if err := writeFileAtomic(s.cfg.PidFile, []byte(strconv.Itoa(os.Getpid())+"\n")); err != nil {
			for _, l := range lns {
				l.Close()
			}
			return fmt.Errorf("write pidfile: %w", err)
		}
		defer os.Remove(s.cfg.PidFile)
	}
	s.lnMu.Lock()
	s.listeners = append(s.listeners, lns...)
	for _, l := range lns {
		s.addrs = append(s.addrs, l.Addr())
	}
	s.lnMu.Unlock()
	s.logf('*', "dpulab server (Redis %s compatible) started, pid=%d", Version, os.Getpid())
	s.reserveSpare()
	defer s.releaseSpare()
	s.startLoop()
	for _, ln := range lns {
		s.wg.Add(1)
		go s.acceptLoop(ln)
		note := ""
		if sim := transport.Simulated(transport.Name(ln.Addr().Network())); sim != "" {
			note = " (" + sim + ")"
		}
		s.logf('*', "Ready to accept connections %s on %s%s", ln.Addr().Network(), ln.Addr(), note)
	}
	cronDone := make(chan struct{})
	go s.cron(cronDone)
	select {
	case <-ctx.Done():
		s.logf('#', "Received shutdown request, preparing to shut down.")
	case <-s.done:
	}
	s.stop()
	close(cronDone)
	if !s.waitServed(shutdownGrace) {
		s.logf('#', "A command is still running after %v: shutting down without waiting for it (shutdown.go).", shutdownGrace)
	}
	s.logf('#', "dpulab server is now ready to exit, bye bye...")
	if s.closer != nil {
		s.closer.Close()
	}
	if s.cfg.UnixSocket != "" {
		os.Remove(s.cfg.UnixSocket)
	}
	return nil
}

// Shutdown stops serving: listeners and client connections are closed and
// Serve returns. It waits for the connection goroutines until ctx is done.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stop()
	ch := make(chan struct{})
	go func() { s.wg.Wait(); close(ch) }()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stop closes listeners and clients once.
func (s *Server) stop() {
	s.doneOnce.Do(func() {
		close(s.done)
		s.lnMu.Lock()
		for _, l := range s.listeners {
			l.Close()
		}
		loop := s.loop
		s.lnMu.Unlock()
		s.clientsMu.Lock()
		for _, c := range s.clients {
			c.closeConn()
		}
		s.clientsMu.Unlock()
		if loop != nil {
			loop.stop()
		}
	})
}

// loopEnv set to "goroutine" makes a server serve every connection on a
// goroutine of its own, as non-Linux builds do, instead of on the event
// loop: for A/B measurements (DPULAB_SERVER_LOOP=goroutine go test -tags
// perf -run Perf ./server/).
const loopEnv = "DPULAB_SERVER_LOOP"

// startLoop starts the event loop that will serve connections, unless this
// build or loopEnv says goroutines.
func (s *Server) startLoop() {
	if os.Getenv(loopEnv) == "goroutine" {
		return
	}
	l, err := newEventLoop(s)
	if err != nil {
		s.logf('#', "Event loop unavailable, serving each connection on a goroutine: %v", err)
		return
	}
	if l == nil {
		return
	}
	s.lnMu.Lock()
	defer s.lnMu.Unlock()
	select {
	case <-s.done:
		l.release()
		return
	default:
	}
	if s.loop != nil { // Serve called again
		l.release()
		return
	}
	s.loop = l
	s.wg.Add(1)
	go l.run()
}

func (s *Server) acceptLoop(ln net.Listener) {
	defer s.wg.Done()
	var delay time.Duration
	for {
		conn, err := ln.Accept()
		if err != nil {
			select {
			case <-s.done:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if isOutOfFDs(err) && s.shed(ln) {
				delay = 0
				continue
			}
			// Out of descriptors with none to spare, or a transient
			// error: back off instead of spinning, as net/http does.
			if delay == 0 {
				delay = 5 * time.Millisecond
			} else if delay < time.Second {
				delay *= 2
			}
			s.logf('#', "Error accepting a client connection: %v", err)
			time.Sleep(delay)
			continue
		}
		delay = 0
		s.wg.Add(1)
		go s.handle(conn)
	}
}

// errMaxClients is Redis's reply to a client over maxclients.
const errMaxClients = "-ERR max number of clients reached\r\n"

// reject answers a connection the server will not serve and closes it.
func (s *Server) reject(conn net.Conn, reply string) {
	s.mu.Lock()
	s.stats.rejectedConns++
	s.mu.Unlock()
	// A fresh socket's send buffer takes the line at once; the deadline
	// only guards against a peer that vanished.
	conn.SetWriteDeadline(time.Now().Add(time.Second))
	conn.Write([]byte(reply))
	conn.Close()
}

// reserveSpare opens the spare descriptor (see Server.spare); without one
// (the limit is already reached) shedding just waits for the next try.
func (s *Server) reserveSpare() {
	s.spareMu.Lock()
	defer s.spareMu.Unlock()
	if s.spare == nil {
		s.spare, _ = os.Open(os.DevNull)
	}
}

func (s *Server) releaseSpare() {
	s.spareMu.Lock()
	defer s.spareMu.Unlock()
	if s.spare != nil {
		s.spare.Close()
		s.spare = nil
	}
}

// shed runs when accept failed for lack of descriptors. The kernel
// reserves the new descriptor before it looks for a client, so that error
// does not mean anyone is waiting. When a client is, shed frees the spare
// descriptor, accepts the client with it, replies that the server is full
// and closes it, then takes the spare back; when none is, it waits (without
// spinning) until one arrives, so that acceptLoop tries again then, with
// whatever descriptors have come back meanwhile. It reports false when it
// could do neither (no spare, a listener it cannot wait on, the listener
// closed): acceptLoop backs off. So a client past the descriptor limit gets
// Redis's max-clients error rather than a hang, and the loop never spins.
func (s *Server) shed(ln net.Listener) bool {
	waiting, ok := clientWaiting(ln, false)
	if !ok {
		return false
	}
	if !waiting {
		_, ok = clientWaiting(ln, true)
		return ok
	}
	s.spareMu.Lock()
	defer s.spareMu.Unlock()
	if s.spare == nil {
		s.spare, _ = os.Open(os.DevNull)
		return false
	}
	s.spare.Close()
	s.spare = nil
	defer func() { s.spare, _ = os.Open(os.DevNull) }()
	// The client may give up before accept: do not wait for the next one
	// with the spare given away.
	if dl, ok := ln.(interface{ SetDeadline(time.Time) error }); ok {
		dl.SetDeadline(time.Now().Add(50 * time.Millisecond))
		defer dl.SetDeadline(time.Time{})
	}
	conn, err := ln.Accept()
	if err != nil {
		return false
	}
	s.logf('-', "Out of file descriptors: replied max number of clients reached to %s", conn.RemoteAddr())
	s.reject(conn, errMaxClients)
	return true
}

// cron runs background tasks Hz times per second: active expiry and the
// instantaneous-ops samples.
func (s *Server) cron(done chan struct{}) {
	s.mu.Lock()
	hz := s.cfg.Hz
	s.mu.Unlock()
	t := time.NewTicker(time.Second / time.Duration(hz))
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		now := time.Now()
		s.mu.Lock()
		ms := now.UnixMilli()
		// Redis spends up to 25% of a cron period on active expiry.
		budget := time.Second / time.Duration(s.cfg.Hz) / 4 / time.Duration(len(s.dbs))
		s.trk.cur = nil // no client's command runs here (tracking.go)
		for _, d := range s.dbs {
			// Nothing is deleted while clients are paused (Redis
			// pauses active expiry with them).
			if len(d.expires) > 0 && s.pause.mode == pauseOff {
				s.stats.expiredKeys += int64(d.activeExpire(ms, budget))
			}
		}
		if s.trk.dirty {
			s.trk.broadcast() // BCAST tracking of the keys that expired
		}
		s.stats.sample(now)
		s.setClocks(ms)
		timeout := s.cfg.Timeout
		if s.cfg.Hz != hz {
			// CONFIG SET hz.
			hz = s.cfg.Hz
			t.Reset(time.Second / time.Duration(hz))
		}
		s.mu.Unlock()
		if timeout > 0 {
			s.closeIdle(now, timeout)
		}
	}
}

// closeIdle closes clients idle longer than timeout.
func (s *Server) closeIdle(now time.Time, timeout time.Duration) {
	// s.mu first (the order commands take them in): whether a client is
	// subscribed or blocked is guarded by it.
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clientsMu.Lock()
	defer s.clientsMu.Unlock()
	for _, c := range s.clients {
		// As Redis, a subscriber or a blocked client waits as long as it
		// likes: idle is what it is meant to be.
		if c.blocked != nil || c.subscribed() {
			continue
		}
		if now.UnixMilli()-c.lastInteraction.Load() > timeout.Milliseconds() {
			c.closeConn()
		}
	}
}

// writeFileAtomic writes data via a temporary file and rename.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// applyDerived refreshes state derived from cfg (after New and CONFIG SET).
func (s *Server) applyDerived() {
	s.logLevel.Store(map[string]int32{"debug": 0, "verbose": 1, "notice": 2, "warning": 3, "nothing": 4}[s.cfg.LogLevel])
	s.lfu = strings.HasSuffix(s.cfg.MaxMemoryPolicy, "-lfu")
	s.applyLatencyConfig()
	s.setClocks(time.Now().UnixMilli())
}

// logOrder ranks a log level byte: debug 0, verbose 1, notice 2,
// warning 3 (Server.logLevel is the least rank logged).
func logOrder(level byte) int32 {
	switch level {
	case '.':
		return 0
	case '-':
		return 1
	case '*':
		return 2
	}
	return 3
}

// setClocks refreshes the keys' clocks to now (unix ms).
func (s *Server) setClocks(now int64) {
	s.lruClock = lruClock(now)
	s.lfuMinutes = lfuMinutes(now)
	s.newClock = s.lruClock
	if s.lfu {
		s.newClock = lfuInit(s.lfuMinutes)
	}
}

// accessed returns the clock bits of a key last accessed with bits, now.
func (s *Server) accessed(bits uint32) uint32 {
	if s.lfu {
		return lfuAccess(bits, s.lfuMinutes)
	}
	return s.lruClock
}
