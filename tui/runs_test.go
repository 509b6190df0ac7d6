package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/charmbracelet/x/ansi"
	"github.com/dpulab/dpulab/tui/session/sessiontest"
)

// runsRoot is a results root with three runs of the recorded results:
// alpha complete (oldest), beta failed at deploy, gamma killed while
// "running" (newest, its title hostile).
func runsRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	t0 := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	for i, r := range []struct {
		lab    string
		status results.RunStatus
		failed string
		title  string
	}{
		{"alpha", results.RunComplete, "", "Alpha"},
		{"beta", results.RunFailed, "deploy", "Beta"},
		{"gamma", results.RunRunning, "", "Gamma" + hostileRaw},
	} {
		res := loadRecorded(t)
		res.Lab, res.Status, res.FailedStep, res.Title = r.lab, r.status, r.failed, r.title
		res.Started = t0.Add(time.Duration(i) * time.Hour)
		dir := filepath.Join(root, r.lab, "run"+r.lab)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := results.WriteResults(dir, res); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestResultsBrowser: from the picker's key, the browser lists three runs
// newest first with their status; enter opens the compare view, r the
// replay (labelled as one), o the report; nothing hostile reaches the
// terminal.
func TestResultsBrowser(t *testing.T) {
	app := testApp(Config{Catalog: &sessiontest.Catalog{Fakes: []*sessiontest.Fake{quickstartFake()}}, ResultsRoot: runsRoot(t)})
	km := app.KeyMap
	tm := start(t, app, 140, 40)
	s := &streamTap{tm: tm}
	s.waitFor(t, "pick a lab", km.Runs.Help().Desc)
	press(tm, km.Runs)
	s.waitFor(t, "past runs", "gamma · 2026-11-30 10:00 UTC", "killed (never finished)", "failed at deploy", "alpha · 2026-11-30 08:00 UTC")
	plain := ansi.Strip(s.all.String())
	g, b, a := strings.Index(plain, "gamma · "), strings.Index(plain, "beta · "), strings.Index(plain, "alpha · ")
	if !(g < b && b < a) {
		t.Errorf("rows not newest first: gamma at %d, beta at %d, alpha at %d", g, b, a)
	}
	press(tm, km.Enter)
	s.waitFor(t, "1 table")
	press(tm, km.Back, km.Replay)
	s.waitFor(t, "REPLAY of a run recorded on 2026-11-30 10:00 UTC", "esc back")
	press(tm, km.Back, km.Report)
	s.waitFor(t, "NOT FINISHED")
	press(tm, km.Back, km.Back)
	s.waitFor(t, "pick a lab")
	final := finish(t, tm)
	if final.State() != StatePicker {
		t.Errorf("state %v after esc from the browser, want the picker", final.State())
	}
	assertTerminalSafe(t, s.all.Bytes(), false)
}
