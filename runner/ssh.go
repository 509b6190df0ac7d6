package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/melbahja/goph"
	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// SSHConfig says how to reach one host over SSH. Inventory and Pool fill it
// from hosts.yaml and ~/.ssh/config; tests build it directly.
type SSHConfig struct {
	// Name is the inventory name, used in Lines, errors and prompts.
	Name string
	// Addr is the host name or IP to dial, Port its port (22 when zero).
	Addr string
	Port int
	// User to log in as (default: the local user name).
	User string
	// Identities are private key files to try after ssh-agent. One that
	// is missing or unreadable does not stop the attempt (another method
	// may work), but names the cause when authentication fails.
	Identities []string
	// DefaultIdentities are tried after Identities; their absence is
	// expected (~/.ssh/id_ed25519, ... when nothing names a key).
	DefaultIdentities []string
	// NoAgent skips ssh-agent even when SSH_AUTH_SOCK is set
	// (IdentityAgent none).
	NoAgent bool
	// IdentityAgent is the agent's socket when not SSH_AUTH_SOCK's.
	IdentityAgent string
	// IdentitiesOnly offers only Identities (and the agent's keys that
	// are among them), as OpenSSH's IdentitiesOnly yes.
	IdentitiesOnly bool
	// Certificates are user certificate files (CertificateFile); each is
	// offered with the identity whose public key it certifies. A
	// certificate next to an identity (KEY-cert.pub) is offered too, as
	// OpenSSH does.
	Certificates []string
	// Alias is the name the host was resolved by (%n in ProxyCommand).
	Alias string
	// ProxyCommand, when set, is run through sh -c (tokens %h %p %r %n
	// %% expanded, each value quoted) and SSH is spoken over its stdin
	// and stdout instead of a TCP connection.
	ProxyCommand string
	// Jump, when set, is the host to tunnel through (ProxyJump).
	Jump *SSHConfig
	// JumpVia, when set, is an existing Target for the jump host, shared
	// with other hosts behind it (Pool does this) so that the bastion gets
	// one connection; it takes precedence over Jump and is not closed by
	// Close.
	JumpVia *SSHTarget
	// KnownHosts is the known_hosts file keys are checked against and
	// accepted keys saved to (default ~/.ssh/known_hosts).
	KnownHosts string
	// KnownHostsRead are more known_hosts files, only read: the further
	// UserKnownHostsFile entries and GlobalKnownHostsFile
	// (/etc/ssh/ssh_known_hosts).
	KnownHostsRead []string
	// HashKnownHosts writes saved entries hashed (|1|salt|hash), as
	// OpenSSH's HashKnownHosts yes (Debian's default).
	HashKnownHosts bool
	// StrictHostKeyChecking is OpenSSH's: "yes" refuses unknown keys
	// without asking, "accept-new" and "no" save them without asking
	// (a changed key is always refused), "ask" or "" leaves it to the
	// Prompter.
	StrictHostKeyChecking string
	// Prompter decides about unknown host keys and gives secrets;
	// HeadlessPrompter{} (refuse, no secrets) when nil.
	Prompter Prompter
	// ConnectTimeout bounds dialling and the SSH handshake (10s if zero).
	ConnectTimeout time.Duration
	// KeepAlive is the interval of keepalive requests (15s if zero); three
	// unanswered in a row close the connection.
	KeepAlive time.Duration
	// KillGrace is how long a cancelled command's process group gets
	// between SIGTERM and SIGKILL (1s if zero).
	KillGrace time.Duration
}

func (c *SSHConfig) addr() string {
	port := c.Port
	if port == 0 {
		port = 22
	}
	return net.JoinHostPort(c.Addr, strconv.Itoa(port))
}

// SSHTarget runs commands on a host over SSH. It keeps one connection open
// and opens a session per command on it, as many at once as the server
// allows (see sessionSlots: more wait for a free one); when the connection
// drops, operations fail with *ConnError and the next one dials again.
// Concurrent operations that find no connection share one dial, and its
// failure: a host key question is asked once.
type SSHTarget struct {
	cfg  SSHConfig
	keys *hostKeyChecker
	auth authState
	jump *SSHTarget
	// ownJump says the jump Target was made here and is closed with us.
	ownJump bool
	common

	mu      sync.Mutex
	conn    *sshConn
	dialing *dialCall
	closed  bool
	orphans []orphan
	// extra are more connections to the host, opened when every slot of
	// the others is taken (see pickConn).
	extra        []*sshConn
	extraDialing bool
	extraFailed  time.Time
}

// dialCall is a dial in progress, shared by the callers that wait for it.
type dialCall struct {
	done chan struct{}
	err  error
	// cancelled says the dial failed because its caller's ctx ended: the
	// waiters, whose ctx may be fine, dial again.
	cancelled bool
}

