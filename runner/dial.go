package runner

import (
	"context"
	"errors"
	"net"

	"golang.org/x/crypto/ssh"
)

// DialContext opens a TCP connection from the host's side, as an SSH
// direct-tcpip channel: a caller reaches a server bound to the host's
// loopback without running a command there. The channel takes none of
// the connection's MaxSessions. sshd may forbid it (AllowTcpForwarding
// no, a Match block): ForwardingRefused then reports true, and the caller
// falls back to a command run on the host.
func (t *SSHTarget) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := t.connect(ctx)
	if err != nil {
		return nil, err
	}
	return c.client.DialContext(ctx, network, addr)
}

// ForwardingRefused reports whether err is the host's sshd refusing a
// forwarded connection by its policy, rather than the connection failing
// on the host (nothing listens there, it timed out).
func ForwardingRefused(err error) bool {
	var oe *ssh.OpenChannelError
	return errors.As(err, &oe) && oe.Reason == ssh.Prohibited
}
