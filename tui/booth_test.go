package tui

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/charmbracelet/x/exp/teatest"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/booth"
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
	waitFor(t, tm, "BOOTH", "next: step 1")
	waitFor(t, tm, "results · starting over")
	waitFor(t, tm, "next: step 1") // started again
	waitFor(t, tm, "next: step 2")
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
	waitFor(t, tm, `answering "refuse" on its own`)
	// Refused, said why, cleaned up, started over: no results this loop.
	waitFor(t, tm, "refused the unknown host key of server1", "starting over in")
	waitFor(t, tm, "next: step 1")
	finish(t, tm)
	if len(f.Answers) == 0 || f.Answers[0].Choice != "refuse" {
		t.Fatalf("answers %+v: booth mode must refuse unknown host keys by itself", f.Answers)
	}
	if cleaned, finished := f.Counts(); cleaned < 1 || finished != 0 {
		t.Fatalf("cleanup %d, finish %d: a refused host key ends the loop (cleanup, no results)", cleaned, finished)
	}
}

// TestBoothConfirmOnlyWhenAllowed: a confirmation of a step the lab lists
// in booth: auto_confirm is answered yes after the countdown and the loop
// goes on to its results; one the lab does not list (or another step's) is
// refused after the timeout, the reason shown, and the loop starts over.
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
			waitFor(t, tm, fmt.Sprintf("answering %q on its own", tc.want))
			if tc.want == "yes" {
				waitFor(t, tm, `confirmed step "deploy"`)
				waitFor(t, tm, "results · starting over")
				waitFor(t, tm, "next: step 1") // the next loop, after cleanup
			} else {
				waitFor(t, tm, `refused to confirm step "deploy"`, "starting over in")
				waitFor(t, tm, "next: step 1")
			}
			finish(t, tm)
			if len(f.Answers) == 0 || f.Answers[0].Choice != tc.want {
				t.Fatalf("answers %+v, want %q", f.Answers, tc.want)
			}
			cleaned, finished := f.Counts()
			if cleaned < 1 {
				t.Fatal("every loop ends with cleanup")
			}
			if (finished > 0) != (tc.want == "yes") {
				t.Fatalf("finished %d times: results only when the confirmation was allowed", finished)
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
	waitFor(t, tm, "cannot type a password for server1")
	waitFor(t, tm, "next: step 1")
	finish(t, tm)
	if len(f.Answers) == 0 || f.Answers[0].Choice != "cancel" {
		t.Fatalf("answers %+v: booth mode never types a password", f.Answers)
	}
	if cleaned, _ := f.Counts(); cleaned < 1 {
		t.Fatal("the stuck step must be stopped by cleanup")
	}
}

// TestBoothPrunesItsOwnResults: each loop writes a results folder; booth
// mode keeps only the newest KeepResults of those it wrote and never
// touches a folder it did not write.
func TestBoothPrunesItsOwnResults(t *testing.T) {
	root := t.TempDir()
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
	waitFor(t, tm, "step failed · cleaning up and starting over")
	waitFor(t, tm, "next: step 1")
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
	waitFor(t, tm, "connection refused", "booth mode: starting over shortly")
	waitFor(t, tm, "next: step 1") // it opened after the failures
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
	if len(f.Answers) != 1 || f.Answers[0].Choice != "refuse" {
		t.Fatalf("answers %+v: a key pressed in booth mode must not answer a host-key dialog", f.Answers)
	}
}
