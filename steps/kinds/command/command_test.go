package command_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/kind/kindtest"
	"github.com/dpulab/dpulab/steps/kinds/command"
)

const runLab = `
id: fakerun
title: Fake run
summary: a run step and a check step
duration: 1m
roles:
  web: web servers
variables:
  msg:
    type: string
    default: hello world
    description: what to say
steps:
  - id: say
    title: Say
    kind: run
    run:
      - echo {{.vars.msg}}
      - touch done
    skip_if: test -e skipme
    timeout: 7s
    verify:
      run: cat done
      expect: ^ok$
      retries: 2
      interval: 3s
  - id: perf
    title: Measure
    kind: run
    run: ib_write_lat
    record: perftest
  - id: ready
    title: Ready?
    kind: check
    sudo: true
    verify:
      run: test -e /dev/infiniband
`

func resolve(t *testing.T, env *kindtest.Env, id string) kind.Plan {
	t.Helper()
	st := env.Step(t, id)
	k, ok := kind.Lookup(st.Kind)
	if !ok {
		t.Fatalf("kind %s is not registered", st.Kind)
	}
	vars := map[string]string{}
	for _, v := range env.L.Variables {
		vars[v.Name] = v.Default
	}
	p, err := k.Resolve(env, st, vars)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRunPlan: the plan lists skip_if as a note, then the commands and
// verify, per host, each value quoted.
func TestRunPlan(t *testing.T) {
	env := kindtest.New(kindtest.Lab(t, runLab, nil), "a", "b")
	var got []string
	for _, c := range resolve(t, env, "say").Commands() {
		got = append(got, c.Host+": "+c.Cmd)
	}
	want := []string{
		"a: # skip if this succeeds: test -e skipme", "a: echo 'hello world'", "a: touch done", "a: cat done",
		"b: # skip if this succeeds: test -e skipme", "b: echo 'hello world'", "b: touch done", "b: cat done",
	}
	if !slices.Equal(got, want) {
		t.Errorf("plan:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, c := range resolve(t, env, "ready").Commands() {
		if !c.Sudo {
			t.Errorf("check's %q is not marked sudo", c.Cmd)
		}
	}
}

// TestRunRunsWhatItPlans: each host runs skip_if, the commands and verify,
// with the step's timeout; verify retries on the clock until it passes.
func TestRunRunsWhatItPlans(t *testing.T) {
	env := kindtest.New(kindtest.Lab(t, runLab, nil), "a")
	tries := 0
	env.Handle = func(host, cmd string) ([]string, int) {
		switch cmd {
		case "test -e skipme":
			return nil, 1
		case "cat done":
			if tries++; tries < 3 {
				return []string{"not yet"}, 0
			}
			return []string{"ok"}, 0
		}
		return nil, 0
	}
	if err := resolve(t, env, "say").Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var ran []string
	for _, c := range env.Target("a").Commands() {
		ran = append(ran, c.Cmd)
		if c.Timeout != 7*time.Second {
			t.Errorf("%q ran with timeout %v, want the step's 7s", c.Cmd, c.Timeout)
		}
	}
	want := []string{"test -e skipme", "echo 'hello world'", "touch done", "cat done", "cat done", "cat done"}
	if !slices.Equal(ran, want) {
		t.Errorf("ran %q, want %q", ran, want)
	}
	if w := env.Waited(); !slices.Equal(w, []time.Duration{3 * time.Second, 3 * time.Second}) {
		t.Errorf("waited %v between tries, want the step's interval twice", w)
	}
}

// TestRunFailsAndSkips: a failed command stops the host with a StepError
// naming it; a skip_if that holds skips the host and says so; a verify
// that never passes fails after its tries.
func TestRunFailsAndSkips(t *testing.T) {
	env := kindtest.New(kindtest.Lab(t, runLab, nil), "a")
	env.Handle = func(host, cmd string) ([]string, int) {
		switch cmd {
		case "touch done":
			return []string{"touch: permission denied"}, 1
		case "test -e skipme":
			return nil, 1
		}
		return nil, 0
	}
	err := resolve(t, env, "say").Run(context.Background())
	var se *kind.StepError
	if !errors.As(err, &se) || se.Cmd != "touch done" || se.Host != "a" || !slices.Equal(se.Tail, []string{"touch: permission denied"}) {
		t.Fatalf("err = %v, want a StepError for touch done on a with its output", err)
	}

	env = kindtest.New(kindtest.Lab(t, runLab, nil), "a")
	if err := resolve(t, env, "say").Run(context.Background()); !errors.Is(err, kind.ErrSkipped) {
		t.Fatalf("skip_if held: err = %v, want ErrSkipped", err)
	}
	if ls := env.Lines(); len(ls) != 1 || !ls[0].Said || !strings.Contains(ls[0].Text, "skip_if") {
		t.Errorf("a skipped host said %+v", ls)
	}

	env = kindtest.New(kindtest.Lab(t, runLab, nil), "a")
	env.Handle = func(host, cmd string) ([]string, int) {
		if cmd == "test -e skipme" {
			return nil, 1
		}
		return []string{"nope"}, 0
	}
	if err := resolve(t, env, "say").Run(context.Background()); err == nil || !strings.Contains(err.Error(), "after 3 tries") {
		t.Errorf("verify never passing: err = %v", err)
	}
}

// TestRunRecords: a record: step hands its commands' standard output to
// the results for the format named.
func TestRunRecords(t *testing.T) {
	env := kindtest.New(kindtest.Lab(t, runLab, nil), "a")
	env.Handle = func(host, cmd string) ([]string, int) { return []string{"#bytes t_avg", "2 1.5"}, 0 }
	if err := resolve(t, env, "perf").Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := env.Recorded("perf", "a", command.RecordFormats[0]); !slices.Equal(got, []string{"#bytes t_avg", "2 1.5"}) {
		t.Errorf("recorded %q", got)
	}
	if len(env.Lines()) != 2 {
		t.Errorf("the output was not shown as well: %+v", env.Lines())
	}
}
