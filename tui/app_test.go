package tui

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/pages/lab"
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
	if st := l.Steps()[1].Status; st != results.Running {
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
	f.Script[1].Final = results.Failed
	f.Script[1].Err = "exit status 1 (command: dpulab server --port 7400)"
	f.Script[1].Hint = "An instance did not answer PING. The most common cause is a port already in use: pick another first port with --set port=NNNN."
	tm, _ := openQuickstart(t, f, 100, 30)
	press(tm, km.Run)
	waitFor(t, tm, "Hint: An instance", "step 2 failed")
	app := finish(t, tm)
	l := app.Lab()
	fail, ok := l.Failure(1)
	if !ok || fail.Hint == "" || l.Steps()[1].Status != results.Failed || l.Running() != -1 {
		t.Fatalf("failure %+v ok=%v status=%v running=%d", fail, ok, l.Steps()[1].Status, l.Running())
	}
	if l.Selected() != 1 {
		t.Fatalf("selection moved to %d; it must stay on the failed step", l.Selected())
	}
	requireGolden(t, app.View())
}

func TestRetryAndSkip(t *testing.T) {
	f := quickstartFake()
	f.Script[1].Final = results.Failed
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

func TestRunAllToCompare(t *testing.T) {
	f := quickstartFake()
	f.Script[0].Info.Status = results.Pending
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
