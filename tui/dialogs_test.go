package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/session/sessiontest"
)

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
			answers := f.AnswersSeen(1, 10*time.Second)
			if len(answers) != 1 || answers[0].Choice != tc.want {
				t.Fatalf("answers %+v, want exactly one %q", answers, tc.want)
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
	got := f.AnswersSeen(1, 10*time.Second)
	if len(got) != 1 || got[0].Secret != "hunter2" {
		t.Fatalf("answers %+v, want the typed secret", got)
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
