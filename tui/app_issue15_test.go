package tui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/textinput"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/steps/results"
	"github.com/dpulab/dpulab/tui/keymap/keymaptest"
	"github.com/dpulab/dpulab/tui/pages/lab"
	"github.com/dpulab/dpulab/tui/session"
	"github.com/dpulab/dpulab/tui/session/sessiontest"
)

// The trainee's lab (issue 15): every message readable whole, the
// variables at any step, per-step output, the dashboard on d only, and
// every view's keys in its footer and in ?.

// longErr is an error as the engine words a failed command: longer than
// any screen's line.
const longErr = "on local: exit status 1 (command: { uname -a; ip -o link show dev 'enp3s0f0np0'; ethtool -i 'enp3s0f0np0'; } 2>&1 | tee /tmp/dpulab-check/iface.txt) — device enp3s0f0np0 does not exist; the interfaces here are lo, eth0 and docker0"

// trainingFake is a lab at its check step: two steps done, the check
// pending, its plans drawn from the variables as the engine's are.
func trainingFake() *sessiontest.Fake {
	info := func(id, title, kind string, st results.Status) steps.StepInfo {
		return steps.StepInfo{ID: id, Title: title, Kind: kind, Status: st}
	}
	f := &sessiontest.Fake{
		LabInfo: session.LabInfo{ID: "trainee", Title: "The trainee's lab", Duration: 10 * time.Minute,
			Roles: []string{"local"}, Local: true, ResumeAt: 2},
		Vars: []session.Variable{
			{Name: "instances", Type: "int", Default: "4", Min: "1", Max: "32", Description: "Server instances to start."},
			{Name: "port", Type: "int", Default: "7400", Min: "1024", Max: "65000", Description: "First instance's port."},
			{Name: "iface", Type: "string", Default: "enp3s0f0np0", Description: "The network interface the benchmark traffic crosses."},
		},
		Script: []sessiontest.Step{
			{Info: info("welcome", "What this lab does", "read", results.Done), Doc: "# Welcome", Final: results.Done},
			{Info: info("deploy", "Start the servers", "deploy", results.Done), Doc: "# Start the servers", Final: results.Done},
			{Info: info("check", "Check that the network interface named in the inventory carries the benchmark's traffic", "run", results.Pending),
				Doc:   "# Check the interface\n\nThe benchmark's traffic must cross the interface you name.",
				Emit:  []steps.Event{steps.Output{Step: "check", Line: runner.Line{Host: "local", Text: "Device \"enp3s0f0np0\" does not exist."}}},
				Final: results.Failed, Err: longErr,
				Hint: "The interface named by iface does not exist on this host: list them with `ip -o link` and set the right name with --set iface=NAME.",
				Tail: []string{"Linux lab 6.1.0 x86_64 GNU/Linux", "Device \"enp3s0f0np0\" does not exist.", "Cannot get driver information: No such device"}},
			{Info: info("bench", "Benchmark over TCP", "bench", results.Pending), Doc: "# Benchmark", Final: results.Done},
			{Info: info("cleanup", "Stop the servers", "cleanup", results.Pending), Doc: "# Cleanup", Final: results.Done},
		},
	}
	f.PlanVars = func(i int, v map[string]string) []steps.PlannedCommand {
		switch f.Script[i].Info.ID {
		case "deploy":
			return []steps.PlannedCommand{{Host: "local", Cmd: fmt.Sprintf("dpulab server --port %s --instances %s --bind 127.0.0.1", v["port"], v["instances"])}}
		case "check":
			return []steps.PlannedCommand{{Host: "local", Cmd: fmt.Sprintf("{ uname -a; ip -o link show dev '%s'; ethtool -i '%s'; } 2>&1 | tee /tmp/dpulab-check/iface.txt", v["iface"], v["iface"])}}
		case "bench":
			return []steps.PlannedCommand{{Host: "local", Cmd: "dpulab bench --target 127.0.0.1:" + v["port"]}}
		}
		return nil
	}
	return f
}

// openTrainee opens the lab at its check step and waits for the screen
// to show want too (a frame read here is not read again).
func openTrainee(t *testing.T, f *sessiontest.Fake, w, h int, want ...string) (*teatest.TestModel, *App) {
	t.Helper()
	app := testApp(Config{Catalog: &sessiontest.Catalog{Fakes: []*sessiontest.Fake{f}}})
	tm := start(t, app, w, h)
	waitFor(t, tm, "pick a lab")
	press(tm, km.Enter)
	waitFor(t, tm, append([]string{"Step 3/5"}, want...)...)
	return tm, app
}

