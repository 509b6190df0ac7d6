package results

import (
	"strings"
	"testing"
)

// A saturated client host is called client-bound only when it ran the load
// alone; one that also served is called a saturated shared host, with the
// advice to move the client role.
func TestClientBoundWordingOnASharedHost(t *testing.T) {
	run := func() RunResult {
		return RunResult{Run: 1, OpsPerSec: 1000, ClientBound: true, ClientHostBusyPct: fp(93)}
	}
	compare := func(serverHost string) *Compare {
		return &Compare{Step: "bench", Client: "lab", Variants: []VariantResult{
			{Label: "baseline", Hosts: []string{serverHost}, Points: []SweepPoint{{Runs: []RunResult{run()}}}},
		}}
	}

	var b strings.Builder
	renderCompare(&b, compare("lab"))
	md := b.String()
	if !strings.Contains(md, "> **SATURATED SHARED HOST: the load generator ran on a host that also served (lab)") || !strings.Contains(md, "> - **baseline**: run 1: host 93% busy") {
		t.Errorf("client on the server host:\n%s", md)
	}
	if strings.Contains(md, "CLIENT-BOUND") {
		t.Errorf("a host that also served is called client-bound:\n%s", md)
	}

	b.Reset()
	renderCompare(&b, compare("server1"))
	md = b.String()
	if !strings.Contains(md, "> **CLIENT-BOUND: a client host was at least 90% busy") || !strings.Contains(md, "> - **baseline**: run 1: busiest client host 93% busy") || strings.Contains(md, "SHARED") {
		t.Errorf("client on a host of its own:\n%s", md)
	}

	c := &Compare{Clients: []string{"c1", "c2"}}
	if got := c.SharedClientHosts(&VariantResult{Hosts: []string{"s1", "c2"}}); len(got) != 1 || got[0] != "c2" {
		t.Errorf("SharedClientHosts = %v, want [c2]", got)
	}
}
