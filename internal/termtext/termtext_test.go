package termtext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// cases hold one input per class of thing Plain and SGR remove or keep, with
// what each must make of it.
var cases = []struct {
	name, in, plain, sgr string
}{
	{"empty", "", "", ""},
	{"clean ascii", "hello, world\n\tnext", "hello, world\n\tnext", "hello, world\n\tnext"},
	{"clean utf8", "débit 3× plus — 吞吐量 ✔", "débit 3× plus — 吞吐量 ✔", "débit 3× plus — 吞吐量 ✔"},
	{"U+FFFD itself is kept", "a\uFFFDb", "a\uFFFDb", "a\uFFFDb"},

	// CSI
	{"clear screen", "a\x1b[2Jb", "ab", "ab"},
	{"cursor moves", "a\x1b[10;20Hb\x1b[5Ac\x1b[s\x1b[u", "abc", "abc"},
	{"erase line", "50%\x1b[K", "50%", "50%"},
	{"private mode", "\x1b[?1049h\x1b[?25lx", "x", "x"},
	{"csi with intermediate", "a\x1b[0 qb", "ab", "ab"},
	{"sgr", "\x1b[1;31mred\x1b[0m", "red", "\x1b[1;31mred\x1b[0m"},
	{"sgr empty", "\x1b[mx", "x", "\x1b[mx"},
	{"sgr grep colours", "\x1b[01;31m\x1b[Kmatch\x1b[m\x1b[K", "match", "\x1b[01;31mmatch\x1b[m"},
	{"sgr 256", "\x1b[38;5;208mo\x1b[48;5;0m", "o", "\x1b[38;5;208mo\x1b[48;5;0m"},
	{"sgr truecolor", "\x1b[38;2;255;0;10;48;2;1;2;3mt", "t", "\x1b[38;2;255;0;10;48;2;1;2;3mt"},
	{"sgr bright and defaults", "\x1b[90;107;39;49;22;23;24;27mx", "x", "\x1b[90;107;39;49;22;23;24;27mx"},
	{"sgr blink dropped", "\x1b[5mx", "x", "x"},
	{"sgr conceal dropped whole", "\x1b[1;8mhidden", "hidden", "hidden"},
	{"sgr truncated 256", "\x1b[38;5mx", "x", "x"},
	{"sgr truncated truecolor", "\x1b[38;2;1;2mx", "x", "x"},
	{"sgr bad colour mode", "\x1b[38;7;1mx", "x", "x"},
	{"sgr out of range", "\x1b[38;5;256mx\x1b[99999999999999999999mx", "xx", "xx"},
	{"sgr colon form dropped", "\x1b[38:2::1:2:3mx", "x", "x"},
	{"sgr private marker dropped", "\x1b[?1mx", "x", "x"},
	{"sgr intermediate dropped", "\x1b[1 mx", "x", "x"},
	{"sgr too long dropped", "\x1b[" + strings.Repeat("1;", 40) + "1mx", "x", "x"},
	{"8-bit csi", "a\x9b2Jb\x9b31mc", "abc", "ab\x1b[31mc"},
	{"utf8 csi", "a\u009b2Jb\u009b1mc", "abc", "ab\x1b[1mc"},
	{"csi ended by newline", "a\x1b[31\nb", "a\nb", "a\nb"},
	{"csi cancelled", "a\x1b[31\x18b", "ab", "ab"},
	{"csi restarted by esc", "a\x1b[3\x1b[1mb", "ab", "a\x1b[1mb"},
	{"csi ended by text", "a\x1b[3é", "aé", "aé"},

	// OSC
	{"osc 52 bel", "a\x1b]52;c;aGVsbG8=\x07b", "ab", "ab"},
	{"osc 52 st", "a\x1b]52;c;aGVsbG8=\x1b\\b", "ab", "ab"},
	{"osc title c1 st", "a\x1b]0;evil\u009cb", "ab", "ab"},
	{"osc raw c1 st", "a\x1b]0;evil\x9cb", "ab", "ab"},
	{"osc hyperlink", "\x1b]8;;http://x\x07link\x1b]8;;\x07", "link", "link"},
	{"osc unterminated", "a\x1b]52;c;aGVsbG8=\nb", "a", "a"},
	{"osc payload newline ignored", "\x1b]0;a\nb\x07c", "c", "c"},
	{"osc ended by other esc", "a\x1b]0;t\x1b[2Jb", "ab", "ab"},
	{"osc cancelled", "a\x1b]0;t\x1ab", "ab", "ab"},
	{"8-bit osc", "a\x9d52;c;eA==\x07b", "ab", "ab"},
	{"utf8 osc", "a\u009d52;c;eA==\u009cb", "ab", "ab"},
	{"osc utf8 payload", "\x1b]0;titré ✔\x07x", "x", "x"},

	// DCS, SOS, PM, APC
	{"dcs", "a\x1bP1$r0m\x1b\\b", "ab", "ab"},
	{"dcs bel does not end it", "a\x1bPq\x07#0\x1b\\b", "ab", "ab"},
	{"sos", "a\x1bXsos\x1b\\b", "ab", "ab"},
	{"pm", "a\x1b^pm\x1b\\b", "ab", "ab"},
	{"apc", "a\x1b_Gf=100;AAAA\x1b\\b", "ab", "ab"},
	{"8-bit dcs", "a\x90q#0\x9cb", "ab", "ab"},

	// ESC alone and two-byte sequences
	{"lone esc at end", "a\x1b", "a", "a"},
	{"esc then newline", "a\x1b\nb", "a\nb", "a\nb"},
	{"reset ris", "a\x1bcb", "ab", "ab"},
	{"save cursor", "a\x1b7b\x1b8c", "abc", "abc"},
	{"reverse index", "a\x1bMb", "ab", "ab"},
	{"charset", "a\x1b(Bb\x1b#8c", "abc", "abc"},
	{"esc esc", "a\x1b\x1b[2Jb", "ab", "ab"},
	{"esc then non-ascii", "a\x1bé", "aé", "aé"},

	// C0, DEL, C1
	{"bell and backspace", "a\x07b\x08c", "abc", "abc"},
	{"nul and friends", "a\x00\x01\x0b\x0c\x0e\x1fb", "ab", "ab"},
	{"del", "a\x7fb", "ab", "ab"},
	{"c1 utf8", "a\u0085b\u008dc\u009ad", "abcd", "abcd"},
	{"c1 raw", "a\x85b\x8dc\x9ad", "abcd", "abcd"},
	{"nbsp kept", "a\u00a0b", "a\u00a0b", "a\u00a0b"},

	// line ends
	{"crlf", "a\r\nb\r\n", "a\nb\n", "a\nb\n"},
	{"lone cr", "10%\r20%\r30%\n", "10%\n20%\n30%\n", "10%\n20%\n30%\n"},
	{"cr cr lf", "a\r\r\nb", "a\n\nb", "a\n\nb"},
	{"cr erase lf", "a\r\x1b[K\nb", "a\nb", "a\nb"},
	{"lf cr", "a\n\rb", "a\n\nb", "a\n\nb"},
	{"cr at end", "a\r", "a\n", "a\n"},

	// bidi
	{"bidi overrides", "a\u202eevil\u202cb\u202a\u202b\u202dc", "aevilbc", "aevilbc"},
	{"bidi isolates", "a\u2066b\u2067c\u2068d\u2069e", "abcde", "abcde"},
	{"bidi marks kept", "a\u200fb\u200ec", "a\u200fb\u200ec", "a\u200fb\u200ec"},

	// invalid UTF-8
	{"invalid lead", "a\xffb", "a\uFFFDb", "a\uFFFDb"},
	{"truncated", "a\xe2\x9c", "a\uFFFD", "a\uFFFD"},
	{"overlong", "a\xc0\xafb", "a\uFFFD\uFFFDb", "a\uFFFD\uFFFDb"},
	// A stray continuation byte in 0x80..0x9F is a raw C1 byte: dropped.
	{"surrogate", "a\xed\xa0\x80b", "a\uFFFD\uFFFDb", "a\uFFFD\uFFFDb"},
}

