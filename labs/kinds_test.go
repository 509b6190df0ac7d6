package labs_test

import (
	"slices"
	"testing"

	. "github.com/dpulab/dpulab/labs"
	// The kinds whose keys their own packages read: the labs labs embeds
	// and its lint cases use them, so its tests that parse labs link them
	// as dpulab does (steps/kinds_list.go).
	_ "github.com/dpulab/dpulab/steps/kinds/command"
	_ "github.com/dpulab/dpulab/steps/kinds/deploy"
	_ "github.com/dpulab/dpulab/steps/kinds/load"
	_ "github.com/dpulab/dpulab/steps/kinds/tco"
	_ "github.com/dpulab/dpulab/steps/kinds/template"
	_ "github.com/dpulab/dpulab/steps/kinds/vspherecheck"
)

// TestEveryKindHasItsSyntax: Kinds (what the README documents, in order)
// and the registered syntaxes name the same kinds, once the kinds'
// packages are linked.
func TestEveryKindHasItsSyntax(t *testing.T) {
	for _, k := range Kinds {
		if !HasSyntax(k) {
			t.Errorf("kind %q has no registered syntax", k)
		}
	}
	for _, k := range SyntaxKinds() {
		if !slices.Contains(RegisteredKinds(), k) {
			t.Errorf("a syntax is registered for kind %q, which RegisteredKinds does not list", k)
		}
	}
}
