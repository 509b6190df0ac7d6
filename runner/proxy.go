package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// proxyCommandLine expands OpenSSH's ProxyCommand tokens: %h (host name),
// %p (port), %r (remote user), %n (the alias as given), %u (local user),
// %d (local home), %%. Every value is
// shell-quoted: a host name from an inventory never becomes shell syntax.
func proxyCommandLine(cmd, host string, port int, user, alias string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(cmd) {
			return "", fmt.Errorf("ProxyCommand %q ends with a lone %%", cmd)
		}
		i++
		switch cmd[i] {
		case '%':
			b.WriteByte('%')
		case 'h':
			b.WriteString(Quote(host))
		case 'p':
			b.WriteString(strconv.Itoa(port))
		case 'r':
			b.WriteString(Quote(user))
		case 'n':
			b.WriteString(Quote(alias))
		case 'u':
			b.WriteString(Quote(currentUser()))
		case 'd':
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("ProxyCommand %q: %%d: %w", cmd, err)
			}
			b.WriteString(Quote(home))
		default:
			return "", fmt.Errorf("ProxyCommand %q: token %%%c is not supported (use %%h, %%p, %%r, %%n, %%u, %%d or %%%%)", cmd, cmd[i])
		}
	}
	return b.String(), nil
}

// proxyConn is a net.Conn over a ProxyCommand's stdin and stdout. The
// command runs in its own process group, ended (SIGTERM, then SIGKILL)
// when the connection closes, so that nothing it started outlives it.
type proxyConn struct {
	cmd    *exec.Cmd
	r      *os.File // the command's stdout
	w      *os.File // the command's stdin
	stderr *tailBuffer
	exited chan struct{}
	once   sync.Once
	// addr is the host:port the command reaches, the connection's
	// remote address for known_hosts (which wants host:port).
	addr string
}

// startProxyCommand runs line with sh -c and returns the connection over
// its pipes. ctx only bounds the start.
func startProxyCommand(ctx context.Context, line, addr string) (*proxyConn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("ProxyCommand: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("ProxyCommand: %w", err)
	}
	pc := &proxyConn{addr: addr, r: outR, w: inW, stderr: &tailBuffer{max: 4096}, exited: make(chan struct{})}
	// exec replaces the shell, as OpenSSH runs it.
	pc.cmd = exec.Command("/bin/sh", "-c", "exec "+line)
	pc.cmd.Stdin, pc.cmd.Stdout, pc.cmd.Stderr = inR, outW, pc.stderr
	ownGroup(pc.cmd)
	err = pc.cmd.Start()
	// The child holds its ends now.
	inR.Close()
	outW.Close()
	if err != nil {
		outR.Close()
		inW.Close()
		return nil, fmt.Errorf("ProxyCommand %q: %w", line, err)
	}
	go func() {
		_ = pc.cmd.Wait()
		close(pc.exited)
	}()
	return pc, nil
}

func (c *proxyConn) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c *proxyConn) Write(p []byte) (int, error) { return c.w.Write(p) }

// Close closes the pipes and ends the command's process group.
func (c *proxyConn) Close() error {
	c.once.Do(func() {
		c.w.Close()
		c.r.Close()
		pgid := c.cmd.Process.Pid
		_ = termGroup(pgid)
		select {
		case <-c.exited:
		case <-time.After(time.Second):
			killGroupNow(pgid)
			<-c.exited
		}
		// The group may outlive its leader (a child that ignored TERM).
		killGroupNow(pgid)
	})
	return nil
}

// Stderr is the end of what the command wrote on stderr, for errors.
func (c *proxyConn) Stderr() string { return strings.TrimSpace(c.stderr.String()) }

// exitedEarly reports, after a failure, whether the command had ended,
// with its stderr.
func (c *proxyConn) exitedEarly() error {
	select {
	case <-c.exited:
	case <-time.After(200 * time.Millisecond):
		return nil
	}
	msg := c.Stderr()
	if msg == "" {
		msg = "no message"
	}
	return fmt.Errorf("ProxyCommand exited (%s): %s", c.cmd.ProcessState, msg)
}

func (c *proxyConn) LocalAddr() net.Addr  { return proxyAddr("") }
func (c *proxyConn) RemoteAddr() net.Addr { return proxyAddr(c.addr) }

// Deadlines work on the pipes: os.Pipe's files are pollable.
func (c *proxyConn) SetDeadline(t time.Time) error {
	return errors.Join(c.r.SetReadDeadline(t), c.w.SetWriteDeadline(t))
}
func (c *proxyConn) SetReadDeadline(t time.Time) error  { return c.r.SetReadDeadline(t) }
func (c *proxyConn) SetWriteDeadline(t time.Time) error { return c.w.SetWriteDeadline(t) }

// proxyAddr is the address a ProxyCommand reaches.
type proxyAddr string

func (proxyAddr) Network() string  { return "proxycommand" }
func (a proxyAddr) String() string { return string(a) }

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   bytes.Buffer
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b.Write(p)
	if over := t.b.Len() - t.max; over > 0 {
		t.b.Next(over)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.b.String()
}