// orphan is the process group of a command whose connection dropped while
// it ran; it is killed after the next successful dial.
type orphan struct {
	pgid  int
	nonce string
	sudo  bool
}

type sshConn struct {
	client *goph.Client
	dead   chan struct{}
	slots  *sessionSlots

	sftpMu sync.Mutex
	sftp   *sftp.Client
	// sftpUsers counts operations using sftp; an idle sftp session is
	// closed when another session needs its slot.
	sftpUsers   int
	sftpRelease func()
}

func (c *sshConn) isDead() bool {
	select {
	case <-c.dead:
		return true
	default:
		return false
	}
}

// NewSSH returns a Target for one host. It does not dial: the first
// operation does (or call Connect to find out early).
func NewSSH(cfg SSHConfig) *SSHTarget {
	if cfg.Name == "" {
		cfg.Name = cfg.Addr
	}
	if cfg.User == "" {
		cfg.User = currentUser()
	}
	if cfg.KnownHosts == "" {
		cfg.KnownHosts = expandHome("~/.ssh/known_hosts")
	}
	t := &SSHTarget{cfg: cfg}
	t.keys = &hostKeyChecker{host: cfg.Name, file: cfg.KnownHosts, read: cfg.KnownHostsRead, hash: cfg.HashKnownHosts, strict: cfg.StrictHostKeyChecking}
	switch {
	case cfg.JumpVia != nil:
		t.jump = cfg.JumpVia
	case cfg.Jump != nil:
		t.jump = NewSSH(*cfg.Jump)
		t.ownJump = true
	}
	t.common = common{
		host:     cfg.Name,
		user:     func() string { return cfg.User },
		simple:   t.simple,
		prompter: t.prompter,
	}
	return t
}

func (t *SSHTarget) prompter() Prompter {
	if t.cfg.Prompter != nil {
		return t.cfg.Prompter
	}
	return HeadlessPrompter{}
}

// Name implements Target.
func (t *SSHTarget) Name() string { return t.cfg.Name }

// Connect dials now if not connected, so that host key and authentication
// questions come up front rather than in the middle of a step.
func (t *SSHTarget) Connect(ctx context.Context) error {
	_, err := t.connect(ctx)
	return err
}

func (t *SSHTarget) connect(ctx context.Context) (*sshConn, error) {
	t.mu.Lock()
	for {
		if t.closed {
			t.mu.Unlock()
			return nil, fmt.Errorf("%s: target closed", t.cfg.Name)
		}
		if t.conn != nil && !t.conn.isDead() {
			c := t.conn
			// Orphans of an extra connection that dropped while this
			// one stayed up.
			orphans := t.orphans
			t.orphans = nil
			t.mu.Unlock()
			t.killOrphans(orphans)
			return c, nil
		}
		d := t.dialing
		if d == nil {
			break
		}
		// Share the dial in progress rather than open another connection
		// (or ask about the same host key twice).
		t.mu.Unlock()
		select {
		case <-d.done:
		case <-ctx.Done():
			return nil, fmt.Errorf("connect to %s: %w", t.cfg.Name, ctx.Err())
		}
		if d.err != nil && !d.cancelled {
			return nil, d.err
		}
		t.mu.Lock()
	}
	d := &dialCall{done: make(chan struct{})}
	t.dialing = d
	// A new connection starts from what the last one learnt.
	limit := 0
	if t.conn != nil {
		limit = t.conn.slots.learnt()
	}
	t.mu.Unlock()

	c, err := t.dial(ctx, limit, t.prompter())

	t.mu.Lock()
	t.dialing = nil
	d.err, d.cancelled = err, err != nil && ctx.Err() != nil
	close(d.done)
	if err != nil {
		t.mu.Unlock()
		return nil, err
	}
	if t.closed {
		t.mu.Unlock()
		c.client.Close()
		return nil, fmt.Errorf("%s: target closed", t.cfg.Name)
	}
	t.conn = c
	orphans := t.orphans
	t.orphans = nil
	t.mu.Unlock()
	t.killOrphans(orphans)
	return c, nil
}

// orphanPGIDWait bounds the wait for a dropped command's group id. The id
// is the wrapper's first line on stderr and is normally there at once; on
// a loaded machine its reader can lag by seconds. Without it the orphan is
// recorded by its nonce alone, and the kill after the next dial finds the
// group by its leader's command line. Only a dropped connection waits.
const orphanPGIDWait = 2 * time.Second

// killOrphans ends the process groups of commands whose connection
// dropped while they ran.
func (t *SSHTarget) killOrphans(orphans []orphan) {
	for _, o := range orphans {
		kctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = t.killGroup(kctx, o.pgid, o.nonce, o.sudo, t.grace())
		cancel()
	}
}

func (t *SSHTarget) grace() time.Duration {
	if t.cfg.KillGrace > 0 {
		return t.cfg.KillGrace
	}
	return time.Second
}

