package resp

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
)

func join(args [][]byte) string {
	s := make([]string, len(args))
	for i, a := range args {
		s[i] = string(a)
	}
	return strings.Join(s, "|")
}

func TestParseCommand(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string // args joined by |
		n       int    // bytes consumed; 0 = incomplete
		wantErr string
	}{
		{"multibulk", "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", "GET|k", 20, ""},
		{"binary arg", "*2\r\n$4\r\nECHO\r\n$2\r\n\r\n\r\n", "ECHO|\r\n", 22, ""},
		{"empty arg", "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", "ECHO|", 20, ""},
		{"two commands, first only", "*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\n", "PING", 14, ""},
		{"incomplete count", "*2\r", "", 0, ""},
		{"incomplete bulk header", "*2\r\n$3\r\nGET\r\n$1", "", 0, ""},
		{"incomplete bulk data", "*2\r\n$3\r\nGET\r\n$5\r\nab", "", 0, ""},
		{"huge bulk announced, no data", "*2\r\n$3\r\nSET\r\n$500000000\r\n", "", 0, ""},
		{"empty multibulk", "*0\r\n", "", 4, ""},
		{"inline", "PING\r\n", "PING", 6, ""},
		{"inline lf only", "SET a b\n", "SET|a|b", 8, ""},
		{"inline quotes", "SET \"a b\" 'c d'\r\n", "SET|a b|c d", 17, ""},
		{"inline escapes", "SET k \"\\x41\\n\"\r\n", "SET|k|A\n", 16, ""},
		{"inline empty line", "\r\n", "", 2, ""},
		{"inline incomplete", "PIN", "", 0, ""},
		{"unbalanced quotes", "SET \"a\r\n", "", 0, "Protocol error: unbalanced quotes in request"},
		{"bad count", "*x\r\n", "", 0, "Protocol error: invalid multibulk length"},
		{"count over INT_MAX", "*2147483648\r\n", "", 0, "Protocol error: invalid multibulk length"},
		{"count over the default limit", "*2000000\r\n", "", 0, "Protocol error: invalid multibulk length"},
		{"expected dollar", "*1\r\n+PING\r\n", "", 0, "Protocol error: expected '$', got '+'"},
		{"bad bulk length", "*1\r\n$-5\r\n", "", 0, "Protocol error: invalid bulk length"},
		{"bulk over limit", "*1\r\n$536870913\r\n", "", 0, "Protocol error: invalid bulk length"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf := []byte(tt.in)
			args, n, err := ParseCommand(buf, nil, Limits{})
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				var pe *ProtocolError
				if !errors.As(err, &pe) {
					t.Fatalf("error %T is not a *ProtocolError", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if n != tt.n || join(args) != tt.want {
				t.Fatalf("got %q n=%d, want %q n=%d", join(args), n, tt.want, tt.n)
			}
		})
	}
}

// Every strict prefix of a valid command is incomplete, never an error.
func TestParseCommandPrefixes(t *testing.T) {
	full := AppendCommand(nil, "SET", "key", strings.Repeat("v", 40))
	for i := 0; i < len(full); i++ {
		args, n, err := ParseCommand(full[:i], nil, Limits{})
		if err != nil || n != 0 || len(args) != 0 {
			t.Fatalf("prefix %d: args=%q n=%d err=%v", i, join(args), n, err)
		}
	}
	args, n, err := ParseCommand(full, nil, Limits{})
	if err != nil || n != len(full) || join(args) != "SET|key|"+strings.Repeat("v", 40) {
		t.Fatalf("full: %q %d %v", join(args), n, err)
	}
}

