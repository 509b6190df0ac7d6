package cleanup_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/kind/kindtest"
	_ "github.com/dpulab/dpulab/steps/kinds/cleanup"
)

const cleanupLab = `
id: fakeclean
title: Fake cleanup
summary: a cleanup step
duration: 1m
roles:
  web: web servers
steps:
  - id: tidy
    title: Tidy up
    kind: cleanup
    run:
      - rm -f a
      - rm -f b
`

func plan(t *testing.T, env *kindtest.Env) kind.Plan {
	t.Helper()
	k, ok := kind.Lookup("cleanup")
	if !ok {
		t.Fatal("the cleanup kind is not registered")
	}
	p, err := k.Resolve(env, env.Step(t, "tidy"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCleanupPlan: per host, the servers stopped, the commands, the
// working directory removed.
func TestCleanupPlan(t *testing.T) {
	env := kindtest.New(kindtest.Lab(t, cleanupLab, nil), "a")
	var got []string
	for _, c := range plan(t, env).Commands() {
		got = append(got, c.Cmd)
	}
	if len(got) != 4 || !strings.HasPrefix(got[0], "# stop the servers") || got[1] != "rm -f a" || got[3] != "rm -rf -- /tmp/dpulab-test-wd" {
		t.Errorf("plan %q", got)
	}
}

// TestCleanupKeepsGoing: every command runs even after one failed; the
// servers are stopped first and the working directory removed last,
// whatever failed; the failure is reported.
func TestCleanupKeepsGoing(t *testing.T) {
	env := kindtest.New(kindtest.Lab(t, cleanupLab, nil), "a")
	env.Handle = func(_, cmd string) ([]string, int) {
		if cmd == "rm -f a" {
			return []string{"busy"}, 1
		}
		return nil, 0
	}
	err := plan(t, env).Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "rm -f a") {
		t.Errorf("err = %v, want rm -f a's failure", err)
	}
	var ran []string
	for _, c := range env.Target("a").Commands() {
		ran = append(ran, c.Cmd)
	}
	if !slices.Equal(ran, []string{"rm -f a", "rm -f b"}) {
		t.Errorf("ran %q, want both commands", ran)
	}
	if stopped, removed := env.Teardowns(); stopped != 1 || !slices.Equal(removed, []string{"tidy"}) {
		t.Errorf("stopped %d times, workdir removed by %q", stopped, removed)
	}
}
