package lab

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/dpulab/dpulab/tui/session/sessiontest"
)

// TestDashboardHintGoneWhileShown: the status line's "d shows the live
// dashboard" is not said while the dashboard is the view shown.
func TestDashboardHintGoneWhileShown(t *testing.T) {
	f := &sessiontest.Fake{Script: script(0, "read", "bench")}
	f.LabInfo.ID = "l"
	p := newPage(t, f)
	p.m.status = dashboardHint
	if v := ansi.Strip(p.m.View()); !strings.Contains(v, dashboardHint) {
		t.Errorf("the steps view does not say %q:\n%s", dashboardHint, v)
	}
	p.m.rc.View = ViewDashboard
	if v := ansi.Strip(p.m.View()); strings.Contains(v, dashboardHint) {
		t.Errorf("the dashboard is shown and the status line still says %q:\n%s", dashboardHint, v)
	}
}
