package tui

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/components/compare"
	"github.com/dpulab/dpulab/tui/pages/lab"
	"github.com/dpulab/dpulab/tui/pages/replay"
	"github.com/dpulab/dpulab/tui/session"
	"github.com/dpulab/dpulab/tui/session/sessiontest"
)

func dpuFake() *sessiontest.Fake {
	f := &sessiontest.Fake{LabInfo: session.LabInfo{
		ID: "redis-dpu-uptv2", Title: "Redis on vSphere 8: standard NIC against BlueField DPU", Duration: time.Hour,
		Roles: []string{"client", "baseline", "accelerated"}, Missing: []string{"accelerated"}, ResumeAt: 3,
	}}
	for i := 0; i < 9; i++ {
		f.Script = append(f.Script, sessiontest.Step{Info: steps.StepInfo{ID: fmt.Sprint("s", i), Title: fmt.Sprint("Step ", i), Kind: "read"}})
	}
	return f
}

func TestPicker(t *testing.T) {
	// quickstart is listed second by the catalogue and must come first.
	cat := &sessiontest.Catalog{Fakes: []*sessiontest.Fake{dpuFake(), quickstartFake()}}
	tm := start(t, testApp(Config{Catalog: cat}), 100, 30)
	waitFor(t, tm, "pick a lab", "resume at step 4/9")
	app := finish(t, tm)
	if app.State() != StatePicker {
		t.Fatalf("state = %v, want the picker", app.State())
	}
	sel, ok := app.Picker().Selected()
	if !ok || sel.ID != "quickstart" {
		t.Fatalf("selected %q, want quickstart first and selected", sel.ID)
	}
	v := ansi.Strip(app.View())
	for _, want := range []string{"no host for accelerated", "all on this machine", "3 min", "60 min"} {
		if !strings.Contains(v, want) {
			t.Errorf("picker lacks %q", want)
		}
	}
	requireGolden(t, app.View())
}

func TestPickerFilterAndOpen(t *testing.T) {
	cat := &sessiontest.Catalog{Fakes: []*sessiontest.Fake{quickstartFake(), dpuFake()}}
	tm := start(t, testApp(Config{Catalog: cat}), 100, 30)
	waitFor(t, tm, "pick a lab")
	press(tm, km.Filter)
	tm.Type("vsphere")
	waitFor(t, tm, "1 filtered")
	press(tm, km.Enter) // accept the filter
	press(tm, km.Enter) // open the only match
	waitFor(t, tm, "Step 1/9", "Redis on vSphere")
	app := finish(t, tm)
	if app.State() != StateLab || app.Lab().Session().Info().ID != "redis-dpu-uptv2" {
		t.Fatalf("state %v: the filtered lab should be open", app.State())
	}
}

func openQuickstart(t *testing.T, f *sessiontest.Fake, w, h int) (*teatest.TestModel, *App) {
	t.Helper()
	app := testApp(Config{Catalog: &sessiontest.Catalog{Fakes: []*sessiontest.Fake{f}}})
	tm := start(t, app, w, h)
	waitFor(t, tm, "pick a lab")
	press(tm, km.Enter)
	waitFor(t, tm, "Step 2/4")
	return tm, app
}

func TestStepRunning(t *testing.T) {
	f := quickstartFake()
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	f.Script[1].Block = block
	tm, _ := openQuickstart(t, f, 100, 30)
	press(tm, km.Run)
	waitFor(t, tm, "server1 │ net.core.somaxconn = 4096", "running step 2")
	app := finish(t, tm)
	l := app.Lab()
	if l.Running() != 1 {
		t.Fatalf("running = %d, want step index 1", l.Running())
	}
	if st := l.Steps()[1].Status; st != steps.Running {
		t.Fatalf("step 2 status %v, want running", st)
	}
	if n := len(l.Output().Lines()); n != 2 || !l.Output().Following() {
		t.Fatalf("output has %d lines (following=%v), want 2 and following the tail", n, l.Output().Following())
	}
	v := ansi.Strip(app.View())
	for _, want := range []string{"server1 [sudo] $ sysctl -w net.core.somaxconn=4096", "local $ dpulab server --port 7400"} {
		if !strings.Contains(v, want) {
			t.Errorf("commands pane lacks %q", want)
		}
	}
	requireGolden(t, app.View())
}

