package tui

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/steps/results"
	"github.com/dpulab/dpulab/tui/session"
	"github.com/dpulab/dpulab/tui/session/sessiontest"
)

// A task step (issue 15): the trainee opens a real shell on the step's
// host, the TUI comes back and checks the work; c checks again, m shows
// how, f has dpulab do it; and the rendered-files view shows what the
// template and deploy steps write.

const (
	taskConf = "/tmp/dpulab-quickstart-x/redis.conf"
	// taskDoc is the task step's text, as the lab's would read.
	taskDoc = "# Edit the redis.conf yourself\n\nSet `loglevel warning` in redis.conf, then exit the shell: the lab checks it."
)

// taskFake is a lab at its task step (step 3): the config rendered, the
// servers not started yet.
func taskFake() *sessiontest.Fake {
	info := func(id, title, kind string, st results.Status) steps.StepInfo {
		return steps.StepInfo{ID: id, Title: title, Kind: kind, Status: st}
	}
	conf := "# redis.conf for the first instance of lab quickstart on local.\nbind 127.0.0.1\nport 7400\n\nsave \"\"\nappendonly no\nloglevel notice\n"
	inst := func(port string) steps.RenderedFile {
		return steps.RenderedFile{Step: "deploy", Host: "local", Path: "/tmp/dpulab-quickstart-x/local-" + port + "/redis.conf", Source: "assets/redis.conf.tmpl",
			Content: "# redis.conf for lab quickstart: group local, instance on local.\nbind 127.0.0.1\nport " + port + "\nunixsocket /tmp/dpulab-quickstart-x/local-" + port + "/redis.sock\n"}
	}
	return &sessiontest.Fake{
		LabInfo: session.LabInfo{ID: "quickstart", Title: "Quickstart: TCP loopback against a Unix socket", Duration: 3 * time.Minute,
			Roles: []string{"local"}, Local: true, ResumeAt: 2},
		Script: []sessiontest.Step{
			{Info: info("welcome", "What this lab does", "read", results.Done), Doc: "# Quickstart", Final: results.Done},
			{Info: info("config", "Render a redis.conf", "template", results.Done), Doc: "# Render a redis.conf", Final: results.Done,
				Plan: []steps.PlannedCommand{{Host: "local", Cmd: "# write " + taskConf + " (rendered from redis.conf.tmpl)"}}},
			{Info: info("edit-config", "Edit the redis.conf yourself", "task", results.Pending), Doc: taskDoc, Final: results.Done,
				Plan: []steps.PlannedCommand{
					{Host: "local", Cmd: "sed -i 's/^loglevel .*/loglevel warning/' " + taskConf},
					{Host: "local", Cmd: "grep -x 'loglevel warning' " + taskConf},
				},
				Err: "on local: the check failed (exit status 1)", Hint: "The check wants a line that reads exactly \"loglevel warning\"."},
			{Info: info("deploy", "Start the servers", "deploy", results.Pending), Doc: "# Start the servers", Final: results.Done},
			{Info: info("cleanup", "Stop the servers", "cleanup", results.Pending), Doc: "# Cleanup", Final: results.Done},
		},
		Tasks: sessiontest.Tasks{
			ShellArgv: []string{"true"},
			Files: map[int][]steps.RenderedFile{
				1: {{Step: "config", Host: "local", Path: taskConf, Source: "redis.conf.tmpl", Content: conf}},
				3: {inst("7400"), inst("7401")},
			},
			Solutions: map[int][]steps.TaskSolution{2: {{Host: "local",
				Run:    []string{"sed -i 's/^loglevel .*/loglevel warning/' " + taskConf},
				Verify: "grep -x 'loglevel warning' " + taskConf}}},
		},
	}
}

func openTask(t *testing.T, f *sessiontest.Fake, w, h int, want ...string) (*teatest.TestModel, *App) {
	t.Helper()
	app := testApp(Config{Catalog: &sessiontest.Catalog{Fakes: []*sessiontest.Fake{f}}})
	tm := start(t, app, w, h)
	waitFor(t, tm, "pick a lab")
	press(tm, km.Enter)
	waitFor(t, tm, append([]string{"Step 3/5: Edit the redis.conf yourself"}, want...)...)
	return tm, app
}

