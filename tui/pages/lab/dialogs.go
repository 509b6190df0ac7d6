package lab

import (
	"fmt"
	"slices"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/components/prompt"
	"github.com/dpulab/dpulab/tui/pages/lab/runctl"
)

// quitPromptStep marks the page's own "quit while running?" dialog.
const quitPromptStep = "dpulab:quit"

// quitPurpose is the page's own question when q is pressed while a step
// runs: its buttons say what each answer does.
var quitPurpose = prompt.Purpose{
	Title:   "Quit while a step runs?",
	Choices: []prompt.Choice{{Value: "yes", Label: "Quit and clean up"}, {Value: "no", Label: "Keep running"}},
	Safe:    "no",
}

// dialogSet draws the dialogs the run control has open (State.Dialogs):
// the engine's questions and the page's own quit question, each a prompt.
// Which are open, which is shown and when one is answered on the person's
// behalf is the run control's: the set turns what happens to a prompt (a
// key, an answer, a deadline) into its events, and Sync drops the prompts
// of dialogs it closed.
type dialogSet struct {
	common.Common
	open map[runctl.Dialog]*prompt.Model
}

func newDialogSet(c common.Common) *dialogSet {
	return &dialogSet{Common: c, open: map[runctl.Dialog]*prompt.Model{}}
}

// Engine draws the engine's question e as dialog d (the run control's
// NextDialog); DialogOpened follows.
func (s *dialogSet) Engine(d runctl.Dialog, e steps.Prompt) tea.Cmd {
	p := prompt.New(s.Common, e)
	s.open[d] = p
	return p.Init()
}

// AskQuit draws the page's own question: quit while step i runs?
func (s *dialogSet) AskQuit(i int) {
	s.open[runctl.QuitDialog] = prompt.NewFor(s.Common, steps.Prompt{
		Step:    quitPromptStep,
		Type:    steps.PromptConfirm,
		Message: fmt.Sprintf("Step %d is still running. Quit anyway? It is stopped, then the lab's cleanup runs (servers it started are stopped). Your progress is kept.", i+1),
	}, quitPurpose)
}

// Answer performs an AnswerDialog effect: the dialog's safe answer, or
// booth mode's when its deadline passed (Auto).
func (s *dialogSet) Answer(f runctl.Effect, now time.Time) tea.Cmd {
	p := s.open[f.Dialog]
	switch {
	case p == nil:
		return nil
	case f.Auto:
		return p.Tick(now) // the answer booth mode set for its deadline
	default:
		return p.Answer(p.SafeAnswer(), false)
	}
}

// Sync drops the prompts of dialogs the run control no longer has open.
func (s *dialogSet) Sync(open []runctl.Dialog) {
	for d := range s.open {
		if !slices.Contains(open, d) {
			delete(s.open, d)
		}
	}
}

// Shown is the prompt of the dialog shown at rc, nil when none.
func (s *dialogSet) Shown(rc runctl.State) *prompt.Model {
	if d, ok := rc.Shown(); ok {
		return s.open[d]
	}
	return nil
}

// List is the prompts of rc's open dialogs, the shown one first.
func (s *dialogSet) List(rc runctl.State) []*prompt.Model {
	var ps []*prompt.Model
	for _, d := range rc.Dialogs {
		if p := s.open[d]; p != nil {
			ps = append(ps, p)
		}
	}
	return ps
}

// Key is the run control's event for k over the dialog shown at rc (sel:
// the selected step): esc cancels it (its safe answer), and q asks to
// quit over an engine dialog that takes no typing. Other keys are the
// dialog's.
func (s *dialogSet) Key(k tea.KeyMsg, rc runctl.State, sel int) (runctl.Event, bool) {
	d, ok := rc.Shown()
	p := s.open[d]
	if !ok || p == nil || p.Done() {
		// Answered, its message on the way: the answer stands.
		return runctl.Event{}, false
	}
	switch {
	case key.Matches(k, s.KeyMap.Cancel):
		return runctl.Event{Kind: runctl.Cancel}, true
	case key.Matches(k, s.KeyMap.Quit) && d != runctl.QuitDialog && p.Prompt().Type != steps.PromptSecret:
		return runctl.Event{Kind: runctl.Quit, Step: sel}, true
	}
	return runctl.Event{}, false
}

// QuitAnswer is the run control's event for the person's answer to the
// quit question, if it is still open.
func (s *dialogSet) QuitAnswer(msg prompt.AnsweredMsg) (runctl.Event, bool) {
	if _, open := s.open[runctl.QuitDialog]; !open || msg.Prompt.Step != quitPromptStep {
		return runctl.Event{}, false
	}
	return runctl.Event{Kind: runctl.QuitAnswer, Yes: msg.Answer.Choice == "yes"}, true
}

// Answered is DialogAnswered for engine dialog d once its prompt was
// answered. (A dialog the run control answered itself is closed already.)
func (s *dialogSet) Answered(d runctl.Dialog) (runctl.Event, bool) {
	if p := s.open[d]; d == runctl.QuitDialog || p == nil || !p.Done() {
		return runctl.Event{}, false
	}
	return runctl.Event{Kind: runctl.DialogAnswered, Dialog: d}, true
}

// Expired is DialogExpired for dialog d once booth mode's deadline for it
// passed at now.
func (s *dialogSet) Expired(d runctl.Dialog, now time.Time) (runctl.Event, bool) {
	if p := s.open[d]; p == nil || p.Deadline().IsZero() || now.Before(p.Deadline()) {
		return runctl.Event{}, false
	}
	return runctl.Event{Kind: runctl.DialogExpired, Dialog: d}, true
}
