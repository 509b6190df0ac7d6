package markdown

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
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

// TestRenderedAt80And100 renders a doc with a second-level heading, list
// items that wrap and inline code holding hyphens, at the doc pane's width
// on 80 and 100 columns, with and without colour: no literal "## ", a
// wrapped item's lines under its text, and code never cut at a hyphen
// (it may wrap at its spaces, as words do).
func TestRenderedAt80And100(t *testing.T) {
	src := "# Compare\n\n## What changes\n\n" +
		"- TPS — requests completed per second, over all instances, for every variant of the comparison;\n" +
		"- latency — how long a request waits for its reply (average and p99, the time 99% of requests stay under);\n\n" +
		"On a busy machine the spread can be as large as the difference: then run longer or more often. Try `--set pipeline=1`, where every request pays the network path on its own, or `--set data_size=4096`.\n"
	for _, w := range []int{53, 66} { // the doc pane at 80 and 100 columns
		for _, noColor := range []bool{false, true} {
			out := ansi.Strip(Render(src, w, noColor))
			lines := strings.Split(out, "\n")
			for i, l := range lines {
				if ansi.StringWidth(l) > w {
					t.Errorf("w=%d noColor=%v: line %d is %d columns: %q", w, noColor, i, ansi.StringWidth(l), l)
				}
				if !noColor && strings.Contains(l, "## ") {
					t.Errorf("w=%d: a literal heading marker: %q", w, l)
				}
				if strings.HasSuffix(strings.TrimRight(l, " "), "-") {
					t.Errorf("w=%d noColor=%v: code cut at a hyphen: %q", w, noColor, l)
				}
			}
			for _, code := range []string{"--set pipeline=1", "--set data_size=4096"} {
				if !strings.Contains(strings.Join(strings.Fields(out), " "), code) {
					t.Errorf("w=%d noColor=%v: %q is not whole:\n%s", w, noColor, code, out)
				}
			}
			// Every line of an item after its first starts under the
			// item's text, past the bullet.
			inItem := false
			for _, l := range lines {
				tl := strings.TrimLeft(l, " ")
				switch {
				case strings.HasPrefix(tl, "• "):
					inItem = true
				case strings.TrimSpace(l) == "":
					inItem = false
				case inItem && len(l)-len(tl) < 4:
					t.Errorf("w=%d noColor=%v: item line not under its text: %q", w, noColor, l)
				}
			}
			if noColor && strings.Contains(Render(src, w, noColor), "\x1b") {
				t.Errorf("w=%d: an escape sequence without colour", w)
			}
		}
	}
}
