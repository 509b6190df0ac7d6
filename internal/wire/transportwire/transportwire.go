package transportwire

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// Name names a transport: "tcp", "unix", "rdma".
type Name string

// The transports dpulab knows. Whether a binary has each is server/transport's
// Available's answer.
const (
	TCP  Name = "tcp"
	Unix Name = "unix"
	RDMA Name = "rdma"
)

// known is every transport dpulab has code for, sorted.
var known = []Name{RDMA, TCP, Unix}

// Known lists every transport dpulab knows, built in a given binary or
// not, sorted.
func Known() []Name { return append([]Name(nil), known...) }

// IsKnown says whether dpulab has code for n.
func IsKnown(n Name) bool {
	for _, k := range known {
		if k == n {
			return true
		}
	}
	return false
}

// ErrUnknown is wrapped by the error for a transport name dpulab does not
// know.
var ErrUnknown = errors.New("unknown transport")

// UnknownError is the one message for a transport name dpulab does not
// know: it wraps ErrUnknown and lists the known ones.
func UnknownError(n Name) error {
	names := make([]string, len(known))
	for i, k := range known {
		names[i] = string(k)
	}
	return fmt.Errorf("transport %q: %w: want one of %s", n, ErrUnknown, strings.Join(names, ", "))
}

// RDMAOptions are the RDMA transport's settings, the server's rdma-* keys
// and the load generator's --rdma-* flags. Zero values mean the transport's
// defaults.
type RDMAOptions struct {
	// UC selects an unreliable-connected queue pair (dpulab's extension);
	// false is reliable-connected, Valkey's.
	UC bool `json:"uc,omitempty"`
	// RxSize is the receive buffer each side registers and announces, in
	// bytes.
	RxSize int `json:"rx_size_bytes,omitempty"`
	// InlineSize is the largest send posted inline, in bytes.
	InlineSize int `json:"inline_size_bytes,omitempty"`
	// SQSize and RQSize are the send and receive queue depths.
	SQSize int `json:"sq_size,omitempty"`
	RQSize int `json:"rq_size,omitempty"`
	// Poll is how long to spin on the completion queue before sleeping on
	// the completion channel (0: sleep at once).
	Poll time.Duration `json:"poll_ns,omitempty"`
	// RetryCount is the RC retry count (0..7; 0 is the transport's default,
	// 7).
	RetryCount int `json:"retry_count,omitempty"`
	// CompletionVector picks the completion vector (0: the first; -1:
	// automatic).
	CompletionVector int `json:"completion_vector,omitempty"`
}

// Endpoint is where a server listens or a client connects: a transport and
// its address (HOST:PORT for tcp and rdma, a path for unix).
type Endpoint struct {
	Transport Name
	Address   string
}

// TCPEndpoint, UnixEndpoint and RDMAEndpoint build the usual endpoints.
func TCPEndpoint(hostPort string) Endpoint  { return Endpoint{TCP, hostPort} }
func UnixEndpoint(path string) Endpoint     { return Endpoint{Unix, path} }
func RDMAEndpoint(hostPort string) Endpoint { return Endpoint{RDMA, hostPort} }

// String writes ep as a URL: tcp://127.0.0.1:6379, unix:///run/x.sock,
// rdma://10.0.0.2:6379. ParseEndpoint reads it back.
func (ep Endpoint) String() string {
	return string(ep.Transport) + "://" + ep.Address
}

// Label is ep as results name a target: HOST:PORT for tcp and unix:PATH
// for unix, as before transports had names; the URL for any other.
// ParseEndpoint reads it back too.
func (ep Endpoint) Label() string {
	switch ep.Transport {
	case TCP:
		return ep.Address
	case Unix:
		return "unix:" + ep.Address
	}
	return ep.String()
}

// MarshalText writes the URL form, so endpoints travel in JSON as strings.
func (ep Endpoint) MarshalText() ([]byte, error) { return []byte(ep.String()), nil }

// UnmarshalText reads any form ParseEndpoint accepts.
func (ep *Endpoint) UnmarshalText(b []byte) error {
	v, err := ParseEndpoint(string(b))
	if err != nil {
		return err
	}
	*ep = v
	return nil
}

// ParseEndpoint reads an endpoint: a URL (tcp://HOST:PORT, unix:///PATH,
// rdma://HOST:PORT), a result label (unix:/PATH), a bare path starting with
// / or . (unix) or a bare HOST:PORT (tcp). A transport dpulab does not know
// is refused (UnknownError); one a build lacks is accepted (results of
// another build must stay readable): server/transport's Available says
// whether this one can connect. IPv6 hosts are bracketed: [::1]:6379.
func ParseEndpoint(s string) (Endpoint, error) {
	s = strings.TrimSpace(s)
	var ep Endpoint
	switch scheme, rest, ok := strings.Cut(s, "://"); {
	case ok:
		ep = Endpoint{Name(strings.ToLower(scheme)), rest}
		if !IsKnown(ep.Transport) {
			return Endpoint{}, fmt.Errorf("endpoint %q: %w", s, UnknownError(ep.Transport))
		}
	case strings.HasPrefix(s, "unix:"):
		ep = Endpoint{Unix, strings.TrimPrefix(s, "unix:")}
	case strings.HasPrefix(s, "/"), strings.HasPrefix(s, "."):
		ep = Endpoint{Unix, s}
	default:
		ep = Endpoint{TCP, s}
	}
	if err := ep.Validate(); err != nil {
		return Endpoint{}, err
	}
	return ep, nil
}

// Validate checks the address's syntax for its transport: a client's
// endpoint needs a host and a port of 1..65535, or a path. It does not ask
// whether the transport is built (server/transport's Available does).
func (ep Endpoint) Validate() error {
	switch ep.Transport {
	case Unix:
		if ep.Address == "" {
			return errors.New("unix endpoint without a path: want unix:///PATH, or a path starting with / or ./")
		}
		return nil
	case "":
		return errors.New("endpoint without a transport")
	}
	if !IsKnown(ep.Transport) {
		return UnknownError(ep.Transport)
	}
	host, port, err := net.SplitHostPort(ep.Address)
	if err != nil || host == "" {
		return fmt.Errorf("%s endpoint %q: want HOST:PORT (e.g. 127.0.0.1:6379; [::1]:6379 for IPv6)", ep.Transport, ep.Address)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("%s endpoint %q: port %q must be 1..65535", ep.Transport, ep.Address, port)
	}
	return nil
}
