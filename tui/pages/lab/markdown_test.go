package lab

import (
	"strings"
	"testing"

	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/session/sessiontest"
)

// TestPlainMarkdownHasNoMarkers: without colour (NO_COLOR) a step's text
// reads as prose: no literal ** or * around emphasis, no escape codes,
// while headings, inline code and bullets keep their plain-text markers.
func TestPlainMarkdownHasNoMarkers(t *testing.T) {
	f := &sessiontest.Fake{Script: []sessiontest.Step{{
		Info: steps.StepInfo{ID: "s", Title: "S", Kind: "read"},
		Doc:  "# Title\n\nStart **4 instances** of the *bundled* server with `dpulab server`.\n\n- one **bold** item\n",
	}}}
	ss := f.Steps()
	out := newStepFacts(f, func() []steps.StepInfo { return ss }, false, true).Doc(0, 80)
	for _, bad := range []string{"**", "*bundled*", "\x1b["} {
		if strings.Contains(out, bad) {
			t.Errorf("plain markdown contains %q:\n%s", bad, out)
		}
	}
	for _, want := range []string{"# Title", "Start 4 instances of the bundled server with `dpulab server`.", "• one bold item"} {
		if !strings.Contains(out, want) {
			t.Errorf("plain markdown lacks %q:\n%s", want, out)
		}
	}
}
