package labs

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// TestUnlinkedKindSaysSo: a step of one of dpulab's kinds whose package
// the program does not link is a problem that says what to import, not an
// unknown kind with a did-you-mean; Unlinked names the kind.
func TestUnlinkedKindSaysSo(t *testing.T) {
	const ghost Kind = "ghost"
	Kinds = append(Kinds, ghost)
	t.Cleanup(func() { Kinds = slices.DeleteFunc(Kinds, func(k Kind) bool { return k == ghost }) })
	if !slices.Contains(Unlinked(), ghost) {
		t.Errorf("Unlinked() = %v, without %s", Unlinked(), ghost)
	}
	lab := `id: x
title: X
summary: A step whose kind is not linked.
duration: 1m
roles: [local]
steps:
  - id: boo
    title: Boo
    kind: ghost
    whatever: 1
`
	_, probs := Parse(fstest.MapFS{"x/" + LabFile: {Data: []byte(lab)}}, "x", LabFile)
	if len(probs) != 1 {
		t.Fatalf("want one problem, got %v", probs)
	}
	p := probs[0]
	want := `step boo: kind "ghost" is dpulab's, but this program does not link its package (steps/kinds/ghost): import github.com/dpulab/dpulab/steps, which links every kind`
	if p.Line != 9 || p.Msg != want {
		t.Errorf("got %d: %s\nwant 9: %s", p.Line, p.Msg, want)
	}
	if strings.Contains(p.Msg, "unknown") {
		t.Errorf("an unlinked kind is called unknown: %s", p.Msg)
	}
}
