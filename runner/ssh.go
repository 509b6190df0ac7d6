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
	// Identities are private key files to try after ssh-agent; missing
	// files are skipped.
	Identities []string
	// NoAgent skips ssh-agent even when SSH_AUTH_SOCK is set.
	NoAgent bool
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
// and opens a session per command on it; when the connection drops,
// operations fail with *ConnError and the next one dials again.
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
	closed  bool
	orphans []orphan
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

	sftpMu sync.Mutex
	sftp   *sftp.Client
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
	t.keys = &hostKeyChecker{host: cfg.Name, file: cfg.KnownHosts}
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
	if t.closed {
		t.mu.Unlock()
		return nil, fmt.Errorf("%s: target closed", t.cfg.Name)
	}
	if t.conn != nil && !t.conn.isDead() {
		c := t.conn
		t.mu.Unlock()
		return c, nil
	}
	// Dialling under the lock makes concurrent callers share one new
	// connection instead of racing to open several.
	c, err := t.dial(ctx)
	if err != nil {
		t.mu.Unlock()
		return nil, err
	}
	t.conn = c
	orphans := t.orphans
	t.orphans = nil
	t.mu.Unlock()
	for _, o := range orphans {
		kctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = t.killGroup(kctx, o.pgid, o.nonce, o.sudo, t.grace())
		cancel()
	}
	return c, nil
}

func (t *SSHTarget) grace() time.Duration {
	if t.cfg.KillGrace > 0 {
		return t.cfg.KillGrace
	}
	return time.Second
}

func (t *SSHTarget) dial(ctx context.Context) (*sshConn, error) {
	timeout := t.cfg.ConnectTimeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	addr := t.cfg.addr()
	// The handshake may wait on a person (host key, password prompts), so
	// the deadline bounds only the network part: it is lifted while a
	// prompt is open. ctx always aborts.
	dp := &deadlinePrompter{p: t.prompter(), timeout: timeout}
	auth, closeAgent, err := t.authMethods(ctx, dp)
	if err != nil {
		return nil, err
	}
	defer closeAgent()
	hk := t.keys.callback(ctx, dp)
	algs := t.keys.algorithms(addr)
	cc := &ssh.ClientConfig{
		User:              t.cfg.User,
		Auth:              auth,
		HostKeyCallback:   hk,
		HostKeyAlgorithms: algs,
		Timeout:           timeout,
	}

	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var nc net.Conn
	if t.jump != nil {
		jc, err := t.jump.connect(ctx)
		if err != nil {
			return nil, fmt.Errorf("connect to %s via jump host %s: %w", t.cfg.Name, t.jump.cfg.Name, err)
		}
		nc, err = jc.client.DialContext(dctx, "tcp", addr)
		if err != nil {
			return nil, &ConnError{Host: t.cfg.Name, Op: "connect via " + t.jump.cfg.Name, Err: err}
		}
	} else {
		var d net.Dialer
		nc, err = d.DialContext(dctx, "tcp", addr)
		if err != nil {
			return nil, &ConnError{Host: t.cfg.Name, Op: "connect", Err: err}
		}
	}
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	defer stop()
	rc := &recConn{Conn: nc}
	dp.arm(rc)
	sc, chans, reqs, err := ssh.NewClientConn(rc, addr, cc)
	dp.disarm()
	if err != nil {
		nc.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("connect to %s: %w", t.cfg.Name, ctx.Err())
		}
		var hke *HostKeyError
		if errors.As(err, &hke) {
			return nil, hke
		}
		// x/crypto goes on to the next auth method after a failed one and
		// reports the last failure: a connection that broke midway would
		// show up as some later method's complaint.
		if nerr := rc.firstErr(); nerr != nil {
			return nil, &ConnError{Host: t.cfg.Name, Op: "ssh handshake", Err: nerr}
		}
		var pe *promptError
		if errors.As(err, &pe) {
			return nil, &AuthError{Host: t.cfg.Name, User: t.cfg.User, Err: pe.err}
		}
		if strings.Contains(err.Error(), "unable to authenticate") || strings.Contains(err.Error(), "no supported methods remain") {
			return nil, &AuthError{Host: t.cfg.Name, User: t.cfg.User, Err: err}
		}
		return nil, &ConnError{Host: t.cfg.Name, Op: "ssh handshake", Err: err}
	}
	client := &goph.Client{Client: ssh.NewClient(sc, chans, reqs), Config: &goph.Config{User: t.cfg.User, Addr: t.cfg.Addr, Port: uint(t.cfg.Port), Auth: auth, Timeout: timeout, Callback: hk}}
	c := &sshConn{client: client, dead: make(chan struct{})}
	go func() {
		_ = client.Wait()
		close(c.dead)
	}()
	go t.keepAlive(c)
	return c, nil
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