func (t *SSHTarget) dial(ctx context.Context, sessionLimit int, pr Prompter) (*sshConn, error) {
	timeout := t.timeout()
	addr := t.cfg.addr()
	// The handshake may wait on a person (host key, password prompts), so
	// the deadline bounds only the network part: it is lifted while a
	// prompt is open. ctx always aborts.
	dp := &deadlinePrompter{p: pr, timeout: timeout}
	tr := &authTrace{}
	auth, closeAgent := t.authMethods(ctx, dp, tr)
	defer closeAgent()
	var hkSeen atomic.Bool
	check := t.keys.callback(ctx, dp)
	hk := func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		hkSeen.Store(true)
		return check(hostname, remote, key)
	}
	algs := t.keys.algorithms(addr)
	// goph's Config carries the connection's parameters and goph.Client
	// the connection; the handshake itself is made here, over our own
	// net.Conn (see the package doc, "goph").
	gc := &goph.Config{User: t.cfg.User, Addr: t.cfg.Addr, Port: uint(t.port()), Auth: auth, Timeout: timeout, Callback: hk}
	cc := clientConfig(gc)
	cc.AuthCallback = tr.note
	cc.HostKeyAlgorithms = algs
	nc, err := t.dialNet(ctx, addr)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	defer stop()
	rc := &recConn{Conn: nc}
	dp.arm(rc)
	sc, chans, reqs, err := ssh.NewClientConn(rc, addr, cc)
	dp.disarm()
	if err != nil {
		if pc, ok := nc.(*proxyConn); ok && ctx.Err() == nil && (rc.firstErr() != nil || errors.Is(err, io.EOF)) {
			// A ProxyCommand that could not connect exits: its stderr
			// says why better than the handshake's EOF.
			if perr := pc.exitedEarly(); perr != nil {
				nc.Close()
				return nil, &ConnError{Host: t.cfg.Name, Addr: addr, User: t.cfg.User, Op: "connect through ProxyCommand", Cause: CauseOther, Err: fmt.Errorf("%w (ssh handshake: %v)", perr, err)}
			}
		}
		nc.Close()
		return nil, t.handshakeErr(ctx, addr, err, rc.firstErr(), tr, hkSeen.Load(), algs != nil)
	}
	client := &goph.Client{Client: ssh.NewClient(sc, chans, reqs), Config: gc}
	c := &sshConn{client: client, dead: make(chan struct{}), slots: newSessionSlots(sessionLimit)}
	c.slots.reclaim = c.closeIdleSftp
	go func() {
		_ = client.Wait()
		close(c.dead)
	}()
	go t.keepAlive(c)
	return c, nil
}

// clientConfig is the ssh.ClientConfig goph.Dial would make from gc; the
// caller adds what goph cannot carry (AuthCallback, HostKeyAlgorithms).
func clientConfig(gc *goph.Config) *ssh.ClientConfig {
	return &ssh.ClientConfig{
		User:            gc.User,
		Auth:            gc.Auth,
		Timeout:         gc.Timeout,
		HostKeyCallback: gc.Callback,
		BannerCallback:  gc.BannerCallback,
	}
}

func (t *SSHTarget) port() int {
	if t.cfg.Port == 0 {
		return 22
	}
	return t.cfg.Port
}

func (t *SSHTarget) timeout() time.Duration {
	if t.cfg.ConnectTimeout > 0 {
		return t.cfg.ConnectTimeout
	}
	return 10 * time.Second
}

// dialNet opens the connection to addr: TCP, directly or through the jump
// host, or a ProxyCommand's pipes; bounded by the connect timeout.
func (t *SSHTarget) dialNet(ctx context.Context, addr string) (net.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, t.timeout())
	defer cancel()
	if t.cfg.ProxyCommand != "" {
		alias := t.cfg.Alias
		if alias == "" {
			alias = t.cfg.Addr
		}
		line, err := proxyCommandLine(t.cfg.ProxyCommand, t.cfg.Addr, t.port(), t.cfg.User, alias)
		if err == nil {
			var pc *proxyConn
			pc, err = startProxyCommand(dctx, line, addr)
			if err == nil {
				return pc, nil
			}
		}
		return nil, &ConnError{Host: t.cfg.Name, Addr: addr, User: t.cfg.User, Op: "ProxyCommand", Cause: CauseOther, Err: err}
	}
	if t.jump != nil {
		jc, err := t.jump.connect(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s: via jump host: %w", t.cfg.Name, err)
		}
		nc, err := jc.client.DialContext(dctx, "tcp", addr)
		if err != nil && ctx.Err() == nil && errors.Is(err, io.EOF) && t.jump.connLost(jc) {
			// The jump host's connection had just dropped, before its
			// reader noticed: dial it again, once.
			if jc, err = t.jump.connect(ctx); err != nil {
				return nil, fmt.Errorf("%s: via jump host: %w", t.cfg.Name, err)
			}
			nc, err = jc.client.DialContext(dctx, "tcp", addr)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("connect to %s: %w", t.cfg.Name, ctx.Err())
			}
			return nil, &ConnError{Host: t.cfg.Name, Addr: addr, User: t.cfg.User, Op: "connect via " + t.jump.cfg.Name, Cause: jumpCause(err), Err: err}
		}
		return nc, nil
	}
	var d net.Dialer
	nc, err := d.DialContext(dctx, "tcp", addr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("connect to %s: %w", t.cfg.Name, ctx.Err())
		}
		return nil, &ConnError{Host: t.cfg.Name, Addr: addr, User: t.cfg.User, Op: "connect", Cause: netCause(err), Err: err}
	}
	return nc, nil
}

