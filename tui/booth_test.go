package tui

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/pages/lab"
	"github.com/dpulab/dpulab/tui/session"
	"github.com/dpulab/dpulab/tui/session/sessiontest"
)

// boothApp runs booth mode on f with short timers.
func boothApp(t *testing.T, f *sessiontest.Fake) *teatest.TestModel {
	t.Helper()
	app := testApp(Config{
		Catalog:  &sessiontest.Catalog{Fakes: []*sessiontest.Fake{f}},
		BoothLab: f.LabInfo.ID,
		Booth:    lab.BoothConfig{StepDelay: 300 * time.Millisecond, PromptTimeout: 500 * time.Millisecond, CompareHold: 500 * time.Millisecond, ErrorHold: 500 * time.Millisecond},
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
	waitFor(t, tm, "results · starting over")
	finish(t, tm)
	if len(f.Answers) == 0 || f.Answers[0].Choice != "refuse" {
		t.Fatalf("answers %+v: booth mode must refuse unknown host keys by itself", f.Answers)
	}
}

func TestBoothConfirmOnlyWhenAllowed(t *testing.T) {
	for _, allowed := range []bool{false, true} {
		f := shortFake(t)
		f.LabInfo.BoothAutoConfirm = allowed
		f.Script[1].Emit = []steps.Event{steps.Prompt{Step: "deploy", Type: steps.PromptConfirm, Message: "Run with sudo?"}}
		tm := boothApp(t, f)
		waitFor(t, tm, "results · starting over")
		finish(t, tm)
		want := "no"
		if allowed {
			want = "yes"
		}
		if len(f.Answers) == 0 || f.Answers[0].Choice != want {
			t.Fatalf("allowed=%v: answers %+v, want %q", allowed, f.Answers, want)
		}
	}
}

func TestBoothErrorCleansUpAndRestarts(t *testing.T) {
	f := shortFake(t)
	f.Script[1].Final = steps.Failed
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
	tm.Send(press("x"))
	waitFor(t, tm, "PAUSED")
	time.Sleep(500 * time.Millisecond) // longer than the step delay: nothing may start
	app := finish(t, tm)
	if !app.Lab().BoothPaused() || len(f.Ran) != 0 {
		t.Fatalf("paused=%v ran=%v: a key must pause the countdown", app.Lab().BoothPaused(), f.Ran)
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
		Booth: lab.BoothConfig{StepDelay: 200 * time.Millisecond, ErrorHold: 300 * time.Millisecond, CompareHold: 300 * time.Millisecond},
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
		Booth: lab.BoothConfig{StepDelay: 100 * time.Millisecond, PromptTimeout: 2 * time.Second, CompareHold: time.Minute},
	})
	tm := start(t, app, 100, 30)
	waitFor(t, tm, "Unknown host key")
	tm.Send(press("s")) // "accept and save" outside booth mode
	waitFor(t, tm, "PAUSED")
	tm.Send(press("s")) // resume
	waitFor(t, tm, "results · starting over")
	finish(t, tm)
	if len(f.Answers) != 1 || f.Answers[0].Choice != "refuse" {
		t.Fatalf("answers %+v: a key pressed in booth mode must not answer a host-key dialog", f.Answers)
	}
}
