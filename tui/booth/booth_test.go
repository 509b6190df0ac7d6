package booth

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/components/headline/headlinetest"
	"github.com/dpulab/dpulab/tui/components/prompt"
	"github.com/dpulab/dpulab/tui/keymap/keymaptest"
	"github.com/dpulab/dpulab/tui/pages/lab"
	"github.com/dpulab/dpulab/tui/session"
	"github.com/dpulab/dpulab/tui/session/sessiontest"
)

// driver plays the part of bubbletea for a booth over a scripted lab, with
// a clock the test sets: booth mode's timing is tested without waiting.
type driver struct {
	t        *testing.T
	f        *sessiontest.Fake
	b        *Model
	msgs     chan tea.Msg
	base     time.Time
	restarts int
	// prunes counts the booth's background prunes that have reported: a
	// test whose loop wrote results waits for its prune, which writes into
	// the test's temporary folder.
	prunes int
}

func newDriver(t *testing.T, f *sessiontest.Fake, cfg Config) *driver {
	t.Helper()
	d := &driver{t: t, f: f, msgs: make(chan tea.Msg, 4096), base: time.Now()}
	cat := &sessiontest.Catalog{Fakes: []*sessiontest.Fake{f}}
	sess, err := cat.Open(f.LabInfo.ID, session.Options{Restart: true,
		Emit: func(ev steps.Event) { d.msgs <- session.EventsMsg{ev} }})
	if err != nil {
		t.Fatal(err)
	}
	c := common.NewCommon(true, 100, 30)
	c.NoAnimation = true
	d.b = New(c, lab.New(c, sess, lab.Options{Unattended: true}), cfg)
	d.run(d.b.Init())
	// A results folder the loop wrote is pruned in the background, which
	// writes into the test's temporary folder: let every prune report
	// before the folder is removed (this cleanup runs before TempDir's).
	t.Cleanup(func() {
		guard := time.After(20 * time.Second)
		for {
			if _, finished := f.Counts(); d.prunes >= finished {
				return
			}
			select {
			case msg := <-d.msgs:
				switch msg := msg.(type) {
				case PrunedMsg:
					d.prunes++
				case tea.BatchMsg:
					for _, c := range msg {
						d.run(c)
					}
				}
			case <-guard:
				return
			}
		}
	})
	return d
}

// at sends the clock tick of hour h after the start: every hold and
// countdown in these tests is shorter than an hour.
func (d *driver) at(h int) { d.send(lab.ClockMsg(d.base.Add(time.Duration(h) * time.Hour))) }

func (d *driver) send(msg tea.Msg) {
	_, cmd := d.b.Update(msg)
	d.run(cmd)
}

func (d *driver) run(cmd tea.Cmd) {
	if cmd != nil {
		go func() { d.msgs <- cmd() }()
	}
}

// until hands the booth what its commands and the session send until cond
// holds. Animations (spinner, cursor) are dropped so they do not loop.
func (d *driver) until(what string, cond func() bool) {
	d.t.Helper()
	guard := time.After(20 * time.Second) // a hang guard, not a timing check
	for !cond() {
		select {
		case msg := <-d.msgs:
			switch msg := msg.(type) {
			case tea.BatchMsg:
				for _, c := range msg {
					d.run(c)
				}
			case lab.RestartMsg:
				d.restarts++
			case PrunedMsg:
				d.prunes++
				d.send(msg)
			case session.EventsMsg, lab.StepDoneMsg, lab.FinishedMsg, lab.CleanupDoneMsg, prompt.AnsweredMsg:
				d.send(msg)
			}
		case <-guard:
			d.t.Fatalf("still waiting for %s; status: %s", what, d.status())
		}
	}
}

func (d *driver) status() string { return ansi.Strip(d.b.status()) }

func (d *driver) idle() bool { return d.b.Page().Running() < 0 && d.b.Page().Busy() == "" }

func twoSteps(t *testing.T) *sessiontest.Fake {
	step := func(id string) sessiontest.Step {
		return sessiontest.Step{Info: steps.StepInfo{ID: id, Title: id, Kind: "run"}, Final: results.Done}
	}
	return &sessiontest.Fake{
		LabInfo:     session.LabInfo{ID: "two", Title: "Two steps", ResumeAt: -1},
		Script:      []sessiontest.Step{step("intro"), step("deploy")},
		ResultsRoot: t.TempDir(),
	}
}

