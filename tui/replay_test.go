package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	"github.com/charmbracelet/x/ansi"
	"github.com/dpulab/dpulab/labs/tco"
	"github.com/dpulab/dpulab/tui/components/compare"
	"github.com/dpulab/dpulab/tui/pages/replay"
)

func TestDashboardRecorded(t *testing.T) {
	res := loadRecorded(t)
	app := testApp(Config{Replay: res, ReplayOptions: replayOpts()})
	tm := start(t, app, 100, 30)
	waitFor(t, tm, "REPLAY of a run recorded on 2026-12-02")
	// Step through the first variant's recorded seconds by hand.
	for range 12 {
		press(tm, km.Right)
	}
	waitFor(t, tm, "second 12/")
	app = finish(t, tm)
	d := app.Replay().Dashboard()
	if d.Samples() == 0 || app.Replay().Pos() != 12 {
		t.Fatalf("dashboard holds %d samples at position %d, want samples at 12", d.Samples(), app.Replay().Pos())
	}
	requireGolden(t, app.View())
}

func TestCompareView(t *testing.T) {
	res := loadRecorded(t)
	tabs := []struct {
		key  string
		bind key.Binding
		tab  compare.Tab
		want []string
	}{
		{"1", km.Tab1, compare.TabTable, []string{"TCP loopback (baseline)", "Unix socket", "~ +9.3%", "Published reference figures", "seed 002"}},
		{"3", km.Tab3, compare.TabSweep, []string{"mean TPS vs clients", "x: clients = 1, 2, 3, 4", "• Unix socket"}},
		{"4", km.Tab4, compare.TabTCO, []string{"servers_saved_pct", "total_savings_usd"}},
	}
	for _, tc := range tabs {
		t.Run(tc.key, func(t *testing.T) {
			app := testApp(Config{Replay: res, ReplayOptions: replayOpts()})
			tm := start(t, app, 100, 30)
			waitFor(t, tm, "REPLAY")
			press(tm, km.SwitchPane)
			press(tm, tc.bind)
			waitFor(t, tm, tc.want[0])
			app = finish(t, tm)
			if !app.Replay().ShowingCompare() || app.Replay().Compare().Tab() != tc.tab {
				t.Fatalf("compare shown=%v tab=%v, want tab %v", app.Replay().ShowingCompare(), app.Replay().Compare().Tab(), tc.tab)
			}
			v := ansi.Strip(app.View())
			for _, w := range tc.want {
				if !strings.Contains(v, w) {
					t.Errorf("view lacks %q", w)
				}
			}
			requireGolden(t, app.View())
		})
	}
}

func TestTCOEditRecomputes(t *testing.T) {
	res := loadRecorded(t)
	app := testApp(Config{Replay: res, ReplayOptions: replayOpts()})
	tm := start(t, app, 100, 30)
	waitFor(t, tm, "REPLAY")
	press(tm, km.SwitchPane)
	press(tm, km.Tab4)
	waitFor(t, tm, "total_savings_usd")
	// servers (first input) from 10000 to 20000 doubles the savings.
	press(tm, km.Enter)
	press(tm, textinput.DefaultKeyMap.DeleteBeforeCursor)
	tm.Type("20000")
	press(tm, km.Enter)
	waitFor(t, tm, "$19.06M")
	finish(t, tm)
}

// replayOpts never advances on its own: tests step with →.
func replayOpts() replay.Options {
	return replay.Options{Step: time.Hour, TCO: tco.Compute}
}
