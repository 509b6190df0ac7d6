package sleep_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/kind/kindtest"
	"github.com/dpulab/dpulab/steps/kinds/sleep"
)

const sleepLab = `
id: fakesleep
title: Fake sleep
summary: a step that waits
duration: 1m
roles:
  web: web servers
variables:
  settle:
    type: duration
    default: 5s
    description: how long to let things settle
steps:
  - id: settle
    title: Settle
    kind: sleep
    for: "{{.vars.settle}}"
`

// TestSleepAlone: planned as a note, run on the Env's clock, cancelled
// by the context.
func TestSleepAlone(t *testing.T) {
	env := kindtest.New(kindtest.Lab(t, sleepLab, nil))
	k, _ := kind.Lookup(sleep.Kind)
	p, err := k.Resolve(env, env.Step(t, "settle"), map[string]string{"settle": "2s"})
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Commands(); len(c) != 1 || c[0].Cmd != "# wait 2s" {
		t.Errorf("plan %+v", c)
	}
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if w := env.Waited(); !slices.Equal(w, []time.Duration{2 * time.Second}) {
		t.Errorf("waited %v", w)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	env2 := kindtest.New(kindtest.Lab(t, sleepLab, nil))
	env2.Hold = true
	p, _ = k.Resolve(env2, env2.Step(t, "settle"), map[string]string{"settle": "2s"})
	if err := p.Run(ctx); !errors.Is(err, context.Canceled) || len(env2.Lines()) != 0 {
		t.Errorf("cancelled: err %v, said %+v", err, env2.Lines())
	}
}

// TestSleepKeys: the kind's own keys are parsed, checked (file:line) and
// written back by Encode.
func TestSleepKeys(t *testing.T) {
	l := kindtest.Lab(t, sleepLab, nil)
	out, err := labs.Encode(l)
	if err != nil {
		t.Fatal(err)
	}
	again := kindtest.Lab(t, string(out), nil)
	if sp, ok := again.Step("settle").Spec.(*sleep.Spec); !ok || sp.For != "{{.vars.settle}}" {
		t.Errorf("after Encode: %#v\n%s", again.Step("settle").Spec, out)
	}
	for _, bad := range []struct{ from, to, want string }{
		{`    for: "{{.vars.settle}}"`, `    for: soon`, "lab.yaml:17"},
		{`    for: "{{.vars.settle}}"`, ``, "a sleep step needs for:"},
		{`    for: "{{.vars.settle}}"`, "    for: 1s\n    on: [web]", "runs on no host"},
	} {
		text := replace(sleepLab, bad.from, bad.to)
		_, probs := labs.Parse(mapFS(text), "lab", "lab.yaml")
		if len(probs) == 0 || !contains(probs.Error(), bad.want) {
			t.Errorf("%q: problems %v, want %q", bad.to, probs, bad.want)
		}
	}
}