// handshakeErr classifies a failed SSH handshake. netErr is the first
// network error seen on the connection, hkSeen says the key exchange got
// as far as checking the host key, restricted that the host key
// algorithms were narrowed to the types known_hosts holds.
func (t *SSHTarget) handshakeErr(ctx context.Context, addr string, err, netErr error, tr *authTrace, hkSeen, restricted bool) error {
	if ctx.Err() != nil {
		return fmt.Errorf("connect to %s: %w", t.cfg.Name, ctx.Err())
	}
	ce := &ConnError{Host: t.cfg.Name, Addr: addr, User: t.cfg.User, Op: "ssh handshake", Err: err}
	var hke *HostKeyError
	if errors.As(err, &hke) {
		ce.Cause, ce.Err = hke.Cause(), hke
		return ce
	}
	if !hkSeen && restricted {
		// No host key of a type known_hosts holds was offered: OpenSSH
		// hangs up ("no matching host key type") or we give up ("no
		// common algorithm"). See what the server does offer.
		if hke := t.probeHostKey(ctx, addr); hke != nil {
			ce.Cause, ce.Err = hke.Cause(), hke
			return ce
		}
	}
	// x/crypto goes on to the next auth method after a failed one and
	// reports the last failure: a connection that broke midway would
	// show up as some later method's complaint.
	if netErr != nil {
		ce.Cause, ce.Err = netCause(netErr), netErr
		if ce.Cause == CauseOther {
			ce.Cause = CauseConnLost
		}
		return ce
	}
	var pe *promptError
	if errors.As(err, &pe) || tr.authStarted() {
		switch {
		case pe != nil:
			ce.Err = pe.err
		case strings.Contains(err.Error(), "unable to authenticate"):
			// Tried and Offered say it better.
			ce.Err = nil
		}
		return tr.classify(ce)
	}
	ce.Cause = CauseHandshake
	return ce
}

// errProbeDone ends a probe handshake once the host key is seen.
var errProbeDone = errors.New("host key probe done")

// probeHostKey makes a second handshake that accepts any host key
// algorithm, only to see the key the server offers; it returns the
// HostKeyError that key meets in known_hosts (nil if it matches, or if the
// probe failed).
func (t *SSHTarget) probeHostKey(ctx context.Context, addr string) *HostKeyError {
	nc, err := t.dialNet(ctx, addr)
	if err != nil {
		return nil
	}
	defer nc.Close()
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	defer stop()
	_ = nc.SetDeadline(time.Now().Add(t.timeout()))
	var found *HostKeyError
	cc := &ssh.ClientConfig{
		User: t.cfg.User,
		HostKeyCallback: func(hostname string, remote net.Addr, key ssh.PublicKey) error {
			found = t.keys.mismatch(hostname, remote, key)
			return errProbeDone
		},
		Timeout: t.timeout(),
	}
	_, _, _, _ = ssh.NewClientConn(nc, addr, cc)
	return found
}

// netCause classifies a network error.
func netCause(err error) ConnCause {
	var dnsErr *net.DNSError
	var ne net.Error
	switch {
	case errors.As(err, &dnsErr):
		return CauseDNS
	case errors.Is(err, syscall.ECONNREFUSED):
		return CauseRefused
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH),
		errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return CauseUnreachable
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return CauseConnLost
	}
	return CauseOther
}

// jumpCause classifies the jump host's refusal to forward a connection: it
// reports the inner dial's failure in words only.
func jumpCause(err error) ConnCause {
	var oce *ssh.OpenChannelError
	if !errors.As(err, &oce) {
		return netCause(err)
	}
	msg := strings.ToLower(oce.Message)
	switch {
	case strings.Contains(msg, "refused"):
		return CauseRefused
	case strings.Contains(msg, "timed out"), strings.Contains(msg, "no route"), strings.Contains(msg, "unreachable"):
		return CauseUnreachable
	case strings.Contains(msg, "name"), strings.Contains(msg, "resolve"):
		return CauseDNS
	}
	return CauseOther
}

