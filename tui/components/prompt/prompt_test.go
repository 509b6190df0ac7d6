package prompt

import (
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/keymap/keymaptest"
)

func TestSafeDefaultsAndSingleReply(t *testing.T) {
	tests := []struct {
		kind steps.PromptKind
		want string
	}{
		{steps.PromptHostKey, "refuse"},
		{steps.PromptConfirm, "no"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			var got []steps.Answer
			m := New(common.NewCommon(true, 100, 30), steps.Prompt{Type: tc.kind, Reply: func(a steps.Answer) { got = append(got, a) }})
			m.Update(keymaptest.Press(m.KeyMap.Enter))
			m.Update(keymaptest.Press(m.KeyMap.Enter))
			m.Answer(steps.Answer{Choice: "yes"}, false)
			if len(got) != 1 || got[0].Choice != tc.want {
				t.Fatalf("replies %+v, want exactly one %q", got, tc.want)
			}
		})
	}
}

func TestDeadlineAnswersOnItsOwn(t *testing.T) {
	var got []steps.Answer
	m := New(common.NewCommon(true, 100, 30), steps.Prompt{Type: steps.PromptHostKey, Reply: func(a steps.Answer) { got = append(got, a) }})
	now := time.Now()
	m.SetDeadline(now.Add(time.Second), steps.Answer{Choice: "refuse"})
	if cmd := m.Tick(now); cmd != nil || len(got) != 0 {
		t.Fatal("answered before the deadline")
	}
	cmd := m.Tick(now.Add(2 * time.Second))
	if cmd == nil || len(got) != 1 || got[0].Choice != "refuse" {
		t.Fatalf("replies %+v: the deadline must give the safe answer", got)
	}
	if msg := cmd().(AnsweredMsg); !msg.Auto {
		t.Fatal("an automatic answer must say so")
	}
}

// TestEveryPurposeReadsRight: each engine question kind has a title, a safe
// answer among its buttons, and buttons worded for it; a page's own
// question reads in its own words, never another dialog's.
func TestEveryPurposeReadsRight(t *testing.T) {
	c := common.NewCommon(true, 100, 30)
	for _, kind := range []steps.PromptKind{steps.PromptHostKey, steps.PromptConfirm, steps.PromptSecret} {
		p := ForPrompt(steps.Prompt{Type: kind})
		if p.Title == "" || p.Default == "" || p.label(p.Safe) == p.Safe {
			t.Errorf("kind %v: purpose %+v lacks a title, a default message or a labelled safe answer", kind, p)
		}
	}
	// The engine narrows the buttons; the kind still words them.
	p := ForPrompt(steps.Prompt{Type: steps.PromptConfirm, Choices: []string{"no", "yes", ""}})
	if len(p.Choices) != 2 || p.Choices[0] != (Choice{"no", "No"}) || p.Choices[1] != (Choice{"yes", "Yes, run it"}) {
		t.Errorf("narrowed choices %+v", p.Choices)
	}
	// Left out by the engine, the safe answer is still what enter gives.
	var got1 []steps.Answer
	only := New(c, steps.Prompt{Type: steps.PromptHostKey, Choices: []string{"once"},
		Reply: func(a steps.Answer) { got1 = append(got1, a) }})
	only.Update(keymaptest.Press(only.KeyMap.Enter))
	if len(got1) != 1 || got1[0].Choice != "refuse" {
		t.Errorf("enter on a dialog offering only 'once' answered %+v, want refuse", got1)
	}

	quit := Purpose{Title: "Quit while a step runs?", Safe: "no",
		Choices: []Choice{{"yes", "Quit and clean up"}, {"no", "Keep running"}}}
	var got []steps.Answer
	m := NewFor(c, steps.Prompt{Type: steps.PromptConfirm, Message: "Step 2 is still running.",
		Reply: func(a steps.Answer) { got = append(got, a) }}, quit)
	v := m.View()
	for _, want := range []string{"Quit while a step runs?", "[y] Quit and clean up", "› [n] Keep running", "esc keep running"} {
		if !strings.Contains(v, want) {
			t.Errorf("quit dialog lacks %q:\n%s", want, v)
		}
	}
	for _, bad := range []string{"Yes, run it", "Confirm", "refuse"} {
		if strings.Contains(v, bad) {
			t.Errorf("quit dialog says %q:\n%s", bad, v)
		}
	}
	m.Update(keymaptest.Press(m.KeyMap.Cancel))
	if len(got) != 1 || got[0].Choice != "no" {
		t.Fatalf("esc answered %+v, want the safe no", got)
	}

	hk := New(c, steps.Prompt{Type: steps.PromptHostKey})
	if v := hk.View(); !strings.Contains(v, "› [r] Refuse") || !strings.Contains(v, "esc refuse") {
		t.Errorf("host-key dialog:\n%s", v)
	}
}
