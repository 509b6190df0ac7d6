package dashboard

import (
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/keymap/keymaptest"
)

// atScale is one second of 3 server hosts × perHost instances and clients
// client hosts: instance server2:7017 has three times the others' p99,
// server3:7005 twice their TPS, and client host busy (if ≥ 0) is at
// busyPct.
func atScale(perHost, clients, busy int, busyPct float64) steps.Sample {
	s := sample("tcp", 0)
	for h := 1; h <= 3; h++ {
		for k := range perHost {
			ts := steps.TargetSecond{Target: fmt.Sprintf("10.0.0.%d:%d", h, 7000+k), Host: fmt.Sprintf("server%d", h), OpsPerSec: 1000, P50Ms: 0.2, P99Ms: 0.5}
			if h == 2 && k == 17 {
				ts.P99Ms = 1.5
			}
			if h == 3 && k == 5 {
				ts.OpsPerSec = 2000
			}
			s.Point.OpsPerSec += ts.OpsPerSec
			s.Targets = append(s.Targets, ts)
		}
	}
	for c := range clients {
		pct := 50.0
		if c == busy {
			pct = busyPct
		}
		s.Clients = append(s.Clients, steps.HostSecond{Host: fmt.Sprintf("client%d", c+1), OpsPerSec: s.Point.OpsPerSec / float64(clients), P99Ms: 0.6, BusyPct: &pct})
	}
	return s
}

// fits checks that a view is exactly w×h at most.
func fits(t *testing.T, v string, w, h int) {
	t.Helper()
	lines := strings.Split(v, "\n")
	if len(lines) > h {
		t.Errorf("%d lines, want at most %d", len(lines), h)
	}
	for _, l := range lines {
		if lw := ansi.StringWidth(l); lw > w {
			t.Errorf("line %d wide, want at most %d: %q", lw, w, l)
		}
	}
}

func press(m *Model, keys ...tea.KeyMsg) {
	for _, k := range keys {
		m.Update(k)
	}
}

// TestClientHostSaturatedIsFlagged: a client host at benchwire.ClientBoundPct
// CPU or more is named client-bound on the charts and in the hosts view;
// one below is not.
func TestClientHostSaturatedIsFlagged(t *testing.T) {
	m := New(common.NewCommon(true, 120, 40))
	m.AddSample(atScale(80, 8, 5, benchwire.ClientBoundPct))
	v := m.View()
	fits(t, v, 120, 40)
	if !strings.Contains(v, "CLIENT-BOUND: client6 90%") {
		t.Errorf("charts view does not flag client6 at 90%%:\n%s", v)
	}
	if !strings.Contains(v, "slowest of 240 instances: 10.0.0.2:7017 p99 1.500 ms") {
		t.Errorf("charts view does not name the slowest instance:\n%s", v)
	}
	press(m, keymaptest.Press(m.KeyMap.Tab2))
	if m.CurrentView() != ViewHosts {
		t.Fatalf("2 shows view %d, want the hosts", m.CurrentView())
	}
	v = m.View()
	fits(t, v, 120, 40)
	for _, want := range []string{"Client hosts (8)", "Server hosts (3)", "server2", "80", "10.0.0.2:7017 1.500"} {
		if !strings.Contains(v, want) {
			t.Errorf("hosts view lacks %q:\n%s", want, v)
		}
	}
	var flagged []string
	for _, l := range strings.Split(v, "\n") {
		if strings.Contains(l, "CLIENT-BOUND") {
			flagged = append(flagged, strings.Fields(l)[0])
		}
	}
	if len(flagged) != 1 || flagged[0] != "client6" {
		t.Errorf("flagged client hosts %v, want [client6]:\n%s", flagged, v)
	}

	// Below the bound, nobody is flagged; the peak is remembered.
	m.AddSample(atScale(80, 8, 5, benchwire.ClientBoundPct-1))
	v = m.View()
	if strings.Contains(v, "CLIENT-BOUND") || !strings.Contains(v, "was client-bound 1 s") {
		t.Errorf("at %.0f%% the host must not be flagged, but its client-bound second is said:\n%s", benchwire.ClientBoundPct-1, v)
	}
}