// lost is the ConnError of an operation whose connection went away.
func (t *SSHTarget) lost(op string, err error) *ConnError {
	return &ConnError{Host: t.cfg.Name, Addr: t.cfg.addr(), User: t.cfg.User, Op: op, Cause: CauseConnLost, Err: err}
}

// deadlinePrompter lifts the handshake deadline while a person answers (or
// a key is being decrypted). Pauses nest: the deadline comes back, fresh,
// when the outermost one ends.
type deadlinePrompter struct {
	p       Prompter
	timeout time.Duration
	mu      sync.Mutex
	nc      net.Conn
	paused  int
}

func (d *deadlinePrompter) arm(nc net.Conn) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.nc = nc
	if d.paused == 0 {
		_ = nc.SetDeadline(time.Now().Add(d.timeout))
	}
}

func (d *deadlinePrompter) disarm() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.nc != nil {
		_ = d.nc.SetDeadline(time.Time{})
	}
	d.nc = nil
}

func (d *deadlinePrompter) pause() func() {
	d.mu.Lock()
	d.paused++
	if d.nc != nil {
		_ = d.nc.SetDeadline(time.Time{})
	}
	d.mu.Unlock()
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.paused--
		if d.paused == 0 && d.nc != nil {
			_ = d.nc.SetDeadline(time.Now().Add(d.timeout))
		}
	}
}

// recConn remembers the first network error (timeout, reset) of the
// handshake.
type recConn struct {
	net.Conn
	mu  sync.Mutex
	err error
}

func (c *recConn) note(err error) {
	// Our own close (x/crypto closes on a failed handshake) and the
	// server hanging up after refusing us are not network failures.
	if err == nil || errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) {
		return
	}
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
}

func (c *recConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.note(err)
	return n, err
}

func (c *recConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.note(err)
	return n, err
}

func (c *recConn) firstErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// broken returns the connection's error, if it already failed: then there
// is no point asking a person for a secret.
func (d *deadlinePrompter) broken() error {
	d.mu.Lock()
	nc := d.nc
	d.mu.Unlock()
	if rc, ok := nc.(*recConn); ok {
		return rc.firstErr()
	}
	return nil
}

func (d *deadlinePrompter) HostKey(ctx context.Context, p HostKeyPrompt) (HostKeyDecision, error) {
	defer d.pause()()
	return d.p.HostKey(ctx, p)
}

func (d *deadlinePrompter) Secret(ctx context.Context, p SecretPrompt) (string, error) {
	if err := d.broken(); err != nil {
		return "", err
	}
	defer d.pause()()
	return d.p.Secret(ctx, p)
}