func TestPlain(t *testing.T) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Plain(c.in); got != c.plain {
				t.Errorf("Plain(%q) = %q, want %q", c.in, got, c.plain)
			}
			if got := Safe(c.in); got != (c.in == c.plain) {
				t.Errorf("Safe(%q) = %v, want %v", c.in, got, c.in == c.plain)
			}
			// Sanitising is idempotent: clean text comes back as it is.
			if again := Plain(c.plain); again != c.plain {
				t.Errorf("Plain(Plain(%q)) = %q", c.in, again)
			}
		})
	}
}

func TestSGR(t *testing.T) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := SGR(c.in); got != c.sgr {
				t.Errorf("SGR(%q) = %q, want %q", c.in, got, c.sgr)
			}
			if again := SGR(c.sgr); again != c.sgr {
				t.Errorf("SGR(SGR(%q)) = %q", c.in, again)
			}
			if p := Plain(c.sgr); p != c.plain {
				t.Errorf("Plain(SGR(%q)) = %q, want %q", c.in, p, c.plain)
			}
		})
	}
}

// TestCleanInputNotCopied holds the fast path to its promise: clean input
// comes back as the same string, with no allocation.
func TestCleanInputNotCopied(t *testing.T) {
	in := "débit\t3× plus — 吞吐量 ✔\n" + strings.Repeat("ordinary output line\n", 50)
	colour := "\x1b[1;32mPASS\x1b[0m " + in
	for name, fn := range map[string]func() string{
		"Plain":        func() string { return Plain(in) },
		"SGR":          func() string { return SGR(in) },
		"SGR coloured": func() string { return SGR(colour) },
	} {
		if a := testing.AllocsPerRun(100, func() { _ = fn() }); a != 0 {
			t.Errorf("%s on clean input: %v allocations, want 0", name, a)
		}
	}
	if a := testing.AllocsPerRun(100, func() { _ = Safe(in) }); a != 0 {
		t.Errorf("Safe: %v allocations, want 0", a)
	}
	if got := SGR(colour); got != colour {
		t.Errorf("SGR changed clean coloured text: %q", got)
	}
}

