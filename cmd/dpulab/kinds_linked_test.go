package main

import (
	"testing"

	"github.com/dpulab/dpulab/labs"
)

// TestEveryKindIsLinked: dpulab links the package of every step kind
// labs documents (through steps), so lint, plan, the dry run, the run,
// the TUI and the reports read every key of the labs it ships.
func TestEveryKindIsLinked(t *testing.T) {
	if u := labs.Unlinked(); len(u) > 0 {
		t.Errorf("dpulab does not link the packages of step kinds %v", u)
	}
	ls, err := labs.Embedded()
	if err != nil {
		t.Fatalf("the embedded labs do not load in dpulab:\n%v", err)
	}
	if len(ls) == 0 {
		t.Fatal("no embedded lab")
	}
}