var sizes = []struct {
	name string
	w, h int
}{{"80x24", 80, 24}, {"100x30", 100, 30}}

// TestWholeMessageView: a failed step's error, longer than any line, is
// cut on the lab screen and whole (wrapped) in the whole-text view.
func TestWholeMessageView(t *testing.T) {
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			tm, _ := openTrainee(t, trainingFake(), sz.w, sz.h)
			press(tm, km.Run)
			waitFor(t, tm, "step 3 failed", "w reads it whole")
			press(tm, km.Whole)
			waitFor(t, tm, "Step 3 in full", "Why it failed")
			app := finish(t, tm)
			if !app.Lab().Reading() {
				t.Fatal("the whole-text view is not open")
			}
			v := ansi.Strip(app.View())
			// Every word of the error is on the screen: nothing cut.
			for _, word := range strings.Fields(longErr) {
				if !strings.Contains(v, word) {
					t.Errorf("the whole-text view lacks %q of the error", word)
				}
			}
			if !strings.Contains(v, "esc close") {
				t.Errorf("the footer does not say how to close the view:\n%s", v)
			}
			requireGolden(t, app.View())
		})
	}
}

// TestWholeViewScrollsAndCloses: the view scrolls to the step's last
// output line and esc closes it.
func TestWholeViewScrollsAndCloses(t *testing.T) {
	tm, _ := openTrainee(t, trainingFake(), 80, 24)
	press(tm, km.Run)
	waitFor(t, tm, "step 3 failed")
	press(tm, km.Whole, km.Bottom)
	waitFor(t, tm, "» ✘ step failed")
	press(tm, km.Back)
	app := finish(t, tm)
	if app.Lab().Reading() {
		t.Fatal("esc left the whole-text view open")
	}
}

// TestVariablesFormFromCheckStep: v opens the form at a check step (a kind
// that does not ask for variables), the hint names v instead of --set, and
// the form says which steps a change affects: the check's commands change
// (a step not yet run), a port change redoes the done deploy and asks first.
func TestVariablesFormFromCheckStep(t *testing.T) {
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			f := trainingFake()
			tm, _ := openTrainee(t, f, sz.w, sz.h)
			press(tm, km.Run)
			waitFor(t, tm, "step 3 failed", "variables form (v)")
			press(tm, km.Vars)
			waitFor(t, tm, "Variables (at step 3", "enp3s0f0np0")
			// iface is the third field.
			press(tm, km.NextField, km.NextField)
			tm.Send(keymaptest.Press(textinput.DefaultKeyMap.DeleteBeforeCursor))
			tm.Type("eth0")
			press(tm, km.Enter)
			waitFor(t, tm, "new values set", "New commands for the steps not yet run: step 3")
			if f.SetTo["iface"] != "eth0" {
				t.Fatalf("SetVars got %v, want iface=eth0", f.SetTo)
			}
			// A port change redoes the deploy: the form asks first.
			press(tm, km.Vars)
			waitFor(t, tm, "Variables (at step 3")
			press(tm, km.NextField)
			tm.Send(keymaptest.Press(textinput.DefaultKeyMap.DeleteBeforeCursor))
			tm.Type("7500")
			press(tm, km.Enter)
			waitFor(t, tm, "will run again", "esc back to the values")
			app := finish(t, tm)
			if !app.Lab().Form().Confirming() {
				t.Fatal("the form applied a change that redoes a done step without asking")
			}
			requireGolden(t, app.View())
		})
	}
}

// TestVariablesFormOpened: the form opened from the check step, at both
// sizes.
func TestVariablesFormOpened(t *testing.T) {
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			tm, _ := openTrainee(t, trainingFake(), sz.w, sz.h)
			press(tm, km.Vars)
			waitFor(t, tm, "Variables (at step 3", "enp3s0f0np0", "enter apply")
			app := finish(t, tm)
			if app.Lab().Form() == nil {
				t.Fatal("v did not open the variables form at a check step")
			}
			requireGolden(t, app.View())
		})
	}
}

