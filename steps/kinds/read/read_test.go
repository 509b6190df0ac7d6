package read_test

import (
	"context"
	"testing"

	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/kind/kindtest"
	_ "github.com/dpulab/dpulab/steps/kinds/read"
)

// TestRead: a read step plans nothing and runs nothing.
func TestRead(t *testing.T) {
	env := kindtest.New(kindtest.Lab(t, `
id: fakeread
title: Fake read
summary: a read step
duration: 1m
roles:
  web: web servers
steps:
  - id: intro
    title: Intro
    kind: read
    doc: intro.md
`, map[string]string{"intro.md": "# Intro\n\nHello.\n"}), "a")
	k, ok := kind.Lookup("read")
	if !ok || k.Note == "" {
		t.Fatal("the read kind is not registered with its note")
	}
	p, err := k.Resolve(env, env.Step(t, "intro"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Commands(); len(c) != 0 {
		t.Errorf("a read step plans %+v", c)
	}
	if err := p.Run(context.Background()); err != nil || len(env.Target("a").Commands()) != 0 || len(env.Lines()) != 0 {
		t.Errorf("a read step ran something: %v", err)
	}
}
