package tui

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/booth"
	"github.com/dpulab/dpulab/tui/components/headline/headlinetest"
	"github.com/dpulab/dpulab/tui/keymap/keymaptest"
	"github.com/dpulab/dpulab/tui/session"
	"github.com/dpulab/dpulab/tui/session/sessiontest"
)

// boothApp runs booth mode on f with short timers.
func boothApp(t *testing.T, f *sessiontest.Fake) *teatest.TestModel {
	t.Helper()
	app := testApp(Config{
		Catalog:  &sessiontest.Catalog{Fakes: []*sessiontest.Fake{f}},
		BoothLab: f.LabInfo.ID,
		Booth:    booth.Config{StepDelay: 300 * time.Millisecond, PromptTimeout: 500 * time.Millisecond, CompareHold: 500 * time.Millisecond, ErrorHold: 500 * time.Millisecond},
		Clock:    50 * time.Millisecond,
	})
	return start(t, app, 100, 30)
}

func shortFake(t *testing.T) *sessiontest.Fake {
	f := quickstartFake()
	f.Script = f.Script[:2]
	f.Res = loadRecorded(t)
	return f
}

func TestBoothLoops(t *testing.T) {
	f := shortFake(t)
	tm := boothApp(t, f)
	tr := &transcript{tm: tm}
	tr.waitFor(t, "BOOTH", "next: step 1")
	tr.waitForSeq(t, "results · starting over", "next: step 1", "next: step 2") // started again
	finish(t, tm)
	if len(f.Ran) < 3 || f.Ran[0] != 0 || f.Ran[1] != 1 || f.Ran[2] != 0 {
		t.Fatalf("ran %v, want 0 1 then 0 again (restart after the compare)", f.Ran)
	}
	if cleaned, finished := f.Counts(); cleaned < 1 || finished < 1 {
		t.Fatalf("cleanup %d, finish %d: each loop must finish and clean up", cleaned, finished)
	}
}

func TestBoothNeverAcceptsHostKeys(t *testing.T) {
	f := shortFake(t)
	kt, fp := hostKey(t)
	f.Script[1].Emit = []steps.Event{steps.Prompt{Step: "deploy", Type: steps.PromptHostKey, Host: "server1", KeyType: kt, Fingerprint: fp}}
	tm := boothApp(t, f)
	tr := &transcript{tm: tm}
	// Refused, said why, cleaned up, its record written (how it ended),
	// started over without holding results.
	tr.waitFor(t, `answering "refuse" on its own`, "refused the unknown host key of server1", "starting over in")
	tr.waitForSeq(t, "starting over in", "next: step 1")
	finish(t, tm)
	answers := f.AnswersSeen(1, 10*time.Second)
	if len(answers) == 0 || answers[0].Choice != "refuse" {
		t.Fatalf("answers %+v: booth mode must refuse unknown host keys by itself", answers)
	}
	if cleaned, finished := f.Counts(); cleaned < 1 || finished < 1 {
		t.Fatalf("cleanup %d, finish %d: a refused host key ends the loop (cleanup, then its record)", cleaned, finished)
	}
}

