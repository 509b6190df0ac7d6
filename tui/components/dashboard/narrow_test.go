package dashboard

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/tui/common"
)

// TestFitsAt80Columns: at 80 columns the big numbers and the line on
// hosts and instances take their shorter forms rather than being cut
// with "…" ("CPU 100% · net…", "(keys: 2 hosts view, 3 inst…").
func TestFitsAt80Columns(t *testing.T) {
	m := New(common.NewCommon(true, 80, 24))
	m.SetSize(80, 24)
	s := atScale(80, 8, 5, benchwire.ClientBoundPct-20)
	cpu, net := 100.0, 9.47
	s.Point.ServerCPU, s.Point.NetworkCPU = &cpu, &net
	m.AddSample(s)
	v := ansi.Strip(m.View())
	lines := strings.Split(v, "\n")
	for _, l := range lines[:7] {
		if strings.Contains(l, "…") {
			t.Errorf("cut at 80 columns: %q", l)
		}
	}
	for _, want := range []string{"CPU 100% net 9%", "slowest of 240", "(keys: 2 hosts, 3 instances)"} {
		if !strings.Contains(v, want) {
			t.Errorf("no %q at 80 columns:\n%s", want, v)
		}
	}
	// Where there is room, the whole form.
	m.SetSize(120, 40)
	if v := ansi.Strip(m.View()); !strings.Contains(v, "CPU 100% · net 9.47%") || !strings.Contains(v, "slowest of 240 instances") {
		t.Errorf("at 120 columns the whole forms are not shown:\n%s", v)
	}
}