// TestConfirmedChangeRedoesTheDoneStep: confirming a port change marks the
// deploy to run again and selects it; esc at the confirmation restores the
// values before the form.
func TestConfirmedChangeRedoesTheDoneStep(t *testing.T) {
	f := trainingFake()
	tm, _ := openTrainee(t, f, 100, 30)
	press(tm, km.Vars)
	waitFor(t, tm, "Variables (at step 3")
	press(tm, km.NextField)
	tm.Send(keymaptest.Press(textinput.DefaultKeyMap.DeleteBeforeCursor))
	tm.Type("7500")
	press(tm, km.Enter)
	waitFor(t, tm, "will run again")
	press(tm, km.Cancel) // back to the values: they are taken back
	waitFor(t, tm, "enter apply · tab next field")
	press(tm, km.Enter)
	waitFor(t, tm, "will run again")
	press(tm, km.Enter)
	waitFor(t, tm, "step 2 runs again: enter runs it")
	app := finish(t, tm)
	l := app.Lab()
	if l.Form() != nil || l.Selected() != 1 || l.Steps()[1].Status != results.Pending {
		t.Fatalf("form=%v selected=%d deploy=%v: want the form closed and deploy selected, pending", l.Form() != nil, l.Selected(), l.Steps()[1].Status)
	}
	if f.SetTo["port"] != "7500" {
		t.Fatalf("SetVars got %v, want port=7500", f.SetTo)
	}
	cmds, _ := f.Plan(1)
	if len(cmds) != 1 || !strings.Contains(cmds[0].Cmd, "--port 7500") {
		t.Fatalf("deploy's plan is %v", cmds)
	}
}

// TestReopenedLabShowsFailedStep: a lab reopened with a step that failed
// in an earlier session shows that failure's error, host, command and
// hint (StepInfo.Failure, from saved progress) on the step, not only ✘;
// the hint names the form's key, and w reads it whole.
func TestReopenedLabShowsFailedStep(t *testing.T) {
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			f := trainingFake()
			f.Script[2].Info.Status = results.Failed
			f.Script[2].Info.Failure = &steps.Failure{
				Err: "exit status 1", Host: "local", Earlier: true,
				Cmd:  "{ uname -a; ip -o link show dev 'enp3s0f0np0'; ethtool -i 'enp3s0f0np0'; } 2>&1 | tee /tmp/dpulab-check/iface.txt",
				Hint: "The interface named by iface does not exist on this host: set the right name with --set iface=NAME.",
				Tail: []string{"Device \"enp3s0f0np0\" does not exist."},
			}
			tm, _ := openTrainee(t, f, sz.w, sz.h, "failed in an earlier session on local", "$ { uname -a;", "variables form (v)")
			app := finish(t, tm)
			if _, ok := app.Lab().Failure(2); ok {
				t.Fatal("the page holds a failure of this session it never saw")
			}
			requireGolden(t, app.View())
		})
	}
}

// TestReopenedLabWithoutSavedReason: progress saved before failures were
// kept says the step failed and that no reason was saved.
func TestReopenedLabWithoutSavedReason(t *testing.T) {
	f := trainingFake()
	f.Script[2].Info.Status = results.Failed
	tm, _ := openTrainee(t, f, 80, 24, "failed: in an earlier session", "saved no reason")
	finish(t, tm)
}

// TestOutputIsPerStep: a step's output shows under it only; the step that
// just ended keeps the pane, titled as its own, until the next one starts
// or the person moves.
func TestOutputIsPerStep(t *testing.T) {
	tm, _ := openQuickstart(t, quickstartFake(), 100, 30)
	press(tm, km.Run)
	waitFor(t, tm, "step 2 done", "Output of step 2 (done)", "server:7400 listening")
	press(tm, km.Prev, km.Next)
	waitFor(t, tm, "no output yet")
	app := finish(t, tm)
	l := app.Lab()
	if l.Selected() != 2 || len(l.Output().Lines()) != 0 || len(l.Output().StepLines(1)) != 2 {
		t.Fatalf("selected %d shows %q; step 2 holds %d lines", l.Selected(), l.Output().Lines(), len(l.Output().StepLines(1)))
	}
}

// TestDashboardOpensOnlyWithD: a bench step runs with the steps view
// shown; d opens the dashboard and it stays when the step ends; d closes it.
func TestDashboardOpensOnlyWithD(t *testing.T) {
	f := quickstartFake()
	f.Script[1].Info.Status = results.Done
	block := make(chan struct{})
	f.Script[2].Block = block
	f.Vars = nil // no form before the bench
	app := testApp(Config{Catalog: &sessiontest.Catalog{Fakes: []*sessiontest.Fake{f}}})
	tm := start(t, app, 100, 30)
	waitFor(t, tm, "pick a lab")
	press(tm, km.Enter)
	waitFor(t, tm, "Step 3/4")
	press(tm, km.Run)
	waitFor(t, tm, "running step 3", "d shows the live dashboard")
	if v := app.Lab().ActiveView(); v != lab.ViewSteps {
		t.Errorf("the dashboard opened by itself (view %v)", v)
	}
	press(tm, km.Dashboard)
	waitFor(t, tm, "d close dashboard")
	close(block)
	waitFor(t, tm, "step 3 done")
	if v := app.Lab().ActiveView(); v != lab.ViewDashboard {
		t.Errorf("the dashboard closed by itself when the step ended (view %v)", v)
	}
	press(tm, km.Dashboard)
	app = finish(t, tm)
	if v := app.Lab().ActiveView(); v != lab.ViewSteps {
		t.Fatalf("d did not close the dashboard (view %v)", v)
	}
}