// TestBoothConfirmOnlyWhenAllowed: a confirmation of a step the lab lists
// in booth: auto_confirm is answered yes after the countdown and the loop
// goes on to its results; one the lab does not list (or another step's) is
// refused after the timeout, the reason shown, and the loop starts over
// (after cleanup and its record, whose folder is pruned like the others).
func TestBoothConfirmOnlyWhenAllowed(t *testing.T) {
	tests := []struct {
		name    string
		allowed []string
		want    string
	}{
		{"listed", []string{"deploy"}, "yes"},
		{"other step listed", []string{"welcome"}, "no"},
		{"nothing listed", nil, "no"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := shortFake(t)
			f.LabInfo.BoothConfirm = tc.allowed
			f.Script[1].Emit = []steps.Event{steps.Prompt{Step: "deploy", Type: steps.PromptConfirm, Message: "Start the servers?", Choices: []string{"yes", "no"}}}
			tm := boothApp(t, f)
			tr := &transcript{tm: tm}
			answering := fmt.Sprintf("answering %q on its own", tc.want)
			if tc.want == "yes" {
				tr.waitFor(t, answering, `confirmed step "deploy"`, "results · starting over")
				tr.waitForSeq(t, "results · starting over", "next: step 1") // the next loop, after cleanup
			} else {
				tr.waitFor(t, answering, `refused to confirm step "deploy"`, "starting over in")
				tr.waitForSeq(t, "starting over in", "next: step 1")
			}
			finish(t, tm)
			answers := f.AnswersSeen(1, 10*time.Second)
			if len(answers) == 0 || answers[0].Choice != tc.want {
				t.Fatalf("answers %+v, want %q", answers, tc.want)
			}
			cleaned, finished := f.Counts()
			if cleaned < 1 || finished < 1 {
				t.Fatalf("cleanup %d, finish %d: every loop ends with cleanup and its record", cleaned, finished)
			}
		})
	}
}

// TestBoothRefusalStopsAStuckStep: a refused dialog ends the loop even when
// the step then hangs instead of failing: cleanup stops it, the lab starts
// over.
func TestBoothRefusalStopsAStuckStep(t *testing.T) {
	f := shortFake(t)
	f.Script[1].Emit = []steps.Event{steps.Prompt{Type: steps.PromptSecret, Host: "server1", Message: "password for lab@server1"}}
	f.Script[1].Block = make(chan struct{}) // never closed: runs until cancelled
	tm := boothApp(t, f)
	(&transcript{tm: tm}).waitForSeq(t, "cannot type a password for server1", "next: step 1")
	finish(t, tm)
	answers := f.AnswersSeen(1, 10*time.Second)
	if len(answers) == 0 || answers[0].Choice != "cancel" {
		t.Fatalf("answers %+v: booth mode never types a password", answers)
	}
	if cleaned, _ := f.Counts(); cleaned < 1 {
		t.Fatal("the stuck step must be stopped by cleanup")
	}
}

