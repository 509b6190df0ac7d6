//go:build unix

package load

import (
	"fmt"
	"math"
	"testing"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/server/transport"
	"github.com/dpulab/dpulab/steps/kind"
)

func endpointsN(n int) []transport.Endpoint {
	eps := make([]transport.Endpoint, n)
	for i := range eps {
		eps[i] = transport.TCPEndpoint(fmt.Sprintf("10.0.0.1:%d", 7000+i))
	}
	return eps
}

func hostsN(n int) []kind.Host {
	hs := make([]kind.Host, n)
	for i := range hs {
		hs[i] = kind.Host{Name: fmt.Sprintf("client%d", i+1)}
	}
	return hs
}

// TestSplitLoad: every instance gets, summed over the client hosts, the
// connections one client would give it; a total rate and request count
// are split without losing any.
func TestSplitLoad(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		clients, targets, hosts int
		rate                    float64
		requests                int64
		wantShares              int
		wantNote                bool
	}{
		{name: "connections split", clients: 50, targets: 4, hosts: 3, rate: 30000, wantShares: 3},
		{name: "one connection per host", clients: 3, targets: 2, hosts: 3, requests: 1000, wantShares: 3},
		{name: "instances split", clients: 1, targets: 80, hosts: 8, requests: 100001, wantShares: 8},
		{name: "fewer hosts used", clients: 1, targets: 2, hosts: 3, wantShares: 2, wantNote: true},
		{name: "connections over fewer hosts", clients: 2, targets: 1, hosts: 3, rate: 1000, wantShares: 2, wantNote: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := benchwire.DefaultConfig()
			c.Clients, c.Endpoints, c.Rate, c.Requests, c.Seed = tc.clients, endpointsN(tc.targets), tc.rate, tc.requests, 7
			shares, note := SplitLoad(c, hostsN(tc.hosts))
			if len(shares) != tc.wantShares || (note != "") != tc.wantNote {
				t.Fatalf("%d shares, note %q; want %d shares, note %v", len(shares), note, tc.wantShares, tc.wantNote)
			}
			conns := map[string]int{}
			var rate float64
			var reqs int64
			seeds := map[int64]bool{}
			for i, s := range shares {
				if s.Host.Name != hostsN(tc.hosts)[i].Name {
					t.Errorf("share %d on %s", i, s.Host.Name)
				}
				if err := s.Config.Validate(); err != nil {
					t.Errorf("share %d does not validate: %v", i, err)
				}
				for _, ep := range s.Config.Endpoints {
					conns[ep.Address] += s.Config.Clients * s.Config.Threads
				}
				rate += s.Config.Rate
				reqs += s.Config.Requests
				seeds[s.Config.Seed] = true
			}
			for _, ep := range c.Endpoints {
				if conns[ep.Address] != c.Clients*c.Threads {
					t.Errorf("instance %s gets %d connections, want %d (one client's)", ep.Address, conns[ep.Address], c.Clients*c.Threads)
				}
			}
			if math.Abs(rate-tc.rate) > 1e-6 || reqs != tc.requests {
				t.Errorf("shares sum to rate %g, requests %d; want %g, %d", rate, reqs, tc.rate, tc.requests)
			}
			if len(seeds) != len(shares) {
				t.Errorf("seeds %v: each host should send its own key sequence", seeds)
			}
		})
	}
	c := benchwire.DefaultConfig()
	c.Endpoints = endpointsN(2)
	c.Capacity = &benchwire.CapacitySpec{}
	if shares, note := SplitLoad(c, hostsN(3)); len(shares) != 1 || note == "" {
		t.Errorf("a capacity search: %d shares, note %q; want one host, said", len(shares), note)
	}
}