func TestFailedStepWithHint(t *testing.T) {
	f := quickstartFake()
	f.Script[1].Final = steps.Failed
	f.Script[1].Err = "exit status 1 (command: dpulab server --port 7400)"
	f.Script[1].Hint = "An instance did not answer PING. The most common cause is a port already in use: pick another first port with --set port=NNNN."
	tm, _ := openQuickstart(t, f, 100, 30)
	press(tm, km.Run)
	waitFor(t, tm, "Hint: An instance", "step 2 failed")
	app := finish(t, tm)
	l := app.Lab()
	fail, ok := l.Failure(1)
	if !ok || fail.Hint == "" || l.Steps()[1].Status != steps.Failed || l.Running() != -1 {
		t.Fatalf("failure %+v ok=%v status=%v running=%d", fail, ok, l.Steps()[1].Status, l.Running())
	}
	if l.Selected() != 1 {
		t.Fatalf("selection moved to %d; it must stay on the failed step", l.Selected())
	}
	requireGolden(t, app.View())
}

func TestRetryAndSkip(t *testing.T) {
	f := quickstartFake()
	f.Script[1].Final = steps.Failed
	tm, _ := openQuickstart(t, f, 100, 30)
	press(tm, km.Run)
	waitFor(t, tm, "step 2 failed")
	press(tm, km.Retry)
	waitFor(t, tm, "step 2 failed (attempt 2)")
	press(tm, km.Skip)
	waitFor(t, tm, "step 2 skipped")
	app := finish(t, tm)
	if got := fmt.Sprint(f.Ran); got != "[1 1]" {
		t.Fatalf("ran %s, want step 2 twice (run, retry)", got)
	}
	if fmt.Sprint(f.Skipped) != "[1]" || app.Lab().Selected() != 2 {
		t.Fatalf("skipped %v, selected %d: s must skip step 2 and move on", f.Skipped, app.Lab().Selected())
	}
}

func hostKeyFake(t *testing.T) *sessiontest.Fake {
	f := quickstartFake()
	kt, fp := hostKey(t)
	f.Script[1].Emit = []steps.Event{steps.Prompt{Step: "deploy", Type: steps.PromptHostKey, Host: "server1 (10.0.0.6:22)", KeyType: kt, Fingerprint: fp}}
	return f
}

func TestHostKeyPrompt(t *testing.T) {
	f := hostKeyFake(t)
	tm, _ := openQuickstart(t, f, 100, 30)
	press(tm, km.Run)
	waitFor(t, tm, "Unknown host key", "SHA256:")
	app := finish(t, tm)
	p := app.Lab().Prompt()
	if p == nil || p.Prompt().Type != steps.PromptHostKey {
		t.Fatal("the host-key dialog should be open")
	}
	v := ansi.Strip(app.View())
	for _, want := range []string{"server1 (10.0.0.6:22)", "ssh-ed25519", "Accept once", "Accept and save", "› [r] Refuse"} {
		if !strings.Contains(v, want) {
			t.Errorf("dialog lacks %q", want)
		}
	}
	requireGolden(t, app.View())
	// Unblock the scripted engine.
	p.Answer(steps.Answer{Choice: "refuse"}, false)
}

