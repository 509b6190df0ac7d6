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
	p.m.bar.text = dashboardHint
	if v := ansi.Strip(p.m.View()); !strings.Contains(v, dashboardHint) {
		t.Errorf("the steps view does not say %q:\n%s", dashboardHint, v)
	}
	p.m.rc.View = ViewDashboard
	if v := ansi.Strip(p.m.View()); strings.Contains(v, dashboardHint) {
		t.Errorf("the dashboard is shown and the status line still says %q:\n%s", dashboardHint, v)
	}
}

// TestNoStepsNoPanic: a lab with no steps (lint refuses one; a session
// fake can hold one) draws "this lab has no steps", not a panic.
func TestNoStepsNoPanic(t *testing.T) {
	f := &sessiontest.Fake{}
	f.LabInfo.ID = "l"
	p := newPage(t, f)
	v := ansi.Strip(p.m.View())
	if !strings.Contains(v, "this lab has no steps") {
		t.Errorf("a lab without steps:\n%s", v)
	}
	for _, k := range []string{"enter", "j", "k", "tab", "y", "w", "a", "d", "c", "v", "s", "?"} {
		p.press(k)
		_ = p.m.View()
	}
}
