package lab

import (
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/steps/results"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/keymap/keymaptest"
	"github.com/dpulab/dpulab/tui/pages/lab/runctl"
	"github.com/dpulab/dpulab/tui/session"
	"github.com/dpulab/dpulab/tui/session/sessiontest"
)

// page drives the lab page without a terminal: commands run when settle
// is called, one at a time, and their messages go back to the page in
// order, so a test can act between them (press a key while the results
// are being written).
type page struct {
	t    *testing.T
	m    *Model
	cmds []tea.Cmd
	msgs []tea.Msg
	// root holds what the page asked of the root (QuitMsg, BackMsg…).
	root []tea.Msg
}

func newPage(t *testing.T, f *sessiontest.Fake) *page {
	return &page{t: t, m: New(common.NewCommon(true, 100, 30), f, Options{})}
}

func (p *page) send(msg tea.Msg) {
	_, cmd := p.m.Update(msg)
	p.cmds = append(p.cmds, cmd)
}

func (p *page) press(name string) { p.send(keymaptest.Msg(name)) }

func (p *page) exec(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			p.exec(c)
		}
	case spinner.TickMsg, nil:
		// The step list's spinner would tick forever.
	case QuitMsg, BackMsg, RestartMsg, StartOverMsg:
		p.root = append(p.root, msg)
	default:
		p.msgs = append(p.msgs, msg)
	}
}

// settle runs commands and delivers their messages until none is left, or
// until hold says to keep one back: it is returned, undelivered.
func (p *page) settle(hold func(tea.Msg) bool) tea.Msg {
	for len(p.cmds) > 0 || len(p.msgs) > 0 {
		if len(p.msgs) > 0 {
			msg := p.msgs[0]
			p.msgs = p.msgs[1:]
			if hold != nil && hold(msg) {
				return msg
			}
			p.send(msg)
			continue
		}
		cmd := p.cmds[0]
		p.cmds = p.cmds[1:]
		p.exec(cmd)
	}
	return nil
}

func script(done int, kinds ...string) []sessiontest.Step {
	var ss []sessiontest.Step
	for i, k := range kinds {
		st := results.Pending
		if i < done {
			st = results.Done
		}
		ss = append(ss, sessiontest.Step{Info: steps.StepInfo{ID: k + string(rune('a'+i)), Title: k, Kind: k, Status: st}, Final: results.Done})
	}
	return ss
}

// TestResumedCompareShowsThisAttempt: a resumed run's compare view first
// shows the results read at open (an earlier attempt's, which the compare
// view labels); once the compare step ran again here, c shows this
// attempt's figures, not those read at open.
func TestResumedCompareShowsThisAttempt(t *testing.T) {
	earlier := &results.Results{Lab: "l", RunID: "earlier", Benches: []results.Compare{{Step: "comparec"}}}
	f := &sessiontest.Fake{Script: script(2, "read", "read", "compare", "read"), Res: earlier}
	f.LabInfo.ID = "l"
	p := newPage(t, f)
	if p.m.Selected() != 2 {
		t.Fatalf("resumed at step %d, want 3", p.m.Selected()+1)
	}
	p.press("c")
	if p.m.ActiveView() != ViewCompare || p.m.Compare().Results() != earlier {
		t.Fatalf("view %v shows %v: want the compare view with the results read at open", p.m.ActiveView(), p.m.Compare().Results())
	}
	p.press("esc")
	current := &results.Results{Lab: "l", RunID: "current", Benches: []results.Compare{{Step: "comparec"}}}
	f.Res = current // what the engine holds once this attempt's compare ran
	p.press("enter")
	p.settle(nil)
	if f.Ran[0] != 2 || p.m.Running() != -1 || p.m.RunState().Phase != runctl.Idle {
		t.Fatalf("ran %v, running %d, phase %v", f.Ran, p.m.Running(), p.m.RunState().Phase)
	}
	p.press("c")
	if got := p.m.Compare().Results(); got != current {
		t.Fatalf("compare view shows run %q after the compare ran here, want this attempt's (%q)", got.RunID, current.RunID)
	}
}

// TestQuitRecordsTheKey: q at rest cleans up, records the run as left by
// q (never as killed: it was left cleanly) and asks the root to quit; q
// while a step runs asks first, and yes does the same.
func TestQuitRecordsTheKey(t *testing.T) {
	for _, running := range []bool{false, true} {
		f := &sessiontest.Fake{Script: script(0, "read", "read")}
		p := newPage(t, f)
		if running {
			p.press("enter") // its command waits in p.cmds: the step runs
			p.press("q")
			if p.m.RunState().Phase != runctl.AskQuit || p.m.Prompt() == nil {
				t.Fatalf("q while running: phase %v, dialog %v", p.m.RunState().Phase, p.m.Prompt() != nil)
			}
			p.press("y")
		} else {
			p.press("q")
		}
		p.settle(nil)
		cleaned, _ := f.Counts()
		if cleaned != 1 || !slices.Equal(f.Left, []string{runctl.ByQuitKey}) || len(p.root) != 1 || p.root[0] != (QuitMsg{}) {
			t.Fatalf("running=%v: cleaned %d, left by %q, root got %v", running, cleaned, f.Left, p.root)
		}
	}
}