func TestHostKeyAnswers(t *testing.T) {
	tests := []struct {
		keys, want string
		// bind is the binding pressed; nil: the dialog's own shortcut keys.
		bind *key.Binding
	}{
		{"o", "once", nil},
		{"s", "save", nil},
		{"esc", "refuse", &km.Cancel},
		{"enter", "refuse", &km.Enter}, // the safe choice is preselected
	}
	for _, tc := range tests {
		t.Run(tc.keys, func(t *testing.T) {
			f := hostKeyFake(t)
			tm, _ := openQuickstart(t, f, 100, 30)
			press(tm, km.Run)
			waitFor(t, tm, "Unknown host key")
			if tc.bind != nil {
				press(tm, *tc.bind)
			} else {
				answer(tm, tc.keys)
			}
			waitFor(t, tm, "step 2 done")
			finish(t, tm)
			if len(f.Answers) != 1 || f.Answers[0].Choice != tc.want {
				t.Fatalf("answers %+v, want exactly one %q", f.Answers, tc.want)
			}
		})
	}
}

func TestPasswordIsMasked(t *testing.T) {
	f := quickstartFake()
	f.Script[1].Emit = []steps.Event{steps.Prompt{Step: "deploy", Type: steps.PromptSecret, Host: "server1", Message: "sudo password for lab@server1"}}
	tm, _ := openQuickstart(t, f, 100, 30)
	press(tm, km.Run)
	waitFor(t, tm, "Password needed")
	tm.Type("hunter2")
	waitFor(t, tm, "•••••••")
	press(tm, km.Enter)
	waitFor(t, tm, "step 2 done")
	app := finish(t, tm)
	if len(f.Answers) != 1 || f.Answers[0].Secret != "hunter2" {
		t.Fatalf("answers %+v, want the typed secret", f.Answers)
	}
	if strings.Contains(app.View(), "hunter2") {
		t.Fatal("the password is on screen")
	}
}

func TestVariablesFormValidates(t *testing.T) {
	f := quickstartFake()
	tm, _ := openQuickstart(t, f, 100, 30)
	press(tm, km.Next) // to the bench step
	press(tm, km.Run)
	waitFor(t, tm, "Variables for Benchmark")
	press(tm, textinput.DefaultKeyMap.DeleteBeforeCursor)
	tm.Type("bad")
	waitFor(t, tm, "✘ instances must be")
	press(tm, km.Enter) // refused while invalid
	for range 3 {
		press(tm, textinput.DefaultKeyMap.DeleteCharacterBackward)
	}
	tm.Type("8")
	press(tm, km.Enter)
	waitFor(t, tm, "step 3 done")
	finish(t, tm)
	if f.SetTo["instances"] != "8" || f.SetTo["duration"] != "5s" {
		t.Fatalf("SetVars got %v, want instances=8 duration=5s", f.SetTo)
	}
	if fmt.Sprint(f.Ran) != "[2]" {
		t.Fatalf("ran %v: the step must run once, after the form", f.Ran)
	}
}

func TestQuitWhileRunningAsksAndCleansUp(t *testing.T) {
	f := quickstartFake()
	block := make(chan struct{})
	f.Script[1].Block = block
	tm, _ := openQuickstart(t, f, 100, 30)
	press(tm, km.Run)
	waitFor(t, tm, "running step 2")
	press(tm, km.Quit)
	// The buttons say what each answer does (they once read "Yes, run it").
	waitFor(t, tm, "Quit anyway?", "[y] Quit and clean up", "› [n] Keep running")
	answer(tm, "n")
	waitFor(t, tm, "enter run · a run all") // the page's keys again: the dialog closed
	press(tm, km.Quit)
	waitFor(t, tm, "Quit and clean up")
	if cleaned, _ := f.Counts(); cleaned != 0 {
		t.Fatalf("keep running ran cleanup %d times", cleaned)
	}
	answer(tm, "y")
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	if cleaned, _ := f.Counts(); cleaned != 1 {
		t.Fatalf("cleanup ran %d times, want once before quitting", cleaned)
	}
}