// Before AUTH Redis accepts at most 10 arguments of at most 16384 bytes,
// checked on the length lines, before any data; the general limits are
// checked first and win.
func TestParseCommandUnauthenticated(t *testing.T) {
	unauth := Limits{Unauthenticated: true}
	tests := []struct {
		name, in, wantErr string
		n                 int
	}{
		{"10 arguments", "*10\r\n", "", 0},
		{"11 arguments", "*11\r\n", "Protocol error: unauthenticated multibulk length", 0},
		{"count over INT_MAX is invalid first", "*2147483648\r\n", "Protocol error: invalid multibulk length", 0},
		{"count over MaxMultibulkLen is unauthenticated first", "*2000000\r\n", "Protocol error: unauthenticated multibulk length", 0},
		{"negative count", "*-5\r\n", "", 5},
		{"bulk of 16384", "*1\r\n$16384\r\n", "", 0},
		{"bulk of 16385", "*1\r\n$16385\r\n", "Protocol error: unauthenticated bulk length", 0},
		{"second bulk too long", "*2\r\n$4\r\nAUTH\r\n$20000\r\n", "Protocol error: unauthenticated bulk length", 0},
		{"bulk over proto-max-bulk-len is invalid first", "*1\r\n$536870913\r\n", "Protocol error: invalid bulk length", 0},
		{"negative bulk", "*1\r\n$-1\r\n", "Protocol error: invalid bulk length", 0},
		{"inline", "PING\r\n", "", 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, n, err := ParseCommand([]byte(tt.in), nil, unauth)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if n != tt.n {
				t.Fatalf("n = %d, want %d", n, tt.n)
			}
		})
	}
	// The same input is fine once authenticated.
	if _, _, err := ParseCommand([]byte("*1000\r\n$16385\r\n"), nil, Limits{}); err != nil {
		t.Fatalf("authenticated: %v", err)
	}
}

