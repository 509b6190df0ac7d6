package labs

import (
	"strings"
	"testing"
)

// TestDocTextCapped: a doc full of escapes (a pasted terminal capture)
// reports its first lines and a count, not a page of problems.
func TestDocTextCapped(t *testing.T) {
	p := &parser{file: "lab/lab.yaml"}
	doc := strings.Repeat("\x1b[32mok\x1b[0m\n", maxDocTextProblems+3)
	p.checkDocText("doc.md", []byte(doc))
	p.checkDocText("doc.md", []byte(doc)) // a second step showing it adds nothing
	if len(p.probs) != maxDocTextProblems+1 {
		t.Fatalf("got %d problems, want %d:\n%v", len(p.probs), maxDocTextProblems+1, p.probs)
	}
	last := p.probs[len(p.probs)-1]
	if last.File != "lab/doc.md" || !strings.HasPrefix(last.Msg, "3 more lines") {
		t.Errorf("last problem = %v, want the count of the 3 lines not listed", last)
	}
}