// TestSignalWhileWritingResults: a signal while the results are being
// written is not lost: once they are written the page cleans up, records
// the signal and quits.
func TestSignalWhileWritingResults(t *testing.T) {
	f := &sessiontest.Fake{Script: script(0, "read")}
	p := newPage(t, f)
	p.press("enter")
	held := p.settle(func(msg tea.Msg) bool { _, ok := msg.(FinishedMsg); return ok })
	if held == nil || p.m.Busy() != "writing results" {
		t.Fatalf("held %v, busy %q: want the results being written", held, p.m.Busy())
	}
	p.cmds = append(p.cmds, p.m.ShutdownBy("SIGTERM"))
	p.send(held)
	p.settle(nil)
	cleaned, finished := f.Counts()
	if finished != 1 || cleaned != 1 || !slices.Equal(f.Left, []string{"SIGTERM"}) || len(p.root) != 1 || p.root[0] != (QuitMsg{}) {
		t.Fatalf("finished %d, cleaned %d, left by %q, root got %v", finished, cleaned, f.Left, p.root)
	}
}

// TestEngineDialogsStacked: two engine questions open while a step runs
// stack, the first shown; q asks to quit in front of them and esc there
// keeps running; each answer shows the next; the step's end gives the one
// still open its safe answer. The page draws what the run control has open.
func TestEngineDialogsStacked(t *testing.T) {
	f := &sessiontest.Fake{Script: script(0, "run", "read")}
	p := newPage(t, f)
	p.press("enter") // its command waits in p.cmds: the step runs
	var got []string
	reply := func(name string) func(steps.Answer) {
		return func(a steps.Answer) { got = append(got, name+"="+a.Choice) }
	}
	p.send(session.EventsMsg{steps.Prompt{Step: "runa", Type: steps.PromptConfirm, Message: "Start the servers?", Choices: []string{"yes", "no"}, Reply: reply("confirm")}})
	p.send(session.EventsMsg{steps.Prompt{Step: "runa", Type: steps.PromptHostKey, Host: "server1", KeyType: "ssh-ed25519", Fingerprint: "SHA256:x", Reply: reply("hostkey")}})
	shown := func(want string, n int, phase runctl.Phase) {
		t.Helper()
		pr := p.m.Prompt()
		if pr == nil || pr.Purpose().Title != want || len(p.m.Prompts()) != n || p.m.RunState().Phase != phase {
			t.Fatalf("shown %v, %d open, phase %v; want %q, %d open, %v", pr != nil, len(p.m.Prompts()), p.m.RunState().Phase, want, n, phase)
		}
		if !strings.Contains(ansi.Strip(p.m.View()), want) {
			t.Fatalf("the screen lacks %q", want)
		}
	}
	shown("Confirm", 2, runctl.Asking)
	p.press("q")
	shown("Quit while a step runs?", 3, runctl.AskQuit)
	p.press("esc") // keep running: the engine's question again
	shown("Confirm", 2, runctl.Asking)
	p.press("y")
	stepDone := func(msg tea.Msg) bool { _, ok := msg.(StepDoneMsg); return ok }
	held := p.settle(stepDone) // the fake step returns at once: its end waits here
	if held == nil || p.settle(stepDone) != nil {
		t.Fatal("want the step's one end held")
	}
	shown("Unknown host key", 1, runctl.Asking)
	p.send(held) // the step ends with the host key question open
	p.settle(nil)
	if p.m.Prompt() != nil || p.m.RunState().Phase != runctl.Idle || !slices.Equal(got, []string{"confirm=yes", "hostkey=refuse"}) {
		t.Fatalf("dialog %v, phase %v, answers %q: want none open, idle, yes then the safe answer", p.m.Prompt() != nil, p.m.RunState().Phase, got)
	}
}

// TestPasswordDialogTakesQ: q is a letter of a password, not a quit: over
// a password dialog it is typed; esc cancels the dialog (its safe answer).
func TestPasswordDialogTakesQ(t *testing.T) {
	f := &sessiontest.Fake{Script: script(0, "run")}
	p := newPage(t, f)
	p.press("enter")
	var got []steps.Answer
	p.send(session.EventsMsg{steps.Prompt{Type: steps.PromptSecret, Host: "server1", Message: "sudo password", Reply: func(a steps.Answer) { got = append(got, a) }}})
	p.press("q")
	if p.m.RunState().Phase != runctl.Asking || len(p.m.Prompts()) != 1 || !strings.Contains(ansi.Strip(p.m.View()), "•") {
		t.Fatalf("q over a password: phase %v, %d dialogs; want it typed into the password", p.m.RunState().Phase, len(p.m.Prompts()))
	}
	p.press("esc")
	if p.m.RunState().Phase != runctl.Running || p.m.Prompt() != nil || len(got) != 1 || got[0].Secret != "" || got[0].Choice != "cancel" {
		t.Fatalf("esc: phase %v, answers %+v; want the safe answer and the step running on", p.m.RunState().Phase, got)
	}
}