// keepAlive sends OpenSSH keepalive requests; a connection that stops
// answering is closed, so that blocked sessions fail with ConnError instead
// of hanging on a dead TCP connection.
func (t *SSHTarget) keepAlive(c *sshConn) {
	every := t.cfg.KeepAlive
	if every == 0 {
		every = 15 * time.Second
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	missed := 0
	for {
		select {
		case <-c.dead:
			return
		case <-tick.C:
		}
		reply := make(chan error, 1)
		go func() {
			_, _, err := c.client.SendRequest("keepalive@openssh.com", true, nil)
			reply <- err
		}()
		select {
		case err := <-reply:
			if err != nil {
				c.client.Close()
				return
			}
			missed = 0
		case <-time.After(every):
			missed++
			if missed >= 3 {
				c.client.Close()
				return
			}
		case <-c.dead:
			return
		}
	}
}

// newSession opens a session, dialling first if needed, within the
// server's session limit. release gives its slot back: call it after
// closing the session.
func (t *SSHTarget) newSession(ctx context.Context) (*sshConn, *ssh.Session, func(), error) {
	for attempt := 0; ; attempt++ {
		c, err := t.connect(ctx)
		if err != nil {
			return nil, nil, nil, err
		}
		c = t.pickConn(ctx, c)
		var s *ssh.Session
		release, err := t.withSlot(ctx, c, true, func() error {
			var err error
			s, err = c.client.NewSession()
			return err
		})
		if err == nil {
			return c, s, release, nil
		}
		if errors.Is(err, errConnFull) {
			attempt--
			continue
		}
		if ctx.Err() != nil {
			return nil, nil, nil, fmt.Errorf("open session on %s: %w", t.cfg.Name, ctx.Err())
		}
		var ce *ConnError
		if errors.As(err, &ce) {
			return nil, nil, nil, err
		}
		// The connection died since the last use: dial once more.
		c.client.Close()
		<-c.dead
		if attempt > 0 {
			return nil, nil, nil, t.lost("open session", err)
		}
	}
}

// connLost tells a dropped connection from a command that simply ended
// without an exit status, waiting briefly for the client to notice.
func (t *SSHTarget) connLost(c *sshConn) bool {
	select {
	case <-c.dead:
		return true
	case <-time.After(500 * time.Millisecond):
		return false
	}
}

// simple runs a helper script directly (no process-group wrapper).
func (t *SSHTarget) simple(ctx context.Context, script string, stdin []byte) ([]byte, []byte, int, error) {
	c, s, release, err := t.newSession(ctx)
	if err != nil {
		return nil, nil, -1, err
	}
	defer release()
	defer s.Close()
	var out, errOut bytes.Buffer
	s.Stdout, s.Stderr = &out, &errOut
	if stdin != nil {
		s.Stdin = bytes.NewReader(stdin)
	}
	if err := s.Start(script); err != nil {
		return nil, nil, -1, t.lost("start command", err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		s.Close()
		// Wait drains the output copies; the buffers are ours after it.
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			return nil, nil, -1, ctx.Err()
		}
		return out.Bytes(), errOut.Bytes(), -1, ctx.Err()
	}
	code, err := t.exitCode(c, err, "run")
	return out.Bytes(), errOut.Bytes(), code, err
}

// exitCode turns session.Wait's error into an exit code, or a ConnError if
// the connection went away.
func (t *SSHTarget) exitCode(c *sshConn, err error, op string) (int, error) {
	if err == nil {
		return 0, nil
	}
	var ee *ssh.ExitError
	if errors.As(err, &ee) {
		if sig := ee.Signal(); sig != "" {
			return 128 + signalNumber(sig), nil
		}
		return ee.ExitStatus(), nil
	}
	if t.connLost(c) {
		return -1, t.lost(op, err)
	}
	return -1, fmt.Errorf("%s on %s: %w", op, t.cfg.Name, err)
}

func signalNumber(name string) int {
	n := map[string]int{"HUP": 1, "INT": 2, "QUIT": 3, "ILL": 4, "ABRT": 6, "FPE": 8, "KILL": 9, "SEGV": 11, "PIPE": 13, "ALRM": 14, "TERM": 15, "USR1": 10, "USR2": 12}[name]
	return n
}

// runWrapper, started under setsid, leads the command's process group: it
// prints "NONCE:PGID" on stderr before the command starts, then runs "$1".
// The nonce ($0) stays in its command line for killScript to recognise.
const runWrapper = `printf '%s:%s\n' "$0" "$$" >&2; sh -c "$1"`

// Run implements Target. The command runs under setsid with its process
// group id reported first; on cancel or timeout the group is sent SIGTERM,
// then SIGKILL, through a second session, and the session is closed.
func (t *SSHTarget) Run(ctx context.Context, cmd Command) (Result, error) {
	if cmd.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cmd.Timeout)
		defer cancel()
	}
	start := time.Now()
	var prefix string
	var stdin []byte
	if cmd.Sudo {
		p, pw, err := t.sudoPrefix(ctx)
		if err != nil {
			return Result{ExitCode: -1}, err
		}
		prefix, stdin = p, pw
	}
	c, s, release, err := t.newSession(ctx)
	if err != nil {
		return Result{ExitCode: -1}, err
	}
	defer release()
	defer s.Close()

	nonce := newNonce()
	sink := newLineSink(t.cfg.Name, cmd.Output)
	outW, errW := sink.writer(Stdout), sink.writer(Stderr)
	pgidCh := make(chan int, 1)
	found := false
	// The marker is normally the first stderr line, but sudo may print
	// before it (its lecture); nothing of the command can, as it has not
	// started yet.
	errW.filter = func(line string) bool {
		if found {
			return true
		}
		if v, ok := strings.CutPrefix(line, nonce+":"); ok {
			if n, err := strconv.Atoi(v); err == nil {
				found = true
				pgidCh <- n
				return false
			}
		}
		return true
	}
	s.Stdout, s.Stderr = outW, errW
	if stdin != nil || cmd.Stdin != nil {
		s.Stdin = io.MultiReader(bytes.NewReader(stdin), bytes.NewReader(cmd.Stdin))
	}
	line := prefix + "setsid -w sh -c " + Quote(runWrapper) + " " + nonce + " " + Quote(cmd.Cmd)
	if err := s.Start(line); err != nil {
		return Result{ExitCode: -1}, t.lost("start command", err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Wait() }()

	result := func(code int) Result {
		outW.flush()
		errW.flush()
		return Result{ExitCode: code, Duration: time.Since(start), Tail: sink.lastLines()}
	}
	var pgid int
	select {
	case err := <-done:
		code, err := t.exitCode(c, err, "run")
		if err != nil {
			var ce *ConnError
			if errors.As(err, &ce) {
				// The group id comes first on stderr, read by its own
				// goroutine: on a loaded machine it can still be on its way
				// when the drop is seen, and a group not recorded here is
				// never killed.
				// Without it, the group is found by its nonce (killScript,
				// group 0).
				select {
				case pgid = <-pgidCh:
				case <-time.After(orphanPGIDWait):
				}
				t.mu.Lock()
				t.orphans = append(t.orphans, orphan{pgid: pgid, nonce: nonce, sudo: cmd.Sudo})
				t.mu.Unlock()
			}
		}
		return result(code), err
	case <-ctx.Done():
	}
	// Cancelled: the group id arrives within moments of the start; when
	// it has not, the group is found by its nonce (killScript, group 0).
	ended := false
	select {
	case pgid = <-pgidCh:
	case <-done:
		ended = true
	case <-time.After(3 * time.Second):
	}
	if !ended {
		kctx, cancel := context.WithTimeout(context.Background(), 10*time.Second+t.grace())
		kerr := t.killGroup(kctx, pgid, nonce, cmd.Sudo, t.grace())
		cancel()
		if kerr != nil {
			t.mu.Lock()
			t.orphans = append(t.orphans, orphan{pgid: pgid, nonce: nonce, sudo: cmd.Sudo})
			t.mu.Unlock()
		}
	}
	s.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	err = ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) && cmd.Timeout > 0 {
		return result(-1), fmt.Errorf("run on %s: timed out after %s: %w", t.cfg.Name, cmd.Timeout, err)
	}
	return result(-1), fmt.Errorf("run on %s: %w", t.cfg.Name, err)
}