func TestRunAllToCompare(t *testing.T) {
	f := quickstartFake()
	f.Script[0].Info.Status = steps.Pending
	f.Res = loadRecorded(t)
	app := testApp(Config{Catalog: &sessiontest.Catalog{Fakes: []*sessiontest.Fake{f}}})
	tm := start(t, app, 100, 30)
	waitFor(t, tm, "pick a lab")
	press(tm, km.Enter)
	waitFor(t, tm, "Step 1/4")
	press(tm, km.RunAll)
	waitFor(t, tm, "Variables for")
	press(tm, km.Enter)
	waitFor(t, tm, "Compare:", "TCP loopback (baseline)")
	app = finish(t, tm)
	if app.Lab().ActiveView() != lab.ViewCompare {
		t.Fatal("the compare view should show once the lab finished")
	}
	if fmt.Sprint(f.Ran) != "[0 1 2 3]" {
		t.Fatalf("ran %v, want every step in order", f.Ran)
	}
	if _, finished := f.Counts(); finished != 1 {
		t.Fatalf("Finish ran %d times, want once", finished)
	}
}

func TestTooSmall(t *testing.T) {
	tm := start(t, testApp(Config{Catalog: &sessiontest.Catalog{Fakes: []*sessiontest.Fake{quickstartFake()}}}), 60, 20)
	waitFor(t, tm, "Terminal too small", "60×20")
	tm.Send(tea.WindowSizeMsg{Width: 100, Height: 30})
	waitFor(t, tm, "pick a lab")
	finish(t, tm)
}

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
		{"1", km.Tab1, compare.TabTable, []string{"TCP loopback (baseline)", "Unix socket", "better", "Published reference figures", "seed 002"}},
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
	return replay.Options{Step: time.Hour, TCO: steps.ComputeTCO}
}

func TestCopyCommandsOSC52(t *testing.T) {
	var clip safeBuffer
	f := quickstartFake()
	app := testApp(Config{Catalog: &sessiontest.Catalog{Fakes: []*sessiontest.Fake{f}}, Clipboard: &clip})
	tm := start(t, app, 100, 30)
	waitFor(t, tm, "pick a lab")
	press(tm, km.Enter)
	waitFor(t, tm, "Step 2/4")
	press(tm, km.Copy)
	waitFor(t, tm, "copied 2 command(s) via OSC52")
	finish(t, tm)
	want := base64.StdEncoding.EncodeToString([]byte("dpulab server --port 7400 --instances 4 --bind 127.0.0.1\nsudo sysctl -w net.core.somaxconn=4096\n"))
	if got := clip.String(); !strings.Contains(got, "\x1b]52;c;"+want) {
		t.Fatalf("clipboard got %q, want an OSC52 sequence with the commands (sudo marked)", got)
	}
}

