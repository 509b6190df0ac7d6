package transport

import (
	"context"
	"fmt"
	"net"
)

func init() { Register(TCP, tcpTransport{}) }

// tcpTransport is TCP. Its conns have descriptors: the server serves them
// on its event loop.
type tcpTransport struct{}

// Listen listens on HOST:PORT; an empty host or * is every address, an IPv4
// address listens on IPv4 only and an IPv6 one on IPv6 only, as Redis's
// bind does.
func (tcpTransport) Listen(ctx context.Context, addr string, _ Options) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	network := "tcp"
	switch ip := net.ParseIP(host); {
	case host == "" || host == "*":
		host = ""
	case ip != nil && ip.To4() != nil:
		network = "tcp4"
	case ip != nil:
		network = "tcp6"
	}
	var lc net.ListenConfig
	return lc.Listen(ctx, network, net.JoinHostPort(host, port))
}

func (tcpTransport) Dial(ctx context.Context, addr string, o Options) (net.Conn, error) {
	var d net.Dialer
	if o.SourceAddr != "" {
		ip := net.ParseIP(o.SourceAddr)
		if ip == nil {
			return nil, fmt.Errorf("source address %q: not a numeric IPv4 or IPv6 address", o.SourceAddr)
		}
		d.LocalAddr = &net.TCPAddr{IP: ip}
	}
	return d.DialContext(ctx, "tcp", addr)
}
