package transport

import (
	"context"
	"errors"
	"fmt"
	"github.com/dpulab/dpulab/internal/wire/transportwire"
	"net"
	"os"
	"runtime"
	"slices"
	"sync"
)

// Name, Endpoint and RDMAOptions, how an endpoint is written and read, and
// the names dpulab knows are declared in internal/wire/transportwire,
// which the controller reads without linking any transport; this package
// adds which of them this binary has, and makes their connections.
type (
	Name        = transportwire.Name
	Endpoint    = transportwire.Endpoint
	RDMAOptions = transportwire.RDMAOptions
)

// The transports dpulab knows. Whether this binary has each is Available's
// answer.
const (
	TCP  = transportwire.TCP
	Unix = transportwire.Unix
	RDMA = transportwire.RDMA
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
	ErrUnknown  = transportwire.ErrUnknown
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

// builtNoRDMA is set by a -tags nordma build (rdma_nordma.go).
var builtNoRDMA bool

// ThisBuild is this binary as transportwire.Build describes builds, whose
// Lacks is the rule this package's build tags implement. Available is the
// exact answer for this binary (a simulation build has the Go simulation
// of rdma); ThisBuild is for comparing with the builds other hosts run.
func ThisBuild() transportwire.Build {
	return transportwire.Build{OS: runtime.GOOS, Arch: runtime.GOARCH, NoRDMA: builtNoRDMA}
}

// ErrHostLacks is wrapped by the error of a Listen or Dial over a
// transport this binary has but this host cannot use yet (RDMA without
// rdma-core's libraries or a device): the message says what to install or
// load, and nothing about the peer, which was never tried.
var ErrHostLacks = errors.New("this host cannot use the transport")

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
		return nil, transportwire.UnknownError(n)
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

// TCPEndpoint, UnixEndpoint and RDMAEndpoint build the usual endpoints.
func TCPEndpoint(hostPort string) Endpoint  { return transportwire.TCPEndpoint(hostPort) }
func UnixEndpoint(path string) Endpoint     { return transportwire.UnixEndpoint(path) }
func RDMAEndpoint(hostPort string) Endpoint { return transportwire.RDMAEndpoint(hostPort) }

// ParseEndpoint reads an endpoint (transportwire.ParseEndpoint): a
// transport dpulab does not know is refused, one this build lacks is
// accepted; use Available before connecting.
func ParseEndpoint(s string) (Endpoint, error) { return transportwire.ParseEndpoint(s) }