// TestTaskShellThenCheck: the shell key hands the terminal to the
// session's shell (a real process, here true); when it exits the page
// checks the step (CheckTask, never RunStep) and moves on.
func TestTaskShellThenCheck(t *testing.T) {
	for _, k := range []struct {
		name string
		run  func(tm *teatest.TestModel)
	}{
		{"shell key", func(tm *teatest.TestModel) { press(tm, km.Shell) }},
		{"enter", func(tm *teatest.TestModel) { press(tm, km.Run) }},
	} {
		t.Run(k.name, func(t *testing.T) {
			f := taskFake()
			tm, _ := openTask(t, f, 100, 30)
			k.run(tm)
			waitFor(t, tm, "step 3 done", "enter runs step 4")
			app := finish(t, tm)
			shells, checks := f.Calls()
			if !slices.Equal(shells, []int{2}) || !slices.Equal(checks, []int{2}) || slices.Contains(f.Ran, 2) {
				t.Fatalf("shells %v, checks %v, ran %v: want one shell and one check of step 3, no do-it-for-me", shells, checks, f.Ran)
			}
			if l := app.Lab(); l.Steps()[2].Status != results.Done || l.Selected() != 3 {
				t.Fatalf("step 3 %s, selected %d", l.Steps()[2].Status, l.Selected()+1)
			}
		})
	}
}

// TestTaskCheckFails: c runs the check alone; a failed check shows the
// step's hint and leaves the task's keys in the footer.
func TestTaskCheckFails(t *testing.T) {
	f := taskFake()
	f.Checked = map[int]results.Status{2: results.Failed}
	// The footer is drawn once: look for it as the step opens.
	tm, _ := openTask(t, f, 100, 30, "t shell", "c check", "f do it for me")
	press(tm, km.Check)
	waitFor(t, tm, "step 3 failed", "loglevel warning", "c checks again")
	app := finish(t, tm)
	if _, checks := f.Calls(); !slices.Equal(checks, []int{2}) || len(f.Ran) != 0 {
		t.Fatalf("checks %v, ran %v", checks, f.Ran)
	}
	if v := app.Lab().ActiveView(); v != 0 {
		t.Fatalf("c on a task step opened view %v, want the steps view (c checks here)", v)
	}
}

// TestTaskDoItForMe: f runs the step (RunStep: its commands, then its
// check), as a headless run does.
func TestTaskDoItForMe(t *testing.T) {
	f := taskFake()
	tm, _ := openTask(t, f, 100, 30)
	press(tm, km.DoIt)
	waitFor(t, tm, "step 3 done")
	finish(t, tm)
	if shells, checks := f.Calls(); len(shells) != 0 || len(checks) != 0 || !slices.Equal(f.Ran, []int{2}) {
		t.Fatalf("shells %v, checks %v, ran %v: want step 3 run once", shells, checks, f.Ran)
	}
}

// TestRunAllWaitsAtTask: run all stops at a task step and says it is the
// trainee's; once the work passes its check, the run goes on by itself.
func TestRunAllWaitsAtTask(t *testing.T) {
	f := taskFake()
	f.Script[1].Info.Status = results.Pending
	f.LabInfo.ResumeAt = 1
	app := testApp(Config{Catalog: &sessiontest.Catalog{Fakes: []*sessiontest.Fake{f}}})
	tm := start(t, app, 100, 30)
	waitFor(t, tm, "pick a lab")
	press(tm, km.Enter)
	waitFor(t, tm, "Step 2/5")
	press(tm, km.RunAll)
	waitFor(t, tm, "step 3 is yours to do")
	if slices.Contains(f.Ran, 2) {
		t.Fatalf("run all did the task step itself: ran %v", f.Ran)
	}
	press(tm, km.Run)
	waitFor(t, tm, "results written")
	finish(t, tm)
	if !slices.Equal(f.Ran, []int{1, 3, 4}) {
		t.Fatalf("ran %v, want 2, then (after the shell and its check) 4 and 5", f.Ran)
	}
}

