//go:build unix

package runner

import (
	"strings"
	"testing"
)

func TestLineWriter(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   []string
	}{
		{"split across writes", []string{"ab", "c\nde", "f\n"}, []string{"abc", "def"}},
		{"crlf", []string{"a\r\nb\r\n"}, []string{"a", "b"}},
		{"empty lines kept", []string{"\n\nx\n"}, []string{"", "", "x"}},
		{"last line without newline", []string{"x\ny"}, []string{"x", "y"}},
		{"long line cut", []string{strings.Repeat("z", maxLine+5) + "\n"}, []string{strings.Repeat("z", maxLine), "zzzzz"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var c collect
			sink := newLineSink("h", c.add)
			w := sink.writer(Stderr)
			for _, s := range tc.writes {
				if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
					t.Fatal(n, err)
				}
			}
			w.flush()
			got := c.text(Stderr)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
				t.Fatalf("got %d lines %q, want %q", len(got), trunc(got), trunc(tc.want))
			}
			if tail := sink.lastLines(); len(tail) != min(len(tc.want), tailLines) || tail[0].Host != "h" || tail[0].Stream != Stderr {
				t.Fatalf("tail %v", tail)
			}
		})
	}
	t.Run("a bench's JSON line arrives whole", func(t *testing.T) {
		// A run line with many targets' histograms: hundreds of KiB.
		big := `{"type":"run","latency_hdr_us":"` + strings.Repeat("HISTFAAAA", 1<<17) + `"}`
		var c collect
		sink := newLineSink("h", c.add)
		w := sink.writer(Stdout)
		for i := 0; i < len(big); i += 32 << 10 { // as a pipe delivers it
			w.Write([]byte(big[i:min(i+32<<10, len(big))]))
		}
		w.Write([]byte("\n"))
		if got := c.text(Stdout); len(got) != 1 || got[0] != big {
			t.Fatalf("got %d lines (first %d bytes), want the one %d-byte line whole", len(got), len(got[0]), len(big))
		}
		tail := sink.lastLines()
		if n := len(tail[0].Text); n > maxTailLine+64 || !strings.HasSuffix(tail[0].Text, "bytes in all)") {
			t.Fatalf("the tail keeps %d bytes of it (%q…), want it shortened", n, tail[0].Text[:40])
		}
	})
	t.Run("tail keeps the last lines", func(t *testing.T) {
		sink := newLineSink("h", nil)
		w := sink.writer(Stdout)
		for i := 0; i < tailLines+7; i++ {
			w.Write([]byte("line\n"))
		}
		w.Write([]byte("last\n"))
		tail := sink.lastLines()
		if len(tail) != tailLines || tail[len(tail)-1].Text != "last" {
			t.Fatalf("tail %d %v", len(tail), tail[len(tail)-1])
		}
	})
}

func trunc(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		if len(x) > 20 {
			x = x[:20] + "..."
		}
		out[i] = x
	}
	return out
}