// check reports what in out breaks the output contract of Plain (or, with
// keepSGR, SGR), or "" if nothing does.
func check(out string, keepSGR bool) string {
	if !utf8.ValidString(out) {
		return "invalid UTF-8"
	}
	for i := 0; i < len(out); {
		b := out[i]
		if b == 0x1b {
			if !keepSGR {
				return "ESC"
			}
			n := sgrLen(out[i:])
			if n == 0 {
				return "ESC not starting an allowed SGR"
			}
			i += n
			continue
		}
		if b < 0x20 && b != '\n' && b != '\t' {
			return "C0 control"
		}
		if b == 0x7f {
			return "DEL"
		}
		r, size := utf8.DecodeRuneInString(out[i:])
		if r >= 0x80 && r < 0xa0 {
			return "C1 control"
		}
		if bidi(r) {
			return "bidi control"
		}
		i += size
	}
	return ""
}

func FuzzPlain(f *testing.F) {
	for _, c := range cases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		p := Plain(in)
		if why := check(p, false); why != "" {
			t.Fatalf("Plain(%q) = %q holds a %s", in, p, why)
		}
		if Safe(in) != (p == in) {
			t.Fatalf("Safe(%q) = %v but Plain gives %q", in, Safe(in), p)
		}
		if again := Plain(p); again != p {
			t.Fatalf("Plain not idempotent on %q: %q then %q", in, p, again)
		}
		s := SGR(in)
		if why := check(s, true); why != "" {
			t.Fatalf("SGR(%q) = %q holds a %s", in, s, why)
		}
		if Plain(s) != p {
			t.Fatalf("Plain(SGR(%q)) = %q, Plain = %q", in, Plain(s), p)
		}
		if again := SGR(s); again != s {
			t.Fatalf("SGR not idempotent on %q: %q then %q", in, s, again)
		}
	})
}

func FuzzDecodeRune(f *testing.F) {
	for _, s := range []string{"a", "é", "✔", "𝄞", "\xe0\x80\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc2", "\xf0\x9d"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		r, n := decodeRune(p)
		wr, wn := utf8.DecodeRune(p)
		if r != wr || n != wn {
			t.Fatalf("decodeRune(%q) = %U, %d; utf8.DecodeRune = %U, %d", p, r, n, wr, wn)
		}
		if sr, sn := decodeRune(string(p)); sr != r || sn != n {
			t.Fatalf("decodeRune(string %q) = %U, %d; []byte: %U, %d", p, sr, sn, r, n)
		}
	})
}

func TestLine(t *testing.T) {
	for in, want := range map[string]string{
		"Start the servers":              "Start the servers",
		"two\nlines\tand a tab":          "two lines and a tab",
		"a\r\nb\rc":                      "a b c",
		"\x1b]0;t\x07title\x1b[2J\u202e": "title",
	} {
		if got := Line(in); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
	}
	clean := "Benchmark over TCP loopback ✔"
	if a := testing.AllocsPerRun(100, func() { _ = Line(clean) }); a != 0 {
		t.Errorf("Line on clean input: %v allocations", a)
	}
}
