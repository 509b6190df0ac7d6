package load

// Several client hosts, one measurement (issue 17). No single client host
// can drive 80 instances on each of several server hosts at the rates the
// whitepaper measured, so a bench or compare step runs `dpulab bench` on
// every host of its role (or clients_hosts: N of them), each with a share
// of the load (SplitLoad), started together (CommonStart); their
// per-second samples are merged into one series (merge.go) and their
// clocks checked first (clock.go). RunBench (bench.go) is the one path:
// one client host is the case n = 1 (no clock check, no common start, and
// the merge of one host's stream is that stream).

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/steps/kind"
)

// ClientShare is one client host's part of a job: the bench it runs.
type ClientShare struct {
	Host   kind.Host
	Config benchwire.Config
}

// HostNames lists the hosts' names when there are several (nil for one:
// a single client is named by Compare.Client alone, as before).
func HostNames(hs []kind.Host) []string {
	if len(hs) < 2 {
		return nil
	}
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Name
	}
	return out
}

// SplitLoad divides c among the client hosts so that every server instance
// sees the load shape one client would give it: the connections each
// instance gets (clients per thread) are split among the hosts, every host
// driving every instance; with fewer connections per instance than hosts,
// the instances are split among the hosts instead, each keeping all its
// connections. A total request count or rate goes in the same proportion
// as the connections. When neither splits over every host, fewer hosts are
// used and note says why. A capacity search runs from the first host only:
// its probes adapt their rate to what they measure, which one process does.
func SplitLoad(c benchwire.Config, hosts []kind.Host) (shares []ClientShare, note string) {
	if len(hosts) < 2 {
		return []ClientShare{{Host: hosts[0], Config: c}}, ""
	}
	if c.Capacity != nil {
		return []ClientShare{{Host: hosts[0], Config: c}}, fmt.Sprintf("a capacity search runs from one client host (%s): its probes set their rate from what they measured", hosts[0].Name)
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
		note = fmt.Sprintf("the load runs from %d of the %d client hosts (%s): %d connections per instance and %d instances do not split over more", n, len(hosts), strings.Join(HostNames(hosts[:n]), ", "), c.Clients, targets)
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
		shares = append(shares, ClientShare{Host: hosts[i], Config: s})
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