func TestNeeded(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int
	}{
		{"inside a bulk", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100\r\nabc", 26 + 100 + 2},
		{"bulk data complete, CRLF missing", "*2\r\n$4\r\nECHO\r\n$2\r\nab", 22},
		{"inside a length line", "*3\r\n$3\r\nSET\r\n$1", 0},
		{"complete", "*1\r\n$4\r\nPING\r\n", 0},
		{"inline", "PIN", 0},
		{"malformed", "*1\r\n+x\r\n", 0},
		{"empty", "", 0},
	}
	for _, tt := range tests {
		if got := Needed([]byte(tt.in), Limits{}); got != tt.want {
			t.Errorf("%s: Needed = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestParseCommandNoAllocs(t *testing.T) {
	buf := AppendCommand(nil, "SET", "key", "value")
	args := make([][]byte, 0, 8)
	allocs := testing.AllocsPerRun(100, func() {
		args, _, _ = ParseCommand(buf, args, Limits{})
	})
	if allocs != 0 {
		t.Fatalf("ParseCommand allocated %v times per command", allocs)
	}
}

func TestWriters(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"simple", AppendSimple(nil, "OK"), "+OK\r\n"},
		{"error strips newlines", AppendError(nil, "ERR a\r\nb"), "-ERR a  b\r\n"},
		{"int", AppendInt(nil, -42), ":-42\r\n"},
		{"bulk", AppendBulk(nil, []byte("hi")), "$2\r\nhi\r\n"},
		{"bulk empty", AppendBulkString(nil, ""), "$0\r\n\r\n"},
		{"bulk int", AppendBulkInt(nil, 123), "$3\r\n123\r\n"},
		{"array", AppendArray(nil, 12), "*12\r\n"},
		{"map", AppendMap(nil, 2), "%2\r\n"},
		{"set", AppendSet(nil, 3), "~3\r\n"},
		{"push", AppendPush(nil, 1), ">1\r\n"},
		{"null bulk", AppendNullBulk(nil), "$-1\r\n"},
		{"null array", AppendNullArray(nil), "*-1\r\n"},
		{"null", AppendNull(nil), "_\r\n"},
		{"bool", AppendBool(nil, true), "#t\r\n"},
		{"double", AppendDouble(nil, 1.5), ",1.5\r\n"},
		{"double 0.1 like Redis 7.0", AppendDouble(nil, 0.1), ",0.10000000000000001\r\n"},
		{"double inf", AppendDouble(nil, math.Inf(-1)), ",-inf\r\n"},
		{"command", AppendCommand(nil, "GET", "k"), "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"},
		{"command bytes", AppendCommandBytes(nil, []byte("PING")), "*1\r\n$4\r\nPING\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if string(tt.got) != tt.want {
				t.Fatalf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}

func TestParseReply(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"simple", "+OK\r\n", `"OK"`},
		{"error", "-ERR bad\r\n", "(error) ERR bad"},
		{"int", ":7\r\n", "(integer) 7"},
		{"bulk", "$3\r\nabc\r\n", `"abc"`},
		{"null bulk", "$-1\r\n", "(nil)"},
		{"null array", "*-1\r\n", "(nil)"},
		{"null", "_\r\n", "(nil)"},
		{"bool", "#f\r\n", "(false)"},
		{"double", ",3.25\r\n", "(double) 3.25"},
		{"array", "*2\r\n$1\r\na\r\n:1\r\n", `*["a" (integer) 1]`},
		{"map", "%1\r\n+k\r\n+v\r\n", `%["k" "v"]`},
		{"set", "~1\r\n+m\r\n", `~["m"]`},
		{"nested", "*2\r\n*1\r\n+x\r\n%1\r\n+a\r\n_\r\n", `*[*["x"] %["a" (nil)]]`},
		{"verbatim", "=7\r\ntxt:abc\r\n", `"txt:abc"`},
		{"attribute skipped", "|1\r\n+a\r\n+b\r\n:5\r\n", "(integer) 5"},
		{"push", ">2\r\n+message\r\n+x\r\n", `>["message" "x"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, n, _, err := ParseReply([]byte(tt.in), nil)
			if err != nil {
				t.Fatalf("error %v", err)
			}
			if n != len(tt.in) || v.String() != tt.want {
				t.Fatalf("got %s (n=%d), want %s (n=%d)", v, n, tt.want, len(tt.in))
			}
			for i := 0; i < len(tt.in); i++ {
				if _, _, _, err := ParseReply([]byte(tt.in[:i]), nil); !errors.Is(err, ErrIncomplete) {
					t.Fatalf("prefix %d: err = %v, want ErrIncomplete", i, err)
				}
			}
		})
	}
	if _, _, _, err := ParseReply([]byte("?x\r\n"), nil); !errors.Is(err, ErrProtocol) {
		t.Fatalf("unknown type: err = %v", err)
	}
}

// oneByteReader returns one byte per Read, to exercise refills.
type oneByteReader struct{ r io.Reader }

func (o oneByteReader) Read(p []byte) (int, error) { return o.r.Read(p[:1]) }

func TestReader(t *testing.T) {
	var in []byte
	in = AppendSimple(in, "PONG")
	big := strings.Repeat("z", 200<<10) // larger than the initial buffer
	in = AppendBulkString(in, big)
	in = AppendArray(in, 2)
	in = AppendInt(in, 1)
	in = AppendNull(in)
	r := NewReader(oneByteReader{bytes.NewReader(in)})
	want := []string{`"PONG"`, "", `*[(integer) 1 (nil)]`}
	for i, w := range want {
		v, err := r.ReadReply()
		if err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		if i == 1 {
			if string(v.Str) != big {
				t.Fatalf("big bulk mismatch (len %d)", len(v.Str))
			}
			continue
		}
		if v.String() != w {
			t.Fatalf("reply %d: %s, want %s", i, v, w)
		}
	}
	if _, err := r.ReadReply(); !errors.Is(err, io.EOF) {
		t.Fatalf("after last reply: err = %v, want EOF", err)
	}
}

func TestReaderNoAllocs(t *testing.T) {
	var in []byte
	for i := 0; i < 1000; i++ {
		in = AppendBulkString(in, "value")
		in = AppendArray(in, 2)
		in = AppendSimple(in, "OK")
		in = AppendInt(in, 3)
	}
	br := bytes.NewReader(in)
	r := NewReader(br)
	// Warm up the element slab.
	r.ReadReply()
	r.ReadReply()
	allocs := testing.AllocsPerRun(400, func() {
		if _, err := r.ReadReply(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 0 {
		t.Fatalf("ReadReply allocated %v times per reply", allocs)
	}
}

func TestSplitArgs(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"a b  c", "a|b|c", true},
		{`"a\tb" 'c\'d'`, "a\tb|c'd", true},
		{`"abc"def`, "", false},
		{`'abc`, "", false},
		{``, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			args, ok := SplitArgs([]byte(tt.in), nil)
			if ok != tt.ok || ok && join(args) != tt.want {
				t.Fatalf("got %q %v, want %q %v", join(args), ok, tt.want, tt.ok)
			}
		})
	}
}
