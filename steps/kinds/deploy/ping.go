package deploy

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/kind"
)

// ContextDialer is implemented by targets that can open connections from
// the host's side (SSH direct-tcpip), so PING reaches servers bound to the
// host's loopback without a command (a dpulab bench process) per try:
// what lets deploy probe and await hundreds of instances.
type ContextDialer interface {
	DialContext(ctx context.Context, network, addr string) (net.Conn, error)
}

// Ping checks once that inst answers PING with PONG (or NOAUTH: up, and
// wanting the lab's password), from h's own side: over a connection the
// target opens there, or this machine's for a local host, else with a
// command on h (a namespace's server, a host whose sshd does not forward).
func Ping(ctx context.Context, env Env, h kind.Host, t runner.Target, inst Instance) error {
	var conn net.Conn
	var err error
	if inst.NetNS != "" {
		// Inside a namespace: only a process there can dial it.
		return pingByCommand(ctx, env, h, t, inst)
	}
	switch d := t.(type) {
	case ContextDialer:
		conn, err = d.DialContext(ctx, "tcp", inst.Address)
		if err != nil && runner.ForwardingRefused(err) {
			// The host's sshd forbids forwarding: ask the host.
			return pingByCommand(ctx, env, h, t, inst)
		}
	default:
		if !h.Local {
			return pingByCommand(ctx, env, h, t, inst)
		}
		var nd net.Dialer
		conn, err = nd.DialContext(ctx, "tcp", inst.Address)
	}
	if err != nil {
		return err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	} else {
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	}
	if _, err := conn.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	line = strings.TrimSpace(line)
	// NOAUTH: the server is up and wants the lab's password first.
	if line != "+PONG" && !strings.HasPrefix(line, "-NOAUTH") {
		return fmt.Errorf("answered %q instead of +PONG", line)
	}
	return nil
}

// PingsByCommand reports whether Ping reaches inst through a command on
// the host rather than a connection: such a try must start a dpulab bench
// first, so it is given longer.
func PingsByCommand(h kind.Host, t runner.Target, inst Instance) bool {
	if inst.NetNS != "" {
		return true
	}
	_, dials := t.(ContextDialer)
	return !dials && !h.Local
}

// PingCmd is the command that pings inst from its host with one request
// of dpulab bench (the password, when there is one, read from stdin).
func PingCmd(agent string, inst Instance, password bool) string {
	cmd := runner.QuoteAll(agent, "bench", "--json", "--target", inst.Address, "--clients", "1", "--requests", "1", "--connect-timeout", "2s") + " >/dev/null"
	if inst.NetNS != "" {
		cmd = runner.QuoteAll("ip", "netns", "exec", inst.NetNS) + " " + cmd
	}
	if password {
		// As for the bench itself: the password on stdin, never argv.
		cmd = "IFS= read -r " + benchwire.PasswordEnv + " && export " + benchwire.PasswordEnv + " && " + cmd
	}
	return cmd
}

// pingByCommand pings from the host with one request of dpulab bench, for
// targets that cannot dial from the host's side.
func pingByCommand(ctx context.Context, env Env, h kind.Host, t runner.Target, inst Instance) error {
	pw := env.Password()
	cmd := PingCmd(env.Agent(h), inst, pw != "")
	var stdin []byte
	if pw != "" {
		stdin = []byte(pw + "\n")
	}
	// The caller's deadline bounds the try (a saturated host may need
	// many seconds just to start the bench); 10 s when it has none.
	var limit time.Duration
	if _, ok := ctx.Deadline(); !ok {
		limit = 10 * time.Second
	}
	res, err := t.Run(ctx, runner.Command{Cmd: cmd, Stdin: stdin, Timeout: limit})
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("exit status %d: %s", res.ExitCode, strings.Join(kind.TailText(res.Tail), " / "))
	}
	return nil
}

// LastLines is the last n lines of s (a log's end).
func LastLines(s string, n int) []string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) == 1 && ls[0] == "" {
		return nil
	}
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return ls
}