// TestTaskViews: the task step's footer and ?, show me (m) and the
// rendered-files view (F, from the task step: every file the lab writes;
// from a template step: its own), with their footers and ?, at 80x24 and
// 100x30.
func TestTaskViews(t *testing.T) {
	views := []struct {
		name       string
		keys       []key.Binding
		want, help []string
	}{
		{"task", nil, nil,
			[]string{"t open a shell (enter too)", "c check my work", "m show me", "f do it for me", "F rendered files"}},
		{"showme", []key.Binding{km.ShowMe}, []string{"Step 3: show me", "these commands do it", "sed -i 's/^loglevel .*/loglevel warning/'", "the lab checks it with"},
			[]string{"esc close", "m close"}},
		{"files", []key.Binding{km.Files}, []string{"Rendered files", "About these files", "local:" + taskConf, "step 2 (config, done) writes it", "loglevel notice"},
			[]string{"esc close", "F close"}},
		{"files_of_step", []key.Binding{km.Prev, km.Files}, []string{"Step 2: rendered files", "port 7400", "from redis.conf.tmpl"}, []string{"F close"}},
	}
	for _, sz := range sizes {
		for _, v := range views {
			for _, help := range []bool{false, true} {
				name := v.name + "_" + sz.name
				if help {
					name += "_help"
				}
				t.Run(name, func(t *testing.T) {
					tm, _ := openTask(t, taskFake(), sz.w, sz.h)
					press(tm, v.keys...)
					if len(v.want) > 0 {
						waitFor(t, tm, v.want...)
					}
					if !help {
						// The view itself with its footer.
						requireGolden(t, finish(t, tm).View())
						return
					}
					checkHelp(t, tm, v.name, v.help, []string{"enter run", "compare view"})
				})
			}
		}
	}
}

// TestRenderedFilesSanitised: a file's content, path and host from
// outside the binary reach the screen without escape sequences; the lines
// and their layout stay.
func TestRenderedFilesSanitised(t *testing.T) {
	f := taskFake()
	f.Files[1] = []steps.RenderedFile{{Step: "config", Host: "local" + hostileRaw, Path: taskConf + hostileRaw,
		Content: "port 7400\n# " + hostileRaw + " a comment\nbind\t127.0.0.1\n"}}
	tm, _ := openTask(t, f, 100, 30)
	press(tm, km.Prev, km.Files)
	waitFor(t, tm, "Step 2: rendered files", "a comment", "bind    127.0.0.1")
	app := finish(t, tm)
	screen := app.View()
	if strings.ContainsAny(ansi.Strip(screen), "\x1b\x07\u009b\u202e") {
		t.Fatalf("the rendered-files view draws outside text unfiltered:\n%q", screen)
	}
}

// TestTaskWholeTextKeepsTheAnswer: w on a task step shows everything but
// the answer, which waits for show me as in the commands pane.
func TestTaskWholeTextKeepsTheAnswer(t *testing.T) {
	tm, _ := openTask(t, taskFake(), 100, 30)
	press(tm, km.Whole)
	waitFor(t, tm, "Step 3 in full", "yours to do in a shell: t opens one, m shows the commands")
	screen := ansi.Strip(finish(t, tm).View())
	if strings.Contains(screen, "sed -i") {
		t.Fatalf("the whole-text view of a task step gives its answer away:\n%s", screen)
	}
}

// TestTaskSSHFailureIsNotChecked: ssh's own failure (exit status 255)
// is said as such, and no check runs: there was no work to check.
func TestTaskSSHFailureIsNotChecked(t *testing.T) {
	sshStub := filepath.Join(t.TempDir(), "ssh")
	if err := os.WriteFile(sshStub, []byte("#!/bin/sh\nexit 255\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := taskFake()
	f.ShellArgv = []string{sshStub}
	tm, _ := openTask(t, f, 100, 30)
	press(tm, km.Shell)
	waitFor(t, tm, "ssh could not connect to the host")
	finish(t, tm)
	if shells, checks := f.Calls(); len(shells) != 1 || len(checks) != 0 {
		t.Fatalf("shells %v, checks %v: want one shell, no check", shells, checks)
	}
}
