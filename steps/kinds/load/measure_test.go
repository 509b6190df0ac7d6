package load

import (
	"strings"
	"testing"

	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/results"
)

// TestRunSummarySharedHost: a saturated client host that also served the
// load is named a saturated shared host, not client-bound; from several
// client hosts, only a bound host that served counts.
func TestRunSummarySharedHost(t *testing.T) {
	busy := 97.0
	r := results.RunResult{Run: 1, OpsPerSec: 1000, ClientBound: true, ClientHostBusyPct: &busy}
	alone := BenchJob{Label: "local", Client: kind.Host{Name: "local"}, Servers: []kind.Host{{Name: "local"}}}
	alone.Config.Runs = 1
	if s := RunSummary(alone, r); !strings.Contains(s, "client host CPU 97%") || !strings.Contains(s, "SATURATED SHARED HOST") || strings.Contains(s, "CLIENT-BOUND") {
		t.Errorf("one host serving and loading: %q", s)
	}
	apart := BenchJob{Label: "apart", Client: kind.Host{Name: "c1"}, Servers: []kind.Host{{Name: "s1"}}}
	apart.Config.Runs = 1
	if s := RunSummary(apart, r); !strings.Contains(s, "CLIENT-BOUND") || strings.Contains(s, "SHARED") {
		t.Errorf("a client host of its own: %q", s)
	}
	// c1 serves too but is not the saturated one: c2 is, and serves nothing.
	multi := BenchJob{Label: "multi", Client: kind.Host{Name: "c1"}, Servers: []kind.Host{{Name: "c1"}, {Name: "s1"}}}
	multi.Config.Runs = 1
	r.Clients = []results.ClientSeries{{Host: "c1"}, {Host: "c2", ClientBound: true}}
	if s := RunSummary(multi, r); !strings.Contains(s, "CLIENT-BOUND") || strings.Contains(s, "SHARED") {
		t.Errorf("a saturated client host that serves nothing: %q", s)
	}
	r.Clients[0].ClientBound = true
	if s := RunSummary(multi, r); !strings.Contains(s, "SATURATED SHARED HOST") {
		t.Errorf("a saturated client host that serves too: %q", s)
	}
}