func TestLabScreenFitsEverySize(t *testing.T) {
	f := quickstartFake()
	tm, _ := openQuickstart(t, f, 100, 30)
	sizes := [][2]int{{80, 24}, {120, 40}, {200, 60}, {81, 25}}
	for _, sz := range sizes {
		tm.Send(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
	}
	press(tm, km.Help)
	app := finish(t, tm)
	for _, sz := range sizes {
		app.SetSize(sz[0], sz[1])
		for _, help := range []bool{false, true} {
			app.help.ShowAll = help
			app.SetSize(sz[0], sz[1])
			view := app.View()
			if plain := ansi.Strip(view); !strings.Contains(plain, "Step 2/4: Start the servers") || strings.Contains(plain, "too small") {
				t.Errorf("%dx%d help=%v: the lab screen is not shown:\n%s", sz[0], sz[1], help, plain)
			}
			lines := strings.Split(view, "\n")
			if len(lines) != sz[1] {
				t.Errorf("%dx%d help=%v: %d lines, want exactly %d", sz[0], sz[1], help, len(lines), sz[1])
			}
			for _, l := range lines {
				if w := ansi.StringWidth(l); w > sz[0] {
					t.Errorf("%dx%d help=%v: line %d wide: %q", sz[0], sz[1], help, w, l)
				}
			}
		}
	}
}

// TestNoColorLabScreen: with NO_COLOR (every test app runs without colour)
// the step's text has no markdown markers left, and what colour signals
// elsewhere is still there as text: the selection (›), each step's status
// icon (✔ ✘ ○), the failure and its hint, sudo.
func TestNoColorLabScreen(t *testing.T) {
	f := quickstartFake()
	f.Script[1].Doc = "# Start the servers\n\nStart **four instances** of the *bundled* server with `dpulab server`."
	f.Script[1].Final = steps.Failed
	f.Script[1].Err = "exit status 1"
	f.Script[1].Hint = "A port is in use: pick another with --set port=NNNN."
	tm, _ := openQuickstart(t, f, 100, 30)
	press(tm, km.Run)
	waitFor(t, tm, "step 2 failed")
	app := finish(t, tm)
	v := app.View()
	plain := ansi.Strip(v)
	if v != plain {
		t.Errorf("NO_COLOR screen carries escape codes")
	}
	for _, want := range []string{"Start four instances of the bundled server with `dpulab", "›✘  2 Start the servers", "✔  1 What this lab does", "○  3", "[sudo]", "Hint: A port is in use"} {
		if !strings.Contains(plain, want) {
			t.Errorf("screen lacks %q", want)
		}
	}
	if strings.Contains(plain, "**") || strings.Contains(plain, "*bundled*") {
		t.Errorf("markdown markers left on screen:\n%s", plain)
	}
	requireGolden(t, v)
}

// TestFooterKeepsHelpKey: at 80 columns the lab screen's key line drops
// keys from the middle, never "? more keys" at its end.
func TestFooterKeepsHelpKey(t *testing.T) {
	tm, _ := openQuickstart(t, quickstartFake(), 80, 24)
	app := finish(t, tm)
	lines := strings.Split(ansi.Strip(app.View()), "\n")
	foot := lines[len(lines)-1]
	if !strings.HasSuffix(strings.TrimRight(foot, " "), "q quit · ? more keys") || strings.Contains(foot, "…") {
		t.Fatalf("footer %q: want it to end with q quit · ? more keys, untruncated", foot)
	}
	if !strings.Contains(foot, "enter run") {
		t.Fatalf("footer %q lost the most important key", foot)
	}
}

// recordingCatalog remembers the Emit each opened session was given.
type recordingCatalog struct {
	session.Catalog
	emits []func(steps.Event)
}

func (c *recordingCatalog) Open(id string, o session.Options) (session.Session, error) {
	c.emits = append(c.emits, o.Emit)
	return c.Catalog.Open(id, o)
}

// TestEventsOfAClosedSessionAreDropped: after a lab is opened again (as a
// booth restart does), what the abandoned run still emits — or had queued —
// never reaches the new screen.
func TestEventsOfAClosedSessionAreDropped(t *testing.T) {
	f := quickstartFake()
	cat := &recordingCatalog{Catalog: &sessiontest.Catalog{Fakes: []*sessiontest.Fake{f}}}
	a := testApp(Config{Catalog: cat})
	a.open(f.LabInfo.ID, false, false)
	line := func(s string) steps.Event { return steps.Output{Line: runner.Line{Host: "local", Text: s}} }
	cat.emits[0](line("queued by the first run"))
	a.open(f.LabInfo.ID, false, true)
	cat.emits[0](line("late from the first run"))
	cat.emits[1](line("from the second run"))
	msg := a.pump.Wait()()
	var got []string
	for _, ev := range msg.(session.EventsMsg) {
		if o, ok := ev.(steps.Output); ok {
			got = append(got, o.Line.Text)
		}
	}
	if strings.Join(got, "|") != "from the second run" {
		t.Errorf("delivered %q, want only the second run's line", got)
	}
}
