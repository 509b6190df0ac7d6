package labs

import (
	"slices"
	"testing"
)

// TestEveryKindHasItsSyntax: Kinds (what the README documents, in order)
// and the parser's table name the same kinds.
func TestEveryKindHasItsSyntax(t *testing.T) {
	for _, k := range Kinds {
		if _, ok := kindSyntaxes[k]; !ok {
			t.Errorf("kind %q has no entry in kindSyntaxes", k)
		}
	}
	for k := range kindSyntaxes {
		if !slices.Contains(RegisteredKinds(), k) {
			t.Errorf("kindSyntaxes reads kind %q, which RegisteredKinds does not list", k)
		}
	}
}