// Start implements Target.
func (t *SSHTarget) Start(ctx context.Context, p ProcSpec) (Proc, error) { return t.start(ctx, p) }

// Stop implements Target.
func (t *SSHTarget) Stop(ctx context.Context, p Proc, grace time.Duration) error {
	return t.stop(ctx, p, grace)
}

// Platform implements Target.
func (t *SSHTarget) Platform(ctx context.Context) (Platform, error) { return t.platform(ctx) }

// sftpClient returns the connection's sftp client, opening it in a session
// slot if needed; done must be called when the caller has finished with it
// (an idle client is closed when another session needs its slot).
func (t *SSHTarget) sftpClient(ctx context.Context) (sc *sftp.Client, done func(), err error) {
	for attempt := 0; ; attempt++ {
		c, err := t.connect(ctx)
		if err != nil {
			return nil, nil, err
		}
		// An sftp session already open on any connection, else one on a
		// connection with a free slot: long commands holding every slot
		// of one connection must not hold uploads up.
		if x := t.connWithSftp(); x != nil {
			c = x
		} else {
			c = t.pickConn(ctx, c)
		}
		sc, err := t.sftpOn(ctx, c)
		if err == nil {
			var once sync.Once
			return sc, func() { once.Do(func() { c.sftpDone() }) }, nil
		}
		if errors.Is(err, errConnFull) {
			attempt--
			continue
		}
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("sftp to %s: %w", t.cfg.Name, ctx.Err())
		}
		if !errors.Is(err, errConnDead) || attempt > 0 {
			return nil, nil, err
		}
	}
}

// connWithSftp returns a live connection whose sftp session is open.
func (t *SSHTarget) connWithSftp() *sshConn {
	t.mu.Lock()
	conns := append([]*sshConn{t.conn}, t.extra...)
	t.mu.Unlock()
	for _, c := range conns {
		if c == nil || c.isDead() {
			continue
		}
		c.sftpMu.Lock()
		open := c.sftp != nil
		c.sftpMu.Unlock()
		if open {
			return c
		}
	}
	return nil
}

func (t *SSHTarget) sftpOn(ctx context.Context, c *sshConn) (*sftp.Client, error) {
	c.sftpMu.Lock()
	defer c.sftpMu.Unlock()
	if c.sftp == nil {
		var s *sftp.Client
		release, err := t.withSlot(ctx, c, true, func() error {
			var err error
			s, err = c.client.NewSftp()
			return err
		})
		if err != nil {
			var ce *ConnError
			switch {
			case errors.Is(err, errConnDead), errors.Is(err, errConnFull), errors.As(err, &ce), ctx.Err() != nil:
				return nil, err
			case c.isDead() || t.connLost(c):
				return nil, t.lost("sftp", err)
			}
			return nil, fmt.Errorf("sftp to %s: %w (does the host's sshd enable the sftp subsystem?)", t.cfg.Name, err)
		}
		c.sftp, c.sftpRelease = s, release
	}
	c.sftpUsers++
	return c.sftp, nil
}

func (c *sshConn) sftpDone() {
	c.sftpMu.Lock()
	c.sftpUsers--
	c.sftpMu.Unlock()
}

// closeIdleSftp closes the sftp session when nobody uses it, to give its
// slot to a session waiting for one. It never blocks: while sftp is being
// opened (its lock held), that open is itself waiting for a slot.
func (c *sshConn) closeIdleSftp() bool {
	if !c.sftpMu.TryLock() {
		return false
	}
	defer c.sftpMu.Unlock()
	if c.sftp == nil || c.sftpUsers > 0 {
		return false
	}
	c.sftp.Close()
	c.sftp = nil
	c.sftpRelease()
	c.sftpRelease = nil
	return true
}

