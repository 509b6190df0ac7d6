//go:build unix

package steps

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/labs"
	stepkind "github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/results"
)

// TestEveryLabKindIsRegistered keeps the two halves of a step kind in step:
// every kind lab.yaml accepts has a kind file here, and no kind file
// registers a kind that labs does not read.
func TestEveryLabKindIsRegistered(t *testing.T) {
	if u := labs.Unlinked(); len(u) > 0 {
		t.Errorf("labs has no syntax for kinds %v: their packages are not in kinds_list.go", u)
	}
	for _, k := range labs.RegisteredKinds() {
		if _, ok := stepkind.Lookup(k); !ok {
			t.Errorf("labs reads kind %q, but no kind package (kinds_list.go) or kind_*.go registers it", k)
		}
	}
	for _, k := range stepkind.Names() {
		if !slices.Contains(labs.RegisteredKinds(), k) {
			t.Errorf("kind %q is registered, but labs does not read it", k)
		}
	}
	if DescribeKind("bench").View != ViewDashboard || !DescribeKind("deploy").AsksVars || DescribeKind("read").Note == "" || DescribeKind("nonsense") != (KindInfo{}) {
		t.Error("DescribeKind does not report the kinds' registrations")
	}
}

// TestPlanIsWhatRuns: the commands announced when a step starts are Plan's,
// and each host runs exactly its planned commands.
func TestPlanIsWhatRuns(t *testing.T) {
	a := &fakeTarget{name: "a", handle: func(cmd string) ([]string, int) {
		if cmd == "cat done" {
			return []string{"ok"}, 0
		}
		return nil, 0
	}}
	rec := &recorder{}
	e := fakeLab(t, fakeRunLab, map[string]*fakeTarget{"a": a}, rec)
	planned, err := e.Plan(0)
	if err != nil {
		t.Fatal(err)
	}
	if st := e.RunStep(testCtx(t, 10*time.Second), 0); st != results.Done {
		t.Fatalf("status %v: %s", st, rec.finished()["say"].Err)
	}
	var announced []PlannedCommand
	for _, ev := range rec.events() {
		if s, ok := ev.(StepStarted); ok {
			announced = s.Commands
		}
	}
	if !slices.Equal(announced, planned) {
		t.Errorf("announced %+v, planned %+v", announced, planned)
	}
	var want []string
	for _, c := range planned {
		if c.Host == "a" {
			want = append(want, c.Cmd)
		}
	}
	if got := userCommands(a.commands()); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("host a ran:\n%s\nplanned:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestPlanReportsWhatTheRunWould: a bad value is the plan's error (the dry
// run and preflight say it), not only the run's.
func TestPlanReportsWhatTheRunWould(t *testing.T) {
	lab := strings.Replace(fakeRunLab, "    hint: the lab's hint", "    timeout: '{{.vars.msg}}'", 1)
	lab = strings.Replace(lab, "default: hello", "default: 5s", 1)
	e := fakeLab(t, lab, map[string]*fakeTarget{"a": {name: "a"}}, &recorder{})
	if err := e.SetVars(map[string]string{"msg": "forever"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Plan(0); err == nil || !strings.Contains(err.Error(), "timeout") {
		t.Errorf("Plan with a timeout that is not a duration: %v", err)
	}
}

// TestFailureIsKeptForTheNextSession: a failed step's error, host, command,
// hint and last lines are in Steps() at once and, from saved progress, in
// the next engine's (the TUI's reopened lab).
func TestFailureIsKeptForTheNextSession(t *testing.T) {
	bad := &fakeTarget{name: "b", handle: func(cmd string) ([]string, int) {
		if strings.HasPrefix(cmd, "echo \"in quotes") {
			return []string{"disk full"}, 3
		}
		return nil, 0
	}}
	e := fakeLab(t, fakeRunLab, map[string]*fakeTarget{"b": bad}, &recorder{})
	if st := e.RunStep(testCtx(t, 10*time.Second), 0); st != results.Failed {
		t.Fatalf("status %v, want failed", st)
	}
	check := func(who string, f *Failure, earlier bool) {
		t.Helper()
		if f == nil {
			t.Fatalf("%s: no failure for the failed step", who)
		}
		if f.Host != "b" || !strings.Contains(f.Err, "exit status 3") || !strings.HasPrefix(f.Cmd, `echo "in quotes`) || f.Hint != "the lab's hint" || strings.Join(f.Tail, "|") != "disk full" || f.Earlier != earlier {
			t.Errorf("%s: failure = %+v", who, f)
		}
	}
	check("this session", e.Steps()[0].Failure, false)
	opts := e.opts
	opts.Emit = func(Event) {}
	again, err := New(e.lab, opts)
	if err != nil {
		t.Fatal(err)
	}
	check("next session", again.Steps()[0].Failure, true)
}

const fakeTaskLab = `
id: faketask
title: Fake task
summary: a step the trainee does by hand
duration: 1m
roles:
  web: web servers
steps:
  - id: edit
    title: Edit the file
    kind: task
    on: [web]
    run: echo maxmemory 64mb >> conf
    verify:
      run: grep -q '^maxmemory 64mb' conf
`

// TestKindTask: checked by hand, only verify runs (and decides); done for
// the trainee, the commands run, then verify.
func TestKindTask(t *testing.T) {
	done := false
	a := &fakeTarget{name: "a", handle: func(cmd string) ([]string, int) {
		switch {
		case strings.HasPrefix(cmd, "echo maxmemory"):
			done = true
		case strings.HasPrefix(cmd, "grep") && !done:
			return nil, 1
		}
		return nil, 0
	}}
	rec := &recorder{}
	e := fakeLab(t, fakeTaskLab, map[string]*fakeTarget{"a": a}, rec)
	ctx := testCtx(t, 10*time.Second)
	if st := e.CheckTask(ctx, 0); st != results.Failed {
		t.Fatalf("checked before the work was done: %v", st)
	}
	if got := userCommands(a.commands()); len(got) != 1 || !strings.HasPrefix(got[0], "grep") {
		t.Errorf("a check by hand ran %q, want verify only", got)
	}
	if st := e.RunStep(ctx, 0); st != results.Done {
		t.Fatalf("do it for me: %v: %s", st, rec.finished()["edit"].Err)
	}
	if got := userCommands(a.commands()); len(got) != 3 || !strings.HasPrefix(got[1], "echo maxmemory") {
		t.Errorf("do it for me ran %q, want the commands then verify", got)
	}
	if st := e.CheckTask(ctx, 0); st != results.Done {
		t.Errorf("checked after the work was done: %v", st)
	}
	if !DescribeKind("task").ByHand || DescribeKind("run").ByHand {
		t.Error("DescribeKind does not say which kind is done by hand")
	}
	if DescribeKind("task").Note == "" {
		t.Error("the task kind has no note")
	}
	if _, err := e.Shell(0); err == nil {
		t.Error("a shell through fake targets")
	}
}

// TestShellForALocalLab: without an inventory the step's host is this
// machine and its shell is $SHELL.
func TestShellForALocalLab(t *testing.T) {
	t.Setenv("SHELL", "/bin/sh")
	e := newEngine(t, loadLab(t, strings.Replace(fakeTaskLab, "    on: [web]\n", "", 1)), Options{}, nil)
	sh, err := e.Shell(0)
	if err != nil || len(sh.Argv) != 1 || sh.Argv[0] != "/bin/sh" {
		t.Errorf("Shell = %+v, %v", sh, err)
	}
}