// TestEveryViewListsItsKeys: the footer and ? of each view list that
// view's keys (the compare view's b among them, the lab screen's run keys
// not), at both sizes.
func TestEveryViewListsItsKeys(t *testing.T) {
	two := func(t *testing.T) *results.Results {
		r := loadRecorded(t)
		b := r.Benches[0]
		b.Step, b.Title = b.Step+"-again", b.Title+" again"
		r.Benches = append(r.Benches, b)
		return r
	}
	views := []struct {
		name       string
		open       func(t *testing.T, tm *teatest.TestModel, foot ...string)
		foot, help []string
		notHelp    []string
	}{
		{"steps", nil, []string{"enter run", "w read whole", "v variables"},
			[]string{"enter run", "v variables", "w read whole", "d dashboard", "c compare view"}, nil},
		{"whole", func(t *testing.T, tm *teatest.TestModel, foot ...string) {
			press(tm, km.Whole)
			waitFor(t, tm, append(foot, "in full")...)
		},
			[]string{"esc close"}, []string{"pgdn page down", "esc close", "G/end bottom"}, []string{"enter run"}},
		{"variables", func(t *testing.T, tm *teatest.TestModel, foot ...string) {
			press(tm, km.Vars)
			waitFor(t, tm, append(foot, "Variables (at")...)
		},
			// ? is a character the form's fields take: no full help.
			[]string{"enter apply", "esc cancel"}, nil, nil},
		{"dashboard", func(t *testing.T, tm *teatest.TestModel, foot ...string) {
			press(tm, km.Dashboard)
			waitFor(t, tm, append(foot, "Live bench")...)
		},
			[]string{"d close dashboard", "esc back"}, []string{"d close dashboard", "c compare view"}, []string{"enter run", "s skip"}},
		{"compare", func(t *testing.T, tm *teatest.TestModel, foot ...string) {
			press(tm, km.Compare)
			waitFor(t, tm, append(foot, "Compare")...)
		},
			[]string{"1 table", "b next bench", "esc back"}, []string{"1 table", "4 TCO", "b next bench", "esc back"}, []string{"enter run", "s skip"}},
	}
	for _, sz := range sizes {
		for _, v := range views {
			t.Run(v.name+"_"+sz.name, func(t *testing.T) {
				f := trainingFake()
				f.Res = two(t)
				// The narrow footer keeps q and ? (the keys before give way):
				// ? has the rest.
				var foot []string
				if sz.w >= 100 {
					foot = v.foot
				}
				if v.open == nil {
					tm, _ := openTrainee(t, f, sz.w, sz.h, foot...)
					checkHelp(t, tm, v.name, v.help, v.notHelp)
					return
				}
				tm, _ := openTrainee(t, f, sz.w, sz.h)
				v.open(t, tm, foot...)
				checkHelp(t, tm, v.name, v.help, v.notHelp)
			})
		}
	}
}

// checkHelp presses ? and finds the view's keys in the full help, and
// none of another view's.
func checkHelp(t *testing.T, tm *teatest.TestModel, view string, want, not []string) {
	t.Helper()
	if want == nil {
		requireGolden(t, finish(t, tm).View())
		return
	}
	press(tm, km.Help)
	// The full help aligns keys and words in columns: compare
	// with runs of spaces made one.
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		s := spaces.ReplaceAllString(ansi.Strip(string(b)), " ")
		for _, w := range want {
			if !strings.Contains(s, w) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
	app := finish(t, tm)
	screen := ansi.Strip(app.View())
	lines := strings.Split(screen, "\n")
	help := spaces.ReplaceAllString(strings.Join(lines[len(lines)-7:], "\n"), " ")
	for _, k := range want {
		if !strings.Contains(help, k) {
			t.Errorf("? lacks %q:\n%s", k, help)
		}
	}
	for _, k := range not {
		if strings.Contains(help, k) {
			t.Errorf("? of the %s view lists %q, a key of another view:\n%s", view, k, help)
		}
	}
	requireGolden(t, app.View())
}

var spaces = regexp.MustCompile(`[ \t]+`)
