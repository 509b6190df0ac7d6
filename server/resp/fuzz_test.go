package resp

import (
	"errors"
	"testing"
)

// FuzzParseCommand feeds arbitrary bytes to the command parser the server
// runs on every read: it must never panic, never claim more bytes than it
// was given, and return arguments that lie inside the input.
func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{
		"*1\r\n$4\r\nPING\r\n",
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n",
		"PING\r\n",
		"SET \"a b\" 'c'\r\n",
		"*-1\r\n",
		"*1\r\n$-1\r\n",
		"*2\r\n$3\r\nGET\r\n$500000000\r\n",
		"\"\\x4",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		buf := append([]byte(nil), data...)
		var args [][]byte
		for len(buf) > 0 {
			var n int
			var err error
			lim := Limits{MaxBulkLen: 1 << 20, Unauthenticated: len(data)%2 == 0}
			if need := Needed(buf, lim); need != 0 && need <= len(buf) {
				t.Fatalf("Needed = %d for an incomplete command of %d bytes", need, len(buf))
			}
			args, n, err = ParseCommand(buf, args, lim)
			if err != nil {
				var pe *ProtocolError
				if !errors.As(err, &pe) {
					t.Fatalf("error of type %T: %v", err, err)
				}
				return
			}
			if n == 0 {
				return
			}
			if n > len(buf) {
				t.Fatalf("consumed %d of %d bytes", n, len(buf))
			}
			buf = buf[n:]
		}
	})
}

// FuzzParseReply does the same for the client-side reply parser.
func FuzzParseReply(f *testing.F) {
	for _, s := range []string{
		"+OK\r\n", "-ERR x\r\n", ":1\r\n", "$1\r\na\r\n", "*2\r\n:1\r\n_\r\n",
		"%1\r\n+a\r\n,1.5\r\n", "~1\r\n#t\r\n", "|1\r\n+a\r\n+b\r\n:1\r\n", "*100000000\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var slab []Value
		for len(data) > 0 {
			_, n, s, err := ParseReply(data, slab)
			slab = s
			if err != nil {
				return
			}
			if n <= 0 || n > len(data) {
				t.Fatalf("consumed %d of %d bytes", n, len(data))
			}
			data = data[n:]
		}
	})
}
