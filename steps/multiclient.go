package steps

// Several client hosts, one measurement (issue 17). No single client host
// can drive 80 instances on each of several server hosts at the rates the
// whitepaper measured, so a bench or compare step runs `dpulab bench` on
// every host of its role (or clients_hosts: N of them), each with a share
// of the load, started together; their per-second samples are merged into
// one series (multiclient_merge.go) and their clocks checked first
// (multiclient_clock.go). bench.go's runBench is the one path: one client
// host is the case n = 1 (no clock check, no common start, and the merge
// of one host's stream is that stream).

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/labs"
)

// clientShare is one client host's part of a job: the bench it runs.
type clientShare struct {
	Host   hostRef
	Config benchwire.Config
}

// clientHosts are the hosts the load comes from: every host of the step's
// role, or the first clients_hosts of them.
func (e *Engine) clientHosts(st *labs.Step, vars map[string]string) ([]hostRef, error) {
	hs, err := e.hosts.hosts(st.On)
	if err != nil {
		return nil, err
	}
	if len(hs) == 0 {
		return nil, fmt.Errorf("no host plays role %s for the load generator", strings.Join(st.On, ", "))
	}
	if st.Bench == nil {
		return hs[:1], nil
	}
	n, err := st.Bench.ClientsHosts.Int(vars, len(hs))
	if err != nil {
		return nil, fmt.Errorf("step %s: clients_hosts: %w", st.ID, err)
	}
	switch {
	case n < 1:
		return nil, fmt.Errorf("step %s: clients_hosts is %d: give at least 1", st.ID, n)
	case n > len(hs):
		return nil, fmt.Errorf("step %s: clients_hosts is %d, but only %d hosts play role %s in the inventory: add hosts to the role or lower clients_hosts", st.ID, n, len(hs), strings.Join(st.On, ", "))
	}
	return hs[:n], nil
}

// hostNames lists the hosts' names when there are several (nil for one:
// a single client is named by Compare.Client alone, as before).
func hostNames(hs []hostRef) []string {
	if len(hs) < 2 {
		return nil
	}
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Name
	}
	return out
}

// splitLoad divides c among the client hosts so that every server instance
// sees the load shape one client would give it: the connections each
// instance gets (clients per thread) are split among the hosts, every host
// driving every instance; with fewer connections per instance than hosts,
// the instances are split among the hosts instead, each keeping all its
// connections. A total request count or rate goes in the same proportion
// as the connections. When neither splits over every host, fewer hosts are
// used and note says why. A capacity search runs from the first host only:
// its probes adapt their rate to what they measure, which one process does.
func splitLoad(c benchwire.Config, hosts []hostRef) (shares []clientShare, note string) {
	if len(hosts) < 2 {
		return []clientShare{{Host: hosts[0], Config: c}}, ""
	}
	if c.Capacity != nil {
		return []clientShare{{Host: hosts[0], Config: c}}, fmt.Sprintf("a capacity search runs from one client host (%s): its probes set their rate from what they measured", hosts[0].Name)
	}
	n, targets := len(hosts), len(c.Endpoints)
	byConns := true
	switch {
	case c.Clients >= n:
	case targets >= n:
		byConns = false
	case c.Clients >= targets:
		n = c.Clients
	default:
		n, byConns = targets, false
	}
	if n < len(hosts) {
		note = fmt.Sprintf("the load runs from %d of the %d client hosts (%s): %d connections per instance and %d instances do not split over more", n, len(hosts), strings.Join(hostNames(hosts[:n]), ", "), c.Clients, targets)
	}
	weights := make([]float64, n)
	for i := range n {
		s := c
		s.Endpoints = nil
		if byConns {
			s.Clients = c.Clients / n
			if i < c.Clients%n {
				s.Clients++
			}
			s.Endpoints = slices.Clone(c.Endpoints)
			weights[i] = float64(s.Clients) / float64(c.Clients)
		} else {
			for j := i; j < targets; j += n {
				s.Endpoints = append(s.Endpoints, c.Endpoints[j])
			}
			weights[i] = float64(len(s.Endpoints)) / float64(targets)
		}
		if c.Seed != 0 {
			// The same seed on every host would send the same keys in
			// the same order from each.
			s.Seed = c.Seed + int64(i)
		}
		if c.Rate > 0 {
			s.Rate = c.Rate * weights[i]
		}
		shares = append(shares, clientShare{Host: hosts[i], Config: s})
	}
	if c.Requests > 0 {
		left := c.Requests
		for i := range shares {
			r := int64(float64(c.Requests) * weights[i])
			if i == len(shares)-1 {
				r = left
			}
			r = max(1, min(r, left))
			shares[i].Config.Requests = r
			left -= r
		}
	}
	return shares, note
}

// benchCommands are a job's bench commands as a plan shows them: one per
// client host, each with its share.
func (p *loadPlan) benchCommands(j loadJob, at placement) []PlannedCommand {
	hosts := p.clients
	if j.path != nil || len(hosts) == 0 {
		hosts = []hostRef{p.client}
	}
	shares, note := splitLoad(j.planned, hosts)
	var out []PlannedCommand
	if note != "" {
		out = append(out, PlannedCommand{Host: hosts[0].Name, Cmd: "# " + note})
	}
	if len(shares) > 1 {
		out = append(out, PlannedCommand{Host: hosts[0].Name, Cmd: fmt.Sprintf("# %d client hosts share the load, started together after their clocks are checked (date +%%s.%%N over SSH)", len(shares))})
	}
	for _, s := range shares {
		out = append(out, PlannedCommand{Host: s.Host.Name, Cmd: p.e.benchCommand(s.Host, s.Config, benchPassword(j.vars) != "", at)})
	}
	return out
}
