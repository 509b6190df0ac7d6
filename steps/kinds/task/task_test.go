package task_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/kind/kindtest"
	_ "github.com/dpulab/dpulab/steps/kinds/task"
)

const taskLab = `
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
    run: echo maxmemory 64mb >> conf
    verify:
      run: grep -q '^maxmemory 64mb' conf
`

func plan(t *testing.T, env *kindtest.Env) kind.Plan {
	t.Helper()
	k, ok := kind.Lookup("task")
	if !ok || k.Note == "" {
		t.Fatal("the task kind is not registered with its note")
	}
	p, err := k.Resolve(env, env.Step(t, "edit"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTaskByHand: done by hand, only verify runs, and it decides.
func TestTaskByHand(t *testing.T) {
	env := kindtest.New(kindtest.Lab(t, taskLab, nil), "a")
	env.Handle = func(string, string) ([]string, int) { return nil, 1 }
	if err := plan(t, env).Run(kind.WithByHand(context.Background())); err == nil {
		t.Fatal("a failed check passed")
	}
	if c := env.Target("a").Commands(); len(c) != 1 || !strings.HasPrefix(c[0].Cmd, "grep") {
		t.Errorf("by hand ran %+v, want verify only", c)
	}
}

// TestTaskDoneForYou: without ByHand the step says it did the trainee's
// part, runs the commands, then verify.
func TestTaskDoneForYou(t *testing.T) {
	env := kindtest.New(kindtest.Lab(t, taskLab, nil), "a")
	if err := plan(t, env).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var ran []string
	for _, c := range env.Target("a").Commands() {
		ran = append(ran, c.Cmd)
	}
	if want := []string{"echo maxmemory 64mb >> conf", "grep -q '^maxmemory 64mb' conf"}; !slices.Equal(ran, want) {
		t.Errorf("ran %q, want %q", ran, want)
	}
	if ls := env.Lines(); len(ls) == 0 || !ls[0].Said || !strings.Contains(ls[0].Text, "done for you") {
		t.Errorf("did not say it did the task: %+v", ls)
	}
}

// TestTaskSolution: "show me" is the rendered commands and check per host.
func TestTaskSolution(t *testing.T) {
	env := kindtest.New(kindtest.Lab(t, taskLab, nil), "a", "b")
	s, ok := plan(t, env).(kind.Solver)
	if !ok {
		t.Fatal("a task plan shows no solution")
	}
	sol, err := s.Solutions()
	if err != nil {
		t.Fatal(err)
	}
	if len(sol) != 2 || sol[1].Host != "b" || sol[0].Verify != "grep -q '^maxmemory 64mb' conf" || len(sol[0].Run) != 1 {
		t.Errorf("solutions %+v", sol)
	}
}
