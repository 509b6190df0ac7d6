package load

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/internal/wire/serverwire"
	"github.com/dpulab/dpulab/internal/wire/transportwire"
	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/server/transport"
	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/kinds/deploy"
)

// benchConfig turns a bench profile into a benchwire.Config against the
// instances of a deployment, reached over transport ("" is tcp). Over rdma
// the load generator opens the queue pairs the servers' rdma-* settings ask
// for, so one setting in the lab changes both ends.
func BenchConfig(spec *labs.BenchSpec, vars map[string]string, insts []deploy.Instance, transport string, settings [][2]string) (benchwire.Config, error) {
	c := benchwire.DefaultConfig()
	var err error
	fail := func(field string, err error) (benchwire.Config, error) {
		return c, fmt.Errorf("bench %s: %w", field, err)
	}
	if c.Clients, err = spec.Clients.Int(vars, c.Clients); err != nil {
		return fail("clients", err)
	}
	if c.Pipeline, err = spec.Pipeline.Int(vars, c.Pipeline); err != nil {
		return fail("pipeline", err)
	}
	if spec.Ratio.IsSet() {
		s, err := spec.Ratio.Resolve(vars)
		if err != nil {
			return fail("ratio", err)
		}
		if c.Ratio, err = benchwire.ParseRatio(s); err != nil {
			return fail("ratio", err)
		}
	}
	ds, err := spec.DataSize.Size(vars, int64(c.DataSize))
	if err != nil {
		return fail("data_size", err)
	}
	c.DataSize = int(ds)
	if c.Duration, err = spec.Duration.Duration(vars, c.Duration); err != nil {
		return fail("duration", err)
	}
	if c.Warmup, err = spec.Warmup.Duration(vars, c.Warmup); err != nil {
		return fail("warmup", err)
	}
	req, err := spec.Requests.Int(vars, 0)
	if err != nil {
		return fail("requests", err)
	}
	c.Requests = int64(req)
	if c.Rate, err = spec.Rate.Float(vars, 0); err != nil {
		return fail("rate", err)
	}
	if c.Runs, err = spec.Runs.Int(vars, 1); err != nil {
		return fail("runs", err)
	}
	km, err := spec.KeyMaximum.Int(vars, int(c.KeyMaximum))
	if err != nil {
		return fail("key_maximum", err)
	}
	c.KeyMaximum = int64(km)
	if c.Prefill, err = spec.Prefill.Bool(vars, false); err != nil {
		return fail("prefill", err)
	}
	eps, err := endpoints(insts, transport)
	if err != nil {
		return c, fmt.Errorf("bench: %w", err)
	}
	c.Endpoints = eps
	// Each instance's own second for the dashboard's per-instance view
	// (Sample.Targets), up to as many instances as one deploy can start:
	// beyond that the lines cost more than a table of them shows.
	c.TargetSamples = len(eps) <= MaxTargetSamples
	if transport == RDMAName {
		if c.RDMA, err = rdmaOptions(settings); err != nil {
			return c, err
		}
	}
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("bench profile: %w", err)
	}
	return c, nil
}

// MaxTargetSamples is the most targets a bench is asked per-target
// samples for (--target-samples): one deploy's maximum.
const MaxTargetSamples = deploy.MaxInstances

// RDMAName is transport.RDMA, which benchConfig's parameter hides.
const RDMAName = string(transport.RDMA)

// rdmaOptions reads the servers' rdma-* settings with the server's own
// parser, serverwire's (so a value means to the client what it means to
// the server), into the client's connection options.
func rdmaOptions(settings [][2]string) (transport.RDMAOptions, error) {
	r := serverwire.DefaultRDMA()
	for _, s := range settings {
		name := strings.ToLower(s[0])
		if !strings.HasPrefix(name, "rdma-") {
			continue
		}
		ok, err := r.Set(name, strings.Fields(s[1]))
		if !ok {
			err = errors.New("not an RDMA setting the server knows (" + strings.Join(serverwire.RDMANames, ", ") + ")")
		}
		if err != nil {
			return transport.RDMAOptions{}, fmt.Errorf("setting %s: %w", s[0], err)
		}
	}
	return transport.RDMAOptions{
		UC:     r.TransportMode == "unreliable-connected",
		RxSize: int(r.RxSize), InlineSize: r.InlineSize, SQSize: r.SQSize, RQSize: r.RQSize,
		Poll: time.Duration(r.PollUS) * time.Microsecond, RetryCount: r.RetryCount, CompletionVector: r.CompletionVector,
	}, nil
}

// endpoints are the instances as the load generator reaches them over
// transport: a Unix socket's path, or the instance's HOST:PORT over tcp or
// rdma (which the server serves on the same port number). A transport
// dpulab does not know is refused in the transport seam's words; whether
// the hosts' binaries have it is hostsLack's question, not this build's.
func endpoints(insts []deploy.Instance, name string) ([]transport.Endpoint, error) {
	tr := transport.Name(name)
	if tr == "" {
		tr = transport.TCP
	}
	if !transportwire.IsKnown(tr) {
		return nil, transportwire.UnknownError(tr)
	}
	eps := make([]transport.Endpoint, len(insts))
	for i, in := range insts {
		eps[i] = transport.Endpoint{Transport: tr, Address: in.Address}
		if tr == transport.Unix {
			eps[i].Address = in.Socket
		}
	}
	return eps, nil
}

// reachable checks that the client host can reach every instance: a Unix
// socket or a loopback address only from the same host.
func Reachable(client kind.Host, insts []deploy.Instance, tr string) error {
	for _, in := range insts {
		if in.Host == client.Name {
			continue
		}
		if tr == string(transport.Unix) {
			return fmt.Errorf("the load generator on %s cannot use a Unix socket on %s: use transport tcp, or run the client on the server host", client.Name, in.Host)
		}
		host, _, err := net.SplitHostPort(in.Address)
		if err != nil || !isLoopback(host) {
			continue
		}
		if isLoopback(in.HostAddress) && isLoopback(client.Address) {
			continue // both hosts are this machine
		}
		if isWildcard(in.Bind) {
			return fmt.Errorf("the servers on %s listen on every address, but the inventory gives %s the loopback address %s, which the load generator on %s cannot reach: give %s its lab address in the inventory", in.Host, in.Host, in.HostAddress, client.Name, in.Host)
		}
		return fmt.Errorf("the servers on %s are bound to %s (loopback only), which the load generator on %s cannot reach: set the deploy's bind to the host's lab address (or 0.0.0.0)", in.Host, host, client.Name)
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// isWildcard reports whether a bind setting listens on every address.
func isWildcard(bind string) bool {
	for _, a := range strings.Fields(bind) {
		switch strings.TrimPrefix(a, "-") {
		case "0.0.0.0", "::", "*":
			return true
		}
	}
	return false
}

// ExpectedDuration is how long a bench job should take (the measured runs
// and their warmups; prefill and connecting are not counted).
func ExpectedDuration(c benchwire.Config) time.Duration {
	per := c.Duration + c.Warmup
	if c.Requests > 0 {
		per = c.Warmup + 5*time.Second
	}
	return time.Duration(c.Runs) * per
}

// Password is the lab's server password, from a variable named
// password or requirepass (empty when there is none).
func Password(vars map[string]string) string {
	if p := vars["password"]; p != "" {
		return p
	}
	return vars["requirepass"]
}
