package markdown

import "testing"

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