// TestLoop: a countdown before each step, the results held, then cleanup
// and a restart; nothing starts before its time.
func TestLoop(t *testing.T) {
	f := twoSteps(t)
	d := newDriver(t, f, Config{StepDelay: time.Minute, CompareHold: time.Minute})
	if s := d.status(); !strings.Contains(s, `next: step 1 "intro" in 1m0s`) {
		t.Fatalf("status %q: want the first countdown", s)
	}
	d.send(lab.ClockMsg(d.base.Add(30 * time.Second)))
	if d.b.Page().Running() >= 0 {
		t.Fatal("a step started before its countdown ended")
	}
	d.at(1)
	d.until("step 1 to end", func() bool { return d.idle() && d.b.phase == phaseCountdown })
	if s := d.status(); !strings.Contains(s, `next: step 2 "deploy"`) {
		t.Fatalf("status %q: want the countdown to step 2", s)
	}
	d.at(2)
	d.until("the results", func() bool { return d.b.phase == phaseCompare && d.idle() })
	if s := d.status(); !strings.Contains(s, "results · starting over in") {
		t.Fatalf("status %q", s)
	}
	d.at(3)
	d.until("the restart", func() bool { return d.restarts == 1 })
	cleaned, finished := f.Counts()
	if !slices.Equal(f.Ran, []int{0, 1}) || cleaned != 1 || finished != 1 {
		t.Fatalf("ran %v, cleanup %d, finish %d: want 0 1, then results and one cleanup", f.Ran, cleaned, finished)
	}
}

// TestAnyKeyPauses: a key stops the clock (nothing starts however late
// it gets); another key resumes with the time that was left.
func TestAnyKeyPauses(t *testing.T) {
	f := twoSteps(t)
	d := newDriver(t, f, Config{StepDelay: time.Minute})
	d.send(keymaptest.Msg("x"))
	if !d.b.Paused() || !strings.Contains(d.status(), "PAUSED") {
		t.Fatalf("paused=%v status %q after a key", d.b.Paused(), d.status())
	}
	d.at(1)
	if d.b.Page().Running() >= 0 {
		t.Fatal("a paused booth started a step")
	}
	d.send(keymaptest.Press(d.b.KeyMap.Pause))
	if d.b.Paused() {
		t.Fatal("a second key must resume")
	}
	if s := d.status(); !strings.Contains(s, "in 1m0s") {
		t.Fatalf("status %q: the countdown must resume where it stopped", s)
	}
	d.at(2)
	d.until("step 1", func() bool { return d.idle() && d.b.Page().Steps()[0].Status == results.Done })
}

// TestConfirmOnlyWhatTheLabAllows: a confirmation the lab lists is
// answered yes; any other is refused after the timeout, the reason shown,
// and the loop ends: cleanup, then its record written (saying how it
// ended, so that its folder is marked and pruned like every booth
// folder), no results held, the restart.
func TestConfirmOnlyWhatTheLabAllows(t *testing.T) {
	for _, tc := range []struct {
		name, want, status string
		allow              []string
	}{
		{"listed", "yes", `confirmed step "deploy"`, []string{"deploy"}},
		{"not listed", "no", `refused to confirm step "deploy"`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := twoSteps(t)
			f.Script[0].Emit = []steps.Event{steps.Prompt{Step: "deploy", Type: steps.PromptConfirm, Message: "Deploy?"}}
			d := newDriver(t, f, Config{StepDelay: time.Minute, PromptTimeout: time.Minute, AutoConfirm: tc.allow})
			d.at(1)
			d.until("the dialog", func() bool { return d.b.Page().Prompt() != nil })
			d.at(2)
			d.until("step 1 to end and its dialog to close", func() bool { return d.idle() && d.b.Page().Prompt() == nil })
			answers := f.AnswersSeen(1, 10*time.Second)
			if len(answers) != 1 || answers[0].Choice != tc.want {
				t.Fatalf("answers %+v, want %q", answers, tc.want)
			}
			if s := ansi.Strip(d.b.View()); !strings.Contains(s, tc.status) {
				t.Fatalf("screen lacks %q:\n%s", tc.status, s)
			}
			d.at(3)
			if tc.want == "yes" {
				d.until("step 2", func() bool { return d.idle() && d.b.phase == phaseCompare })
				return
			}
			d.until("the restart", func() bool { return d.restarts == 1 })
			if cleaned, finished := f.Counts(); cleaned != 1 || finished != 1 {
				t.Fatalf("cleanup %d, finish %d: a refusal ends the loop with one cleanup, then its record", cleaned, finished)
			}
			if d.b.phase == phaseCompare {
				t.Fatal("a refused loop's results must not be held as if it had completed")
			}
		})
	}
}

