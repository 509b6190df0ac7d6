package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Name names a transport: "tcp", "unix", "rdma".
type Name string

// The transports dpulab knows. Whether this binary has each is Available's
// answer.
const (
	TCP  Name = "tcp"
	Unix Name = "unix"
	RDMA Name = "rdma"
)

// known is every transport dpulab has code for, with what a build lacking
// it says: the one place a transport's absence is explained.
var known = map[Name]string{
	TCP:  "",
	Unix: "",
	RDMA: "", // rdma_core.go registers it; rdma_nordma.go and rdma_unsupported.go say why a build lacks it
}

// ErrUnknown is wrapped by the error for a transport name dpulab does not
// know; ErrNotBuilt by the error for one this binary was built without.
var (
	ErrUnknown  = errors.New("unknown transport")
	ErrNotBuilt = errors.New("transport not built in")
)

// Transport makes listeners and connections for one transport. Addresses
// are an Endpoint's: HOST:PORT or a path.
type Transport interface {
	// Listen listens on addr; the listener's conns are the transport's.
	Listen(ctx context.Context, addr string, o Options) (net.Listener, error)
	// Dial connects to addr within ctx (its deadline is the connect
	// timeout).
	Dial(ctx context.Context, addr string, o Options) (net.Conn, error)
}

// Simulation is implemented by a registered Transport that is not the real
// thing (the rdmasim provider): what it returns labels every figure measured
// over it.
type Simulation interface {
	Simulation() string
}

// Options are the settings a listener or a connection may need; each
// transport reads its own and ignores the rest.
type Options struct {
	// UnixPerm is the socket file's permission bits (unix Listen; 0 keeps
	// the umask's).
	UnixPerm os.FileMode
	// RDMA holds the RDMA settings (rdma only).
	RDMA RDMAOptions
	// SourceAddr, for Dial over tcp and rdma, is the local IP address to
	// connect from: the interface (for RDMA, the device) the connection
	// leaves by. "" lets the route choose.
	SourceAddr string
	// Refused, for Listen, is told of every connection a listener refused
	// or failed to set up before the server saw it (an RDMA client of the
	// other queue-pair type), with the peer's address and why; the server
	// logs it. TCP and Unix listeners refuse nothing themselves.
	Refused func(peer string, err error)
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

var (
	regMu sync.RWMutex
	reg   = map[Name]Transport{}
)

// Register makes t the implementation of n. It panics on a name dpulab
// does not know or one registered twice: both are programming errors found
// at start-up, not user input.
func Register(n Name, t Transport) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, ok := known[n]; !ok {
		panic("transport: Register of unknown transport " + string(n) + ": add it to known first")
	}
	if _, dup := reg[n]; dup {
		panic("transport: " + string(n) + " registered twice")
	}
	reg[n] = t
}

// Known lists every transport dpulab knows, built in or not, sorted.
func Known() []Name {
	out := make([]Name, 0, len(known))
	for n := range known {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Names lists the transports this binary has, sorted (dpulab version
// prints them).
func Names() []Name {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]Name, 0, len(reg))
	for n := range reg {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Available says whether this binary can use transport n: nil, or the one
// message for an unknown name (wrapping ErrUnknown, listing the known ones)
// or a transport this build lacks (wrapping ErrNotBuilt, saying how to get
// it).
func Available(n Name) error {
	_, err := lookup(n)
	return err
}

// Simulated returns what labels figures measured over n when this binary's
// n is a simulation, else "".
func Simulated(n Name) string {
	t, err := lookup(n)
	if err != nil {
		return ""
	}
	if s, ok := t.(Simulation); ok {
		return s.Simulation()
	}
	return ""
}

func lookup(n Name) (Transport, error) {
	reason, ok := known[n]
	if !ok {
		names := make([]string, 0, len(known))
		for _, k := range Known() {
			names = append(names, string(k))
		}
		return nil, fmt.Errorf("transport %q: %w: want one of %s", n, ErrUnknown, strings.Join(names, ", "))
	}
	regMu.RLock()
	t := reg[n]
	regMu.RUnlock()
	if t == nil {
		if reason == "" {
			reason = "not in this build"
		}
		return nil, &notBuilt{name: n, reason: reason}
	}
	return t, nil
}

// notBuilt is Available's error for a known transport this binary lacks.
type notBuilt struct {
	name   Name
	reason string
}

func (e *notBuilt) Error() string        { return fmt.Sprintf("transport %s: %s", e.name, e.reason) }
func (e *notBuilt) Is(target error) bool { return target == ErrNotBuilt }

// Listen listens on ep through its transport. A transport's errors name the
// address as net's do ("listen tcp 127.0.0.1:6379: bind: ...").
func Listen(ctx context.Context, ep Endpoint, o Options) (net.Listener, error) {
	t, err := lookup(ep.Transport)
	if err != nil {
		return nil, err
	}
	return t.Listen(ctx, ep.Address, o)
}

// Dial connects to ep through its transport. A transport's errors name the
// address as net's do ("dial tcp 127.0.0.1:6379: connect: ...").
func Dial(ctx context.Context, ep Endpoint, o Options) (net.Conn, error) {
	t, err := lookup(ep.Transport)
	if err != nil {
		return nil, err
	}
	return t.Dial(ctx, ep.Address, o)
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
// is refused with Available's message; one this build lacks is accepted
// (results of another build must stay readable): use Available before
// connecting. IPv6 hosts are bracketed: [::1]:6379.
func ParseEndpoint(s string) (Endpoint, error) {
	s = strings.TrimSpace(s)
	var ep Endpoint
	switch scheme, rest, ok := strings.Cut(s, "://"); {
	case ok:
		ep = Endpoint{Name(strings.ToLower(scheme)), rest}
		if _, known := known[ep.Transport]; !known {
			return Endpoint{}, fmt.Errorf("endpoint %q: %w", s, Available(ep.Transport))
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
// whether the transport is built (Available does).
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
	if _, ok := known[ep.Transport]; !ok {
		return Available(ep.Transport)
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