// Upload implements Target: the file is written next to remotePath under a
// temporary name and renamed over it, so that a binary still running from
// remotePath is not disturbed ("text file busy") and a reader never sees half
// a file.
func (t *SSHTarget) Upload(ctx context.Context, localPath, remotePath string, mode fs.FileMode) error {
	src, err := os.Open(localPath)
	if err != nil {
		return fmt.Errorf("upload to %s: %w", t.cfg.Name, err)
	}
	defer src.Close()
	return t.writeFrom(ctx, src, remotePath, mode)
}

// writeFrom writes what src holds to remotePath, through a temporary file
// in the same directory (removed on every error path; one left by a killed
// dpulab goes with its directory) renamed over it.
func (t *SSHTarget) writeFrom(ctx context.Context, src io.Reader, remotePath string, mode fs.FileMode) error {
	sc, done, err := t.sftpClient(ctx)
	if err != nil {
		return err
	}
	defer done()
	if dir := path.Dir(remotePath); dir != "." && dir != "/" {
		if err := sc.MkdirAll(dir); err != nil {
			return t.sftpErr(sc, "upload "+remotePath, err)
		}
	}
	tmp := path.Join(path.Dir(remotePath), "."+path.Base(remotePath)+".dpulab-tmp-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	dst, err := sc.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return t.sftpErr(sc, "upload "+remotePath, err)
	}
	stop := context.AfterFunc(ctx, func() { dst.Close() })
	_, err = io.Copy(dst, src)
	stop()
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = sc.Chmod(tmp, mode.Perm())
	}
	if err == nil {
		err = sc.PosixRename(tmp, remotePath)
		if err != nil {
			// Servers without the posix-rename extension.
			_ = sc.Remove(remotePath)
			err = sc.Rename(tmp, remotePath)
		}
	}
	if err != nil {
		_ = sc.Remove(tmp)
		if ctx.Err() != nil {
			return fmt.Errorf("upload %s to %s: %w", remotePath, t.cfg.Name, ctx.Err())
		}
		return t.sftpErr(sc, "upload "+remotePath, err)
	}
	return nil
}

// sftpErr wraps an SFTP failure, as a ConnError when the connection died.
func (t *SSHTarget) sftpErr(sc *sftp.Client, op string, err error) error {
	t.mu.Lock()
	var c *sshConn
	for _, x := range append([]*sshConn{t.conn}, t.extra...) {
		if x == nil {
			continue
		}
		x.sftpMu.Lock()
		if x.sftp == sc {
			c = x
		}
		x.sftpMu.Unlock()
	}
	t.mu.Unlock()
	if c != nil && (c.isDead() || errors.Is(err, io.EOF) && t.connLost(c)) {
		return t.lost(op, err)
	}
	return fmt.Errorf("%s on %s: %w", op, t.cfg.Name, err)
}

// maxReadFile bounds ReadFile: it is for small files (configs, pid files,
// logs' ends), not bulk transfer.
const maxReadFile = 16 << 20

// ReadFile implements Target.
func (t *SSHTarget) ReadFile(ctx context.Context, p string) ([]byte, error) {
	sc, done, err := t.sftpClient(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	f, err := sc.Open(p)
	if err != nil {
		return nil, t.sftpErr(sc, "read "+p, err)
	}
	defer f.Close()
	stop := context.AfterFunc(ctx, func() { f.Close() })
	defer stop()
	b, err := io.ReadAll(io.LimitReader(f, maxReadFile+1))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, t.sftpErr(sc, "read "+p, err)
	}
	if len(b) > maxReadFile {
		return nil, fmt.Errorf("read %s on %s: larger than %d bytes", p, t.cfg.Name, maxReadFile)
	}
	return b, nil
}

// Close implements Target.
func (t *SSHTarget) Close() error {
	t.mu.Lock()
	c := t.conn
	t.conn = nil
	t.closed = true
	extra := t.extra
	t.extra = nil
	t.mu.Unlock()
	for _, x := range extra {
		x.sftpMu.Lock()
		if x.sftp != nil {
			x.sftp.Close()
		}
		x.sftpMu.Unlock()
		x.client.Close()
	}
	var err error
	if c != nil {
		c.sftpMu.Lock()
		if c.sftp != nil {
			c.sftp.Close()
		}
		c.sftpMu.Unlock()
		err = c.client.Close()
		if errors.Is(err, net.ErrClosed) {
			err = nil
		}
	}
	if t.jump != nil && t.ownJump {
		if jerr := t.jump.Close(); err == nil {
			err = jerr
		}
	}
	return err
}

var _ Target = (*SSHTarget)(nil)
