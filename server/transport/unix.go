package transport

import (
	"context"
	"fmt"
	"net"
	"os"
)

func init() { Register(Unix, unixTransport{}) }

// unixTransport is Unix domain sockets (same host only).
type unixTransport struct{}

// Listen listens on the socket path. A socket left at the path by a server
// that died is removed first, as Redis does; any other kind of file is an
// error rather than something to delete.
func (unixTransport) Listen(ctx context.Context, path string, o Options) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket: remove it or choose another unixsocket path", path)
		}
		os.Remove(path)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	if o.UnixPerm != 0 {
		if err := os.Chmod(path, o.UnixPerm); err != nil {
			ln.Close()
			return nil, fmt.Errorf("chmod unix socket: %w", err)
		}
	}
	return ln, nil
}

func (unixTransport) Dial(ctx context.Context, path string, _ Options) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "unix", path)
}