// TestBoothPrunesItsOwnResults: each loop writes a results folder; booth
// mode keeps only the newest KeepResults of those it wrote and never
// touches a folder it did not write.
func TestBoothPrunesItsOwnResults(t *testing.T) {
	// Not t.TempDir: the last loop's run may still be writing its folder
	// as the program stops, and TempDir's one RemoveAll then fails with
	// "directory not empty". This removal tries again until it holds.
	root, err := os.MkdirTemp("", "booth-prune-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for i := 0; ; i++ {
			err := os.RemoveAll(root)
			if err == nil {
				return
			}
			if i == 100 {
				t.Errorf("remove %s: %v", root, err)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	mine := filepath.Join(root, "quickstart", "20260101T000000Z") // a person's run, before the booth
	if err := os.MkdirAll(mine, 0o755); err != nil {
		t.Fatal(err)
	}
	f := shortFake(t)
	f.ResultsRoot = root
	app := testApp(Config{
		Catalog:  &sessiontest.Catalog{Fakes: []*sessiontest.Fake{f}},
		BoothLab: f.LabInfo.ID,
		Booth:    booth.Config{StepDelay: 50 * time.Millisecond, CompareHold: 50 * time.Millisecond, KeepResults: 2},
		Clock:    20 * time.Millisecond,
	})
	tm := start(t, app, 100, 30)
	teatest.WaitFor(t, tm.Output(), func([]byte) bool {
		_, finished := f.Counts()
		return finished >= 5
	}, teatest.WithDuration(20*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
	finish(t, tm)
	ents, err := os.ReadDir(filepath.Join(root, "quickstart"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if _, err := os.Stat(mine); err != nil {
		t.Fatalf("a folder the booth did not write was removed: %v (left: %v)", err, names)
	}
	// The person's folder plus at most the newest two (a third while the
	// last loop's prune was still under way when the program stopped).
	if len(names) < 3 || len(names) > 4 || slices.Contains(names, "run0001") || slices.Contains(names, "run0002") {
		t.Fatalf("left %v: want the person's folder and only the newest booth folders", names)
	}
}

func TestBoothErrorCleansUpAndRestarts(t *testing.T) {
	f := shortFake(t)
	f.Script[1].Final = results.Failed
	f.Script[1].Err = "exit status 1"
	tm := boothApp(t, f)
	(&transcript{tm: tm}).waitForSeq(t, "step failed · cleaning up and starting over", "next: step 1")
	finish(t, tm)
	if cleaned, _ := f.Counts(); cleaned < 1 {
		t.Fatal("a failure must be cleaned up before the restart")
	}
}

func TestBoothAnyKeyPauses(t *testing.T) {
	f := shortFake(t)
	tm := boothApp(t, f)
	waitFor(t, tm, "next: step 1")
	tm.Send(keymaptest.Msg("x")) // any key, bound or not
	waitFor(t, tm, "PAUSED")
	time.Sleep(500 * time.Millisecond) // longer than the step delay: nothing may start
	app := finish(t, tm)
	if !app.Booth().Paused() || len(f.Ran) != 0 {
		t.Fatalf("paused=%v ran=%v: a key must pause the countdown", app.Booth().Paused(), f.Ran)
	}
}

// flaky fails its first opens, like a lab whose host is briefly away.
type flaky struct {
	*sessiontest.Catalog
	mu    sync.Mutex
	fails int
}

func (c *flaky) Open(id string, o session.Options) (session.Session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fails > 0 {
		c.fails--
		return nil, errors.New("connection refused")
	}
	return c.Catalog.Open(id, o)
}

func TestBoothNeverExitsOnError(t *testing.T) {
	f := shortFake(t)
	cat := &flaky{Catalog: &sessiontest.Catalog{Fakes: []*sessiontest.Fake{f}}, fails: 2}
	app := testApp(Config{
		Catalog: cat, BoothLab: "quickstart", Clock: 50 * time.Millisecond,
		Booth: booth.Config{StepDelay: 200 * time.Millisecond, ErrorHold: 300 * time.Millisecond, CompareHold: 300 * time.Millisecond},
	})
	tm := start(t, app, 100, 30)
	tr := &transcript{tm: tm}
	tr.waitFor(t, "connection refused", "booth mode: starting over shortly")
	tr.waitForSeq(t, "connection refused", "next: step 1") // it opened after the failures
	app = finish(t, tm)
	if app.Lab() == nil || app.Err() != nil {
		t.Fatalf("lab %v err %v: booth mode must recover by itself", app.Lab(), app.Err())
	}
}

func TestBoothKeysNeverAnswerDialogs(t *testing.T) {
	f := shortFake(t)
	kt, fp := hostKey(t)
	f.Script[1].Emit = []steps.Event{steps.Prompt{Step: "deploy", Type: steps.PromptHostKey, Host: "server1", KeyType: kt, Fingerprint: fp}}
	app := testApp(Config{
		Catalog: &sessiontest.Catalog{Fakes: []*sessiontest.Fake{f}}, BoothLab: "quickstart", Clock: 50 * time.Millisecond,
		Booth: booth.Config{StepDelay: 100 * time.Millisecond, PromptTimeout: 2 * time.Second, CompareHold: time.Minute, ErrorHold: time.Minute},
	})
	tm := start(t, app, 100, 30)
	waitFor(t, tm, "Unknown host key")
	tm.Send(keymaptest.Msg("s")) // the dialog's "accept and save" outside booth mode
	waitFor(t, tm, "PAUSED")
	tm.Send(keymaptest.Msg("s")) // any key resumes
	waitFor(t, tm, "refused the unknown host key")
	finish(t, tm)
	answers := f.AnswersSeen(1, 10*time.Second)
	if len(answers) != 1 || answers[0].Choice != "refuse" {
		t.Fatalf("answers %+v: a key pressed in booth mode must not answer a host-key dialog", answers)
	}
}

// traineeHints are the key hints a trainee's screen shows (the lab page's
// footer, its status line, its failure box and panes): none of them may
// show in booth mode, where a visitor's key only pauses.
func traineeHints() []string {
	var hs []string
	for _, b := range []key.Binding{km.Run, km.RunAll, km.Skip, km.Retry, km.Next, km.NextPrev, km.Whole, km.Vars, km.SwitchPane, km.Copy, km.Dashboard, km.Compare, km.Quit, km.Help} {
		hs = append(hs, b.Help().Key+" "+b.Help().Desc)
	}
	hs = append(hs, "r retry", "s skip", "(y copies)", "enter runs step", "q stops it", "↑/↓")
	// Text for the trainee at the keyboard: a task step's, the user a
	// step runs as, where the results go, the dashboard views' keys.
	return append(hs, "This step is yours", "opens a shell", "(as root)", "results go to", "report:", "results: /",
		"hosts view", "2 hosts · 3 instances")
}

func noTraineeHints(t *testing.T, screen string) {
	t.Helper()
	for _, h := range traineeHints() {
		if i := strings.Index(screen, h); i >= 0 {
			t.Errorf("booth mode shows the trainee's key hint %q: …%s…", h, screen[max(i-300, 0):min(i+100, len(screen))])
		}
	}
}

// TestBoothHeadline: the results of a loop open on the headline screen,
// the deltas in big digits with their significance under the run's label,
// the cycle's indicator above; paused by a key, so that nothing on it
// moves (goldens at 80x24 and 120x40 over a fixed fixture).
func TestBoothHeadline(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			f := shortFake(t)
			f.Res = headlinetest.Fixture()
			app := testApp(Config{
				Catalog:  &sessiontest.Catalog{Fakes: []*sessiontest.Fake{f}},
				BoothLab: f.LabInfo.ID,
				Booth:    booth.Config{StepDelay: 50 * time.Millisecond, CompareHold: time.Hour, Cycle: time.Hour},
				Clock:    20 * time.Millisecond,
			})
			tm := start(t, app, sz[0], sz[1])
			waitFor(t, tm, "[headline]", "next: compare table in")
			tm.Send(keymaptest.Msg("x"))
			waitFor(t, tm, "next: compare table (paused)")
			app = finish(t, tm)
			if s, ok := app.Booth().Screen(); !ok || s != booth.ScreenHeadline {
				t.Fatalf("screen %v (%v), want the headline", s, ok)
			}
			view := ansi.Strip(app.View())
			for _, want := range []string{"EMULATION: host does it all (test fixture)", "TPS", "network CPU %", "p99 latency ms",
				"+39.0% better, p<0.001", "~ no significant", "██"} {
				if !strings.Contains(view, want) {
					t.Errorf("the headline lacks %q", want)
				}
			}
			noTraineeHints(t, view)
			requireGolden(t, app.View())
		})
	}
}

// TestBoothFailedLoopsArePruned: a loop whose step fails is cleaned up,
// then written (its record says how it ended), marked as the booth's and
// pruned like a finished loop's; a folder the booth did not write stays.
// The failure's screen shows no retry or skip keys.
func TestBoothFailedLoopsArePruned(t *testing.T) {
	root := t.TempDir()
	mine := filepath.Join(root, "quickstart", "20260101T000000Z")
	if err := os.MkdirAll(mine, 0o755); err != nil {
		t.Fatal(err)
	}
	f := shortFake(t)
	f.ResultsRoot = root
	f.Script[1].Final = results.Failed
	f.Script[1].Err = "exit status 1"
	f.Script[1].Hint = "Check the port."
	app := testApp(Config{
		Catalog:  &sessiontest.Catalog{Fakes: []*sessiontest.Fake{f}},
		BoothLab: f.LabInfo.ID,
		Booth:    booth.Config{StepDelay: 50 * time.Millisecond, ErrorHold: 300 * time.Millisecond, KeepResults: 2},
		Clock:    20 * time.Millisecond,
	})
	tm := start(t, app, 100, 30)
	var failure string
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		if s := ansi.Strip(string(b)); failure == "" && strings.Contains(s, "Check the port.") {
			failure = s
		}
		_, finished := f.Counts()
		return finished >= 5
	}, teatest.WithDuration(30*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
	app = finish(t, tm)
	if failure == "" {
		t.Fatal("the failure never showed")
	}
	noTraineeHints(t, failure)
	noTraineeHints(t, ansi.Strip(app.View()))
	ents, err := os.ReadDir(filepath.Join(root, "quickstart"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if _, err := os.Stat(mine); err != nil {
		t.Fatalf("a folder the booth did not write was removed: %v (left: %v)", err, names)
	}
	// The person's folder plus the newest two (a third while the last
	// loop's prune was under way when the program stopped).
	if len(names) < 3 || len(names) > 4 || slices.Contains(names, "run0001") || slices.Contains(names, "run0002") {
		t.Fatalf("left %v: failed loops' folders must be pruned like the others", names)
	}
	if _, err := os.Stat(filepath.Join(root, "quickstart", "run0003", booth.Marker)); err != nil && slices.Contains(names, "run0003") {
		t.Errorf("a failed loop's folder is not marked as the booth's: %v", err)
	}
}

// TestBoothInterruptedLoopIsRecorded: Ctrl+C in the middle of a loop stops
// the step and cleans up; the loop's record is written and marked as the
// booth's before the program quits, so a later booth prunes it.
func TestBoothInterruptedLoopIsRecorded(t *testing.T) {
	f := shortFake(t)
	f.ResultsRoot = t.TempDir()
	f.Script[1].Block = make(chan struct{}) // runs until stopped
	tm := boothApp(t, f)
	waitFor(t, tm, "running step 2")
	press(tm, km.ForceQuit)
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	cleaned, finished := f.Counts()
	if cleaned != 1 || finished != 1 {
		t.Fatalf("cleanup %d, finish %d: an interrupted loop is cleaned up, then written", cleaned, finished)
	}
	if _, err := os.Stat(filepath.Join(f.ResultsRoot, "quickstart", "run0001", booth.Marker)); err != nil {
		t.Fatalf("the interrupted loop's folder is not marked as the booth's: %v", err)
	}
}

// TestBoothShowsNoTraineeText: a booth plays a task step ("This step is
// yours… t opens a shell") titled for the trainee "(as root)": the screen
// says instead that dpulab does it here, the title has no user, and no
// results path is shown at any point of the loop.
func TestBoothShowsNoTraineeText(t *testing.T) {
	f := shortFake(t)
	f.Script[1].Info.Kind = "task"
	f.Script[1].Info.Title = "Edit the config (as root)"
	f.Script[1].Doc = "# Edit\n\nThis step is yours: `t` opens a shell on the host."
	f.Script[1].Emit = append(f.Script[1].Emit, steps.LabStarted{Lab: "quickstart", ResultsDir: "/var/tmp/booth-results/quickstart/x"})
	tm := boothApp(t, f)
	var screens []string
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		s := ansi.Strip(string(b))
		screens = append(screens, s)
		return strings.Contains(s, "Here dpulab does it") && strings.Contains(s, "results · starting over")
	}, teatest.WithDuration(30*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
	finish(t, tm)
	all := strings.Join(screens, "\n")
	noTraineeHints(t, all)
	for _, want := range []string{"Edit the config", "In the lab, a trainee does this step by hand"} {
		if !strings.Contains(strings.Join(strings.Fields(all), " "), want) {
			t.Errorf("the booth's loop never showed %q", want)
		}
	}
	if strings.Contains(all, "/var/tmp/booth-results") {
		t.Error("the booth shows a results path")
	}
}
