//go:build perf

package steps_test

import (
	"testing"

	"github.com/dpulab/dpulab/tui/tuiperf"
)

// TestPerfTUIAtScale prints, beside TestPerfDeployManyInstances, the
// other half of the engine's cost at scale that issue 17 asks of `go test
// -tags perf -run Perf -v ./steps/`: the TUI's CPU while a bench of 240
// instances on 3 server hosts and 8 client hosts updates the dashboard
// every second (the real app, synthetic seconds; tuiperf.DashboardAtScale,
// also run by ./tui/'s perf tests). Printed, not asserted; goal under 5%
// of a core.
func TestPerfTUIAtScale(t *testing.T) {
	tuiperf.DashboardAtScale(t)
}