// TestInstancesHottestFirst: the instances view lists the slowest
// instance first and marks it hot; →, to TPS, puts the busiest first; the
// view scrolls within its rows and stays within the screen.
func TestInstancesHottestFirst(t *testing.T) {
	m := New(common.NewCommon(true, 100, 30))
	m.AddSample(atScale(80, 8, -1, 0))
	press(m, keymaptest.Press(m.KeyMap.Tab3))
	v := m.View()
	fits(t, v, 100, 30)
	rows := tableRows(v)
	if len(rows) == 0 || !strings.Contains(rows[0], "10.0.0.2:7017") || !strings.Contains(rows[0], "hot: p99 3.0× median") {
		t.Fatalf("first row is not the slowest instance marked hot:\n%s", v)
	}
	if strings.Contains(strings.Join(rows[1:], "\n"), "hot: p99") {
		t.Errorf("only one instance is slow, more are marked:\n%s", v)
	}
	press(m, keymaptest.Press(m.KeyMap.Right))
	rows = tableRows(m.View())
	if !strings.Contains(rows[0], "10.0.0.3:7005") || !strings.Contains(rows[0], "hot: TPS 2.0× median") {
		t.Fatalf("ordered by TPS, the first row is not the busiest instance:\n%s", m.View())
	}
	press(m, keymaptest.Press(m.KeyMap.Bottom))
	v = m.View()
	fits(t, v, 100, 30)
	if rows = tableRows(v); !strings.HasPrefix(strings.TrimSpace(rows[len(rows)-1]), "240 ") {
		t.Errorf("scrolled to the bottom, the last row is not the 240th:\n%s", v)
	}
	// A new run starts afresh: its instances are not the last run's.
	s := atScale(2, 0, -1, 0)
	s.Run = 2
	m.AddSample(s)
	if n := len(tableRows(m.View())); n != 6 {
		t.Errorf("after a new run with 6 instances the view has %d rows:\n%s", n, m.View())
	}
}

// TestNoDrillDataChangesNothing: a bench without per-host or
// per-instance figures draws the charts exactly as before, and the
// drill-down views say why they are empty.
func TestNoDrillDataChangesNothing(t *testing.T) {
	m := New(common.NewCommon(true, 100, 28))
	m.AddSample(sample("tcp", 100))
	if v := m.View(); strings.Contains(v, "instances") || strings.Contains(v, "CLIENT-BOUND") {
		t.Errorf("charts view without drill-down data mentions it:\n%s", v)
	}
	if len(m.ShortHelp()) != 0 {
		t.Error("drill-down keys offered without drill-down data")
	}
	press(m, keymaptest.Press(m.KeyMap.Tab3))
	if v := m.View(); !strings.Contains(v, "No per-instance figures") {
		t.Errorf("instances view without data:\n%s", v)
	}
	press(m, keymaptest.Press(m.KeyMap.Tab2))
	if v := m.View(); !strings.Contains(v, "One client host ran the load") {
		t.Errorf("hosts view without data:\n%s", v)
	}
}

// TestDrillNamesAreFiltered: host and target names reach the terminal
// without escape sequences.
func TestDrillNamesAreFiltered(t *testing.T) {
	m := New(common.NewCommon(true, 100, 28))
	s := sample("tcp", 1)
	s.Targets = []steps.TargetSecond{{Target: "evil\x1b]0;pwned\x07:1", Host: "h\x1b[2J", OpsPerSec: 1, P99Ms: 1}}
	busy := 99.0
	s.Clients = []steps.HostSecond{{Host: "c\x1b[31m", BusyPct: &busy}}
	m.AddSample(s)
	for _, v := range []View{ViewCharts, ViewHosts, ViewInstances} {
		m.SetView(v)
		if out := m.View(); strings.Contains(out, "\x1b]0;") || strings.Contains(out, "\x1b[2J") || strings.Contains(out, "\x07") {
			t.Errorf("view %d lets a name's escape sequence through: %q", v, out)
		}
	}
}

// tableRows are the numbered rows of the instances view.
func tableRows(v string) []string {
	var out []string
	for _, l := range strings.Split(ansi.Strip(v), "\n") {
		f := strings.Fields(l)
		if len(f) > 1 && strings.Contains(f[1], ":") {
			if _, err := fmt.Sscanf(f[0], "%d", new(int)); err == nil {
				out = append(out, l)
			}
		}
	}
	return out
}
