//go:build perf

package tui_test

import (
	"testing"

	"github.com/dpulab/dpulab/tui/tuiperf"
)

// TestPerfDashboardAtScale prints the TUI's CPU with 240 instances and 8
// client hosts updating every second, and what one sample plus redraw
// costs each view (tuiperf.DashboardAtScale). Printed, not asserted.
func TestPerfDashboardAtScale(t *testing.T) {
	tuiperf.DashboardAtScale(t)
}
