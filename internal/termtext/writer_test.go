package termtext

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// writeSplit feeds in to a Writer cut at the given offsets and returns what
// reached the underlying writer after Close.
func writeSplit(t testing.TB, in string, keepSGR bool, cuts ...int) string {
	var out bytes.Buffer
	w := NewWriter(&out, keepSGR)
	prev := 0
	for _, c := range append(cuts, len(in)) {
		n, err := w.Write([]byte(in[prev:c]))
		if err != nil || n != c-prev {
			t.Fatalf("Write = %d, %v; want %d, nil", n, err, c-prev)
		}
		prev = c
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestWriterSplits: however a stream is cut, the Writer makes of it what
// Plain and SGR make of the whole, for every case at every cut point, and
// byte by byte.
func TestWriterSplits(t *testing.T) {
	all := ""
	for _, c := range cases {
		all += c.in + "|"
	}
	inputs := []string{all}
	for _, c := range cases {
		inputs = append(inputs, c.in)
	}
	for _, in := range inputs {
		for _, keep := range []bool{false, true} {
			want := Plain(in)
			if keep {
				want = SGR(in)
			}
			for cut := 0; cut <= len(in); cut++ {
				if got := writeSplit(t, in, keep, cut); got != want {
					t.Fatalf("keepSGR=%v, %q cut at %d:\n got %q\nwant %q", keep, in, cut, got, want)
				}
			}
			var bytewise []int
			for i := 1; i < len(in); i++ {
				bytewise = append(bytewise, i)
			}
			if got := writeSplit(t, in, keep, bytewise...); got != want {
				t.Fatalf("keepSGR=%v, %q byte by byte:\n got %q\nwant %q", keep, in, got, want)
			}
		}
	}
}

// TestWriterPendingSequence: a sequence still open at Close is dropped, and
// an OSC 52 split across writes never lets its payload through.
func TestWriterPendingSequence(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out, true)
	for _, p := range []string{"ok \x1b", "]52;c;", "aGVsbG8=", "\x07 done\x1b[3"} {
		if _, err := w.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "ok  done" {
		t.Errorf("got %q, want %q", got, "ok  done")
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	f.n++
	return 0, errors.New("disk full")
}

// TestWriterError: the first failed write is reported, and every later call
// returns it without writing again.
func TestWriterError(t *testing.T) {
	fw := &failWriter{}
	w := NewWriter(fw, false)
	if _, err := w.Write([]byte("a")); err == nil {
		t.Fatal("Write: no error from a failing writer")
	}
	if _, err := w.Write([]byte("b")); err == nil || fw.n != 1 {
		t.Fatalf("second Write: err %v after %d writes, want the first error and 1 write", err, fw.n)
	}
	if err := w.Close(); err == nil {
		t.Fatal("Close: error forgotten")
	}
}

func FuzzWriter(f *testing.F) {
	for _, c := range cases {
		f.Add(c.in, uint8(len(c.in)/2), uint8(1), true)
	}
	f.Fuzz(func(t *testing.T, in string, a, b uint8, keep bool) {
		i, j := int(a), int(b)
		if i > len(in) {
			i = len(in)
		}
		if j > len(in) {
			j = len(in)
		}
		if i > j {
			i, j = j, i
		}
		want := Plain(in)
		if keep {
			want = SGR(in)
		}
		if got := writeSplit(t, in, keep, i, j); got != want {
			t.Fatalf("%q cut at %d and %d: got %q, want %q", in, i, j, got, want)
		}
	})
}

var sink string

// BenchmarkPlain measures the two paths: clean text (returned as is) and
// text with sequences to remove. The -tags perf rule does not apply: nothing
// asserts on these figures.
func BenchmarkPlain(b *testing.B) {
	line := "redis-benchmark: SET: 182149.36 requests per second, p50=0.135 msec — débit ✔\n"
	clean := strings.Repeat(line, 64)
	dirty := strings.Repeat("\x1b[32m"+strings.TrimSuffix(line, "\n")+"\x1b[0m\r\n", 64)
	for _, bc := range []struct {
		name string
		fn   func(string) string
		in   string
	}{
		{"Plain/clean", Plain, clean},
		{"Plain/dirty", Plain, dirty},
		{"SGR/clean", SGR, clean},
		{"SGR/coloured", SGR, dirty},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.in)))
			b.ReportAllocs()
			for b.Loop() {
				sink = bc.fn(bc.in)
			}
		})
	}
	b.Run("Writer/dirty", func(b *testing.B) {
		var out bytes.Buffer
		w := NewWriter(&out, true)
		p := []byte(dirty)
		b.SetBytes(int64(len(p)))
		b.ReportAllocs()
		for b.Loop() {
			out.Reset()
			_, _ = w.Write(p)
		}
	})
}
