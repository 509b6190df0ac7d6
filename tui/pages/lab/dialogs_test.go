package lab

import (
	"slices"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/components/prompt"
	"github.com/dpulab/dpulab/tui/keymap/keymaptest"
	"github.com/dpulab/dpulab/tui/pages/lab/runctl"
)

// dialogState is a run control state with dialogs open, the first shown.
func dialogState(open ...runctl.Dialog) runctl.State {
	rc := runctl.New(false, false)
	rc.Phase, rc.Running, rc.Dialogs = runctl.Asking, 0, open
	return rc
}

// TestDialogKeys: over the shown dialog, esc cancels it and q asks to
// quit, but not over the quit question itself, nor over a password (q is
// typed there), nor over a dialog already answered; other keys are the
// dialog's.
func TestDialogKeys(t *testing.T) {
	c := common.NewCommon(true, 100, 30)
	km := c.KeyMap
	confirm := steps.Prompt{Type: steps.PromptConfirm, Message: "Start?", Choices: []string{"yes", "no"}, Reply: func(steps.Answer) {}}
	secret := steps.Prompt{Type: steps.PromptSecret, Message: "sudo password", Reply: func(steps.Answer) {}}
	for _, tc := range []struct {
		name string
		// open draws the dialogs; shown is the one the run control shows.
		open  func(s *dialogSet)
		shown []runctl.Dialog
		key   tea.KeyMsg
		want  runctl.EventKind
		ok    bool
	}{
		{name: "esc over a confirmation", open: func(s *dialogSet) { s.Engine(1, confirm) }, shown: []runctl.Dialog{1},
			key: keymaptest.Press(km.Cancel), want: runctl.Cancel, ok: true},
		{name: "q over a confirmation", open: func(s *dialogSet) { s.Engine(1, confirm) }, shown: []runctl.Dialog{1},
			key: keymaptest.Press(km.Quit), want: runctl.Quit, ok: true},
		{name: "q over a password", open: func(s *dialogSet) { s.Engine(1, secret) }, shown: []runctl.Dialog{1},
			key: keymaptest.Press(km.Quit)},
		{name: "esc over a password", open: func(s *dialogSet) { s.Engine(1, secret) }, shown: []runctl.Dialog{1},
			key: keymaptest.Press(km.Cancel), want: runctl.Cancel, ok: true},
		{name: "q over the quit question", open: func(s *dialogSet) { s.Engine(1, confirm); s.AskQuit(0) }, shown: []runctl.Dialog{runctl.QuitDialog, 1},
			key: keymaptest.Press(km.Quit)},
		{name: "esc over the quit question", open: func(s *dialogSet) { s.AskQuit(0) }, shown: []runctl.Dialog{runctl.QuitDialog},
			key: keymaptest.Press(km.Cancel), want: runctl.Cancel, ok: true},
		{name: "y is the dialog's", open: func(s *dialogSet) { s.Engine(1, confirm) }, shown: []runctl.Dialog{1},
			key: keymaptest.Msg("y")},
		{name: "esc over an answered dialog", open: func(s *dialogSet) {
			s.Engine(1, confirm)
			s.open[1].Answer(steps.Answer{Choice: "yes"}, false)
		}, shown: []runctl.Dialog{1}, key: keymaptest.Press(km.Cancel)},
		{name: "nothing shown", open: func(s *dialogSet) {}, key: keymaptest.Press(km.Cancel)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newDialogSet(c)
			tc.open(s)
			ev, ok := s.Key(tc.key, dialogState(tc.shown...), 3)
			if ok != tc.ok || ev.Kind != tc.want || (ok && ev.Kind == runctl.Quit && ev.Step != 3) {
				t.Errorf("event %+v %v, want %v %v", ev, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestDialogAnswers: an engine dialog answered gives DialogAnswered, the
// quit question QuitAnswer with its answer (only while it is open); a
// deadline passed gives DialogExpired; an AnswerDialog effect gives the
// dialog's safe answer, or booth mode's at its deadline; Sync drops what
// the run control closed.
func TestDialogAnswers(t *testing.T) {
	c := common.NewCommon(true, 100, 30)
	var got []string
	confirm := steps.Prompt{Type: steps.PromptConfirm, Message: "Start?", Choices: []string{"yes", "no"},
		Reply: func(a steps.Answer) { got = append(got, a.Choice) }}
	s := newDialogSet(c)
	s.Engine(1, confirm)
	s.Engine(2, confirm)
	s.AskQuit(4)
	rc := dialogState(runctl.QuitDialog, 1, 2)
	if p := s.Shown(rc); p == nil || p.Purpose().Title != quitPurpose.Title || len(s.List(rc)) != 3 {
		t.Fatalf("shown %v, %d listed: want the quit question first of 3", p, len(s.List(rc)))
	}

	if _, ok := s.Answered(1); ok {
		t.Error("a dialog not answered counts as answered")
	}
	s.open[1].Answer(steps.Answer{Choice: "yes"}, false)
	if ev, ok := s.Answered(1); !ok || ev.Kind != runctl.DialogAnswered || ev.Dialog != 1 {
		t.Errorf("answered: %+v %v", ev, ok)
	}
	if _, ok := s.Answered(runctl.QuitDialog); ok {
		t.Error("the quit question counts as an engine dialog")
	}
	for _, answer := range []string{"yes", "no"} {
		ev, ok := s.QuitAnswer(prompt.AnsweredMsg{Prompt: steps.Prompt{Step: quitPromptStep}, Answer: steps.Answer{Choice: answer}})
		if !ok || ev.Kind != runctl.QuitAnswer || ev.Yes != (answer == "yes") {
			t.Errorf("quit %s: %+v %v", answer, ev, ok)
		}
	}
	if _, ok := s.QuitAnswer(prompt.AnsweredMsg{Prompt: confirm, Answer: steps.Answer{Choice: "yes"}}); ok {
		t.Error("an engine dialog's answer counts as the quit question's")
	}

	now := time.Now()
	if _, ok := s.Expired(2, now); ok {
		t.Error("a dialog without a deadline expired")
	}
	s.open[2].SetDeadline(now.Add(time.Minute), steps.Answer{Choice: "yes"})
	if _, ok := s.Expired(2, now); ok {
		t.Error("a dialog expired before its deadline")
	}
	if ev, ok := s.Expired(2, now.Add(time.Minute)); !ok || ev.Kind != runctl.DialogExpired || ev.Dialog != 2 {
		t.Errorf("at its deadline: %+v %v", ev, ok)
	}

	run := func(cmd tea.Cmd) {
		if cmd != nil {
			cmd()
		}
	}
	run(s.Answer(runctl.Effect{Kind: runctl.AnswerDialog, Dialog: 2, Auto: true}, now.Add(time.Minute)))
	s2 := newDialogSet(c)
	s2.Engine(1, confirm)
	run(s2.Answer(runctl.Effect{Kind: runctl.AnswerDialog, Dialog: 1}, now))
	run(s2.Answer(runctl.Effect{Kind: runctl.AnswerDialog, Dialog: 7}, now)) // none such: nothing
	if !slices.Equal(got, []string{"yes", "yes", "no"}) {
		t.Errorf("replies %q: want the one answered, booth mode's at the deadline, then the safe answer", got)
	}

	s.Sync([]runctl.Dialog{2})
	if len(s.open) != 1 || s.open[2] == nil {
		t.Errorf("after Sync: %v open, want dialog 2 only", len(s.open))
	}
	if s.Shown(runctl.New(false, false)) != nil {
		t.Error("a dialog shown with none open")
	}
}