// newSession opens a session, dialling first if needed.
func (t *SSHTarget) newSession(ctx context.Context) (*sshConn, *ssh.Session, error) {
	c, err := t.connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	s, err := c.client.NewSession()
	if err != nil {
		// A connection that died since the last use: dial once more.
		c.client.Close()
		<-c.dead
		if c, err = t.connect(ctx); err != nil {
			return nil, nil, err
		}
		if s, err = c.client.NewSession(); err != nil {
			return nil, nil, &ConnError{Host: t.cfg.Name, Op: "open session", Err: err}
		}
	}
	return c, s, nil
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
	c, s, err := t.newSession(ctx)
	if err != nil {
		return nil, nil, -1, err
	}
	defer s.Close()
	var out, errOut bytes.Buffer
	s.Stdout, s.Stderr = &out, &errOut
	if stdin != nil {
		s.Stdin = bytes.NewReader(stdin)
	}
	if err := s.Start(script); err != nil {
		return nil, nil, -1, &ConnError{Host: t.cfg.Name, Op: "start command", Err: err}
	}
	done := make(chan error, 1)
	go func() { done <- s.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		s.Close()
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
		return -1, &ConnError{Host: t.cfg.Name, Op: op, Err: err}
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
	c, s, err := t.newSession(ctx)
	if err != nil {
		return Result{ExitCode: -1}, err
	}
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
		return Result{ExitCode: -1}, &ConnError{Host: t.cfg.Name, Op: "start command", Err: err}
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
				select {
				case pgid = <-pgidCh:
					t.mu.Lock()
					t.orphans = append(t.orphans, orphan{pgid: pgid, nonce: nonce, sudo: cmd.Sudo})
					t.mu.Unlock()
				default:
				}
			}
		}
		return result(code), err
	case <-ctx.Done():
	}
	// Cancelled: the group id arrives within moments of the start.
	select {
	case pgid = <-pgidCh:
	case <-done:
	case <-time.After(3 * time.Second):
	}
	if pgid > 0 {
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

func (t *SSHTarget) sftpClient(ctx context.Context) (*sftp.Client, error) {
	c, err := t.connect(ctx)
	if err != nil {
		return nil, err
	}
	c.sftpMu.Lock()
	defer c.sftpMu.Unlock()
	if c.sftp == nil {
		s, err := c.client.NewSftp()
		if err != nil {
			if c.isDead() || t.connLost(c) {
				return nil, &ConnError{Host: t.cfg.Name, Op: "sftp", Err: err}
			}
			return nil, fmt.Errorf("sftp to %s: %w (does the host's sshd enable the sftp subsystem?)", t.cfg.Name, err)
		}
		c.sftp = s
	}
	return c.sftp, nil
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
	sc, err := t.sftpClient(ctx)
	if err != nil {
		return err
	}
	if dir := path.Dir(remotePath); dir != "." && dir != "/" {
		if err := sc.MkdirAll(dir); err != nil {
			return t.sftpErr(sc, "upload "+remotePath, err)
		}
	}
	tmp := remotePath + ".dpulab-tmp-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	dst, err := sc.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
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
			return fmt.Errorf("upload %s to %s: %w", localPath, t.cfg.Name, ctx.Err())
		}
		return t.sftpErr(sc, "upload "+remotePath, err)
	}
	return nil
}

// sftpErr wraps an SFTP failure, as a ConnError when the connection died.
func (t *SSHTarget) sftpErr(sc *sftp.Client, op string, err error) error {
	t.mu.Lock()
	c := t.conn
	t.mu.Unlock()
	if c != nil && (c.isDead() || errors.Is(err, io.EOF) && t.connLost(c)) {
		return &ConnError{Host: t.cfg.Name, Op: op, Err: err}
	}
	return fmt.Errorf("%s on %s: %w", op, t.cfg.Name, err)
}

// maxReadFile bounds ReadFile: it is for small files (configs, pid files,
// logs' ends), not bulk transfer.
const maxReadFile = 16 << 20

// ReadFile implements Target.
func (t *SSHTarget) ReadFile(ctx context.Context, p string) ([]byte, error) {
	sc, err := t.sftpClient(ctx)
	if err != nil {
		return nil, err
	}
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
	t.mu.Unlock()
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
