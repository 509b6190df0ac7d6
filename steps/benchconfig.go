package steps

// This file is where the engine meets the transports: a bench profile and a
// deployment's instances become the load generator's configuration, and a
// client host is checked to reach the instances over the chosen transport.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/internal/wire/serverwire"
	"github.com/dpulab/dpulab/internal/wire/transportwire"
	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/server/transport"
)

// benchConfig turns a bench profile into a benchwire.Config against the
// instances of a deployment, reached over transport ("" is tcp). Over rdma
// the load generator opens the queue pairs the servers' rdma-* settings ask
// for, so one setting in the lab changes both ends.
func benchConfig(spec *labs.BenchSpec, vars map[string]string, insts []Instance, transport string, settings [][2]string) (benchwire.Config, error) {
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
	c.TargetSamples = len(eps) <= maxTargetSamples
	if transport == rdmaName {
		if c.RDMA, err = rdmaOptions(settings); err != nil {
			return c, err
		}
	}
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("bench profile: %w", err)
	}
	return c, nil
}

// maxTargetSamples is the most targets a bench is asked per-target
// samples for (--target-samples): one deploy's maximum.
const maxTargetSamples = maxInstances

// targetHosts maps the targets of c (as the bench names them in its
// per-target lines) to the inventory names of their server hosts, from
// the recorded deployments; among several matches, an instance on one of
// servers wins. A target no deployment started has no entry.
func (e *Engine) targetHosts(c benchwire.Config, servers []hostRef) map[string]string {
	want := map[string]bool{}
	for _, l := range c.Labels() {
		want[l] = true
	}
	isServer := map[string]bool{}
	for _, h := range servers {
		isServer[h.Name] = true
	}
	out := map[string]string{}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.state == nil {
		return out
	}
	for _, dep := range e.state.Deployments {
		for _, in := range dep.Instances {
			for _, l := range []string{in.Address, transport.Endpoint{Transport: transport.RDMA, Address: in.Address}.Label(), "unix:" + in.Socket} {
				if !want[l] {
					continue
				}
				if _, ok := out[l]; !ok || isServer[in.Host] {
					out[l] = in.Host
				}
			}
		}
	}
	return out
}

// hostsLack says why a job over transport tr cannot run on hosts ("" when
// it can): the first host whose dpulab binary lacks tr (hostLacks), in
// that binary's words, with what to do. The job is then planned with the
// command it would run and listed as unavailable, not failed mid-run.
func (e *Engine) hostsLack(hosts []hostRef, tr string) string {
	for _, h := range hosts {
		if why := e.hostLacks(h, tr, runner.Platform{OS: "linux"}); why != "" {
			return why
		}
	}
	return ""
}

// hostLacks says why the dpulab binary that runs on h cannot use
// transport tr ("" when it can, or dpulab does not know tr: endpoints
// refuses that). The question is about that binary, not about this one's
// build: on this machine (a local host, or no inventory) it is this
// program (or Options.Binary, a test's build of it, judged as this one),
// asked with transport.Available; on a lab host it is the agent for plat,
// the host's platform (runner.AgentFinder.AgentLacks): linux/amd64 and
// linux/arm64 agents have RDMA whatever runs the controller. Before the
// host is reached plat is {linux, ""}, lab hosts being Linux; the run asks
// again with the platform the host reports (hostsLackNow).
func (e *Engine) hostLacks(h hostRef, tr string, plat runner.Platform) string {
	n := transport.Name(tr)
	if n == "" {
		n = transport.TCP
	}
	if !transportwire.IsKnown(n) {
		return ""
	}
	if h.Local || e.hosts == nil || e.hosts.inv == nil || e.opts.Binary != "" {
		if err := transport.Available(n); errors.Is(err, transport.ErrNotBuilt) {
			return err.Error()
		}
		return ""
	}
	return e.agentFinder().AgentLacks(plat, n)
}

// TransportJudge is labs.TransportJudge for a lab run with inv (nil or
// empty: every role on this machine) and agents (nil: the engine's
// default finder), by the rule the engine plans with (hostLacks), before
// any host is reached: a transport this program lacks cannot run on a
// host of inv that is this machine; one the Linux agent lacks cannot run
// on a lab host. A simulation this program has labels what runs here.
func TransportJudge(inv *runner.Inventory, agents *runner.AgentFinder) labs.TransportJudge {
	local, remote := inv == nil || len(inv.Hosts) == 0, false
	if !local {
		for _, h := range inv.Hosts {
			if h.IsLocal() {
				local = true
			} else {
				remote = true
			}
		}
	}
	return func(n transport.Name) (cannot, simulated string) {
		if local {
			if err := transport.Available(n); errors.Is(err, transport.ErrNotBuilt) {
				return err.Error(), ""
			}
			simulated = transport.Simulated(n)
		}
		if remote {
			if why := agents.AgentLacks(runner.Platform{OS: "linux"}, n); why != "" {
				return why, ""
			}
		}
		return "", simulated
	}
}

// hostsLackNow is hostsLack with each lab host's own platform, reached
// through its target: a host that turns out not to be a Linux amd64 or
// arm64 one (or cannot say) is refused before its agent is asked to speak
// a transport it lacks.
func (e *Engine) hostsLackNow(ctx context.Context, hosts []hostRef, tr string) (string, error) {
	for _, h := range hosts {
		plat := runner.Platform{OS: "linux"}
		if !h.Local && e.hosts != nil && e.hosts.inv != nil && e.opts.Binary == "" && tr != "" && tr != string(transport.TCP) {
			t, err := e.hosts.target(ctx, h.Name)
			if err != nil {
				return "", err
			}
			if plat, err = t.Platform(ctx); err != nil {
				return "", err
			}
		}
		if why := e.hostLacks(h, tr, plat); why != "" {
			return h.Name + ": " + why, nil
		}
	}
	return "", nil
}

// rdmaName is transport.RDMA, which benchConfig's parameter hides.
const rdmaName = string(transport.RDMA)

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
func endpoints(insts []Instance, name string) ([]transport.Endpoint, error) {
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
func reachable(client hostRef, insts []Instance, tr string) error {
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
