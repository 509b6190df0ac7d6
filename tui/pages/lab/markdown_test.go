package lab

import (
	"strings"
	"testing"

	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/session/sessiontest"
)

func TestJoinListContinuations(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"wrapped item", "1. start the server that ships inside\n   dpulab;\n2. next", "1. start the server that ships inside dpulab;\n2. next"},
		{"nested item", "- a\n  - **TCP**: every request goes\n    through the stack;", "- a\n  - **TCP**: every request goes through the stack;"},
		{"paragraph untouched", "A paragraph\nthat wraps.", "A paragraph\nthat wraps."},
		{"fence untouched", "- run:\n```\n  indented code\n```", "- run:\n```\n  indented code\n```"},
		{"blank ends item", "- a\n\n  b", "- a\n\n  b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := joinListContinuations(tc.in); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestPlainMarkdownHasNoMarkers: without colour (NO_COLOR) a step's text
// reads as prose: no literal ** or * around emphasis, no escape codes,
// while headings, inline code and bullets keep their plain-text markers.
func TestPlainMarkdownHasNoMarkers(t *testing.T) {
	c := common.NewCommon(true, 100, 30)
	f := &sessiontest.Fake{Script: []sessiontest.Step{{
		Info: steps.StepInfo{ID: "s", Title: "S", Kind: "read"},
		Doc:  "# Title\n\nStart **4 instances** of the *bundled* server with `dpulab server`.\n\n- one **bold** item\n",
	}}}
	m := New(c, f, Options{})
	out := m.renderDoc(0, 80)
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