func TestPruneResults(t *testing.T) {
	root := t.TempDir()
	mk := func(name string, booth bool, at time.Time) string {
		d := filepath.Join(root, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if booth {
			os.WriteFile(filepath.Join(d, Marker), []byte(at.UTC().Format(time.RFC3339Nano)), 0o644)
		}
		return d
	}
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for i := 0; i < 5; i++ {
		mk(fmt.Sprintf("b%d", i), true, t0.Add(time.Duration(i)*time.Minute))
	}
	mk("person", false, t0)
	os.Symlink(filepath.Join(root, "b0"), filepath.Join(root, "link"))
	os.WriteFile(filepath.Join(root, "notes.txt"), []byte("x"), 0o644)
	newest := mk("new", false, t0) // just written: no marker yet
	removed, err := PruneResults(newest, 3, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(removed)
	want := []string{filepath.Join(root, "b0"), filepath.Join(root, "b1"), filepath.Join(root, "b2")}
	if fmt.Sprint(removed) != fmt.Sprint(want) {
		t.Fatalf("removed %v, want %v (keep 3: the new folder and b3, b4)", removed, want)
	}
	for _, keep := range []string{"b3", "b4", "new", "person", "link", "notes.txt"} {
		if _, err := os.Lstat(filepath.Join(root, keep)); err != nil {
			t.Errorf("%s should be kept: %v", keep, err)
		}
	}
	if _, err := os.Stat(filepath.Join(newest, Marker)); err != nil {
		t.Errorf("the new folder was not marked as the booth's: %v", err)
	}
}

// TestMarkerIsTheBrowsers: the results browser (session.ScanRuns) knows
// booth folders by this file's name.
func TestMarkerIsTheBrowsers(t *testing.T) {
	if Marker != session.BoothMarker {
		t.Fatalf("booth.Marker %q, session.BoothMarker %q", Marker, session.BoothMarker)
	}
}

// benchLab is twoSteps whose second step is a bench that draws the live
// dashboard, over the headline's fixture results.
func benchLab(t *testing.T) *sessiontest.Fake {
	f := twoSteps(t)
	f.Script[1].Info.Kind = "bench"
	for i := range 3 {
		f.Script[1].Emit = append(f.Script[1].Emit, steps.Sample{Step: "deploy", Variant: "full offload", Run: 1,
			Point: results.Point{T: float64(i + 1), OpsPerSec: 1000 * float64(i+1)}})
	}
	f.Res = headlinetest.Fixture()
	return f
}

// TestCycle: while the results are held, the screens come one after
// another every Cycle (headline, live dashboard, compare table, charts,
// headline again), the indicator names the next and when; a visitor's key
// stops the cycle with the rest of the loop, and it goes on with the time
// that was left.
func TestCycle(t *testing.T) {
	f := benchLab(t)
	d := newDriver(t, f, Config{StepDelay: time.Minute, CompareHold: 24 * time.Hour, Cycle: time.Minute})
	if _, ok := d.b.Screen(); ok {
		t.Fatal("no screen of the cycle before the results")
	}
	d.at(1)
	d.until("step 1", func() bool { return d.idle() && d.b.phase == phaseCountdown })
	d.at(2)
	d.until("the results", func() bool { return d.b.phase == phaseCompare && d.idle() })
	start := d.base.Add(2 * time.Hour)
	at := func(min, sec int) {
		d.send(lab.ClockMsg(start.Add(time.Duration(min)*time.Minute + time.Duration(sec)*time.Second)))
	}
	want := func(s Screen, onScreen ...string) {
		t.Helper()
		got, ok := d.b.Screen()
		if !ok || got != s {
			t.Fatalf("screen %v (shown %v), want %v", got, ok, s)
		}
		v := ansi.Strip(d.b.View())
		for _, w := range append(onScreen, "["+s.String()+"]") {
			if !strings.Contains(v, w) {
				t.Fatalf("the %v screen lacks %q:\n%s", s, w, v)
			}
		}
		for _, hint := range []string{"↑/↓", "1 table", "r retry", "q quit", "enter run"} {
			if strings.Contains(v, hint) {
				t.Fatalf("the %v screen names a key (%q):\n%s", s, hint, v)
			}
		}
	}
	want(ScreenHeadline, "next: live dashboard in 1m0s", "EMULATION:", "TPS", "~ no significant difference")
	at(0, 30)
	want(ScreenHeadline, "next: live dashboard in 30s")
	at(1, 0)
	want(ScreenDashboard, "Live bench", "next: compare table in 1m0s")
	at(2, 0)
	// What the figures are, on the booth's own compare title too.
	want(ScreenTable, "EMULATION Compare:", "partial offload", "next: charts in 1m0s")
	at(3, 0)
	want(ScreenCharts, "EMULATION Compare:", "next: headline in 1m0s")
	at(4, 0)
	want(ScreenHeadline, "next: live dashboard")
	at(4, 20)
	d.send(keymaptest.Msg("x")) // a visitor's key pauses
	at(30, 0)
	want(ScreenHeadline, "next: live dashboard (paused)")
	d.send(keymaptest.Msg("x"))
	at(30, 39)
	want(ScreenHeadline, "next: live dashboard in 1s")
	at(30, 40)
	want(ScreenDashboard)
}

// TestCycleWithoutDashboard: results whose steps drew no dashboard cycle
// through the other screens.
func TestCycleWithoutDashboard(t *testing.T) {
	f := twoSteps(t)
	f.Res = headlinetest.Fixture()
	d := newDriver(t, f, Config{StepDelay: time.Minute, CompareHold: 24 * time.Hour, Cycle: time.Minute})
	d.at(1)
	d.until("step 1", func() bool { return d.idle() && d.b.phase == phaseCountdown })
	d.at(2)
	d.until("the results", func() bool { return d.b.phase == phaseCompare && d.idle() })
	if next, _ := d.b.NextScreen(); next != ScreenTable {
		t.Fatalf("next %v, want the compare table (no dashboard was drawn)", next)
	}
}
