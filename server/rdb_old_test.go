package server

import (
	"encoding/binary"
	"os/exec"
	"testing"

	"github.com/dpulab/dpulab/internal/testpeer"
)

// ziplist builds a ziplist (ziplist.c) of elems, integers encoded as
// Redis encodes them, for payloads in the encodings Redis wrote before
// 7.0.
func ziplist(elems ...string) []byte {
	var body []byte
	prev, tail := 0, 10
	for _, e := range elems {
		var ent []byte
		if prev < 254 {
			ent = append(ent, byte(prev))
		} else {
			ent = binary.LittleEndian.AppendUint32(append(ent, 0xFE), uint32(prev))
		}
		if v, ok := parseRedisInt(e); ok {
			switch {
			case v >= 0 && v <= 12:
				ent = append(ent, 0xF1+byte(v))
			case v >= -128 && v <= 127:
				ent = append(ent, 0xFE, byte(v))
			case v >= -32768 && v <= 32767:
				ent = binary.LittleEndian.AppendUint16(append(ent, 0xC0), uint16(v))
			case v >= -1<<23 && v < 1<<23:
				ent = append(ent, 0xF0, byte(v), byte(v>>8), byte(v>>16))
			case v >= -1<<31 && v < 1<<31:
				ent = binary.LittleEndian.AppendUint32(append(ent, 0xD0), uint32(v))
			default:
				ent = binary.LittleEndian.AppendUint64(append(ent, 0xE0), uint64(v))
			}
		} else if len(e) < 64 {
			ent = append(append(ent, byte(len(e))), e...)
		} else {
			ent = append(append(ent, 0x40|byte(len(e)>>8), byte(len(e))), e...)
		}
		tail = 10 + len(body)
		body = append(body, ent...)
		prev = len(ent)
	}
	zl := binary.LittleEndian.AppendUint32(nil, uint32(10+len(body)+1))
	zl = binary.LittleEndian.AppendUint32(zl, uint32(tail))
	zl = binary.LittleEndian.AppendUint16(zl, uint16(len(elems)))
	return append(append(zl, body...), 0xFF)
}

// oldPayloads are values in the encodings Redis 7.0 still loads but no
// longer writes, with commands that read them and the replies expected.
func oldPayloads() []struct {
	name    string
	payload []byte
	read    []string
	want    string
} {
	long := string(make([]byte, 300))
	w := func(typ byte, f func(w *rdbWriter)) []byte {
		x := &rdbWriter{}
		x.byte(typ)
		f(x)
		return withTrailer(x.b, 9)
	}
	type p = struct {
		name    string
		payload []byte
		read    []string
		want    string
	}
	return []p{
		{"list-plain", w(rdbTypeList, func(w *rdbWriter) { w.len(3); w.str([]byte("a")); w.str([]byte("12")); w.str([]byte(long)) }),
			[]string{"LRANGE", "k", "0", "1"}, `*2[$"a" $"12"]`},
		{"list-ziplist", w(rdbTypeListZiplist, func(w *rdbWriter) { w.str(ziplist("a", "7", "-100", "1000", "100000", "5000000000", long)) }),
			[]string{"LRANGE", "k", "0", "5"}, `*6[$"a" $"7" $"-100" $"1000" $"100000" $"5000000000"]`},
		{"list-quicklist-ziplists", w(rdbTypeListQuicklist, func(w *rdbWriter) { w.len(2); w.str(ziplist("a", "b")); w.str(ziplist("c", "3")) }),
			[]string{"LRANGE", "k", "0", "-1"}, `*4[$"a" $"b" $"c" $"3"]`},
		{"hash-ziplist", w(rdbTypeHashZiplist, func(w *rdbWriter) { w.str(ziplist("f", "v", "n", "-7")) }),
			[]string{"HGETALL", "k"}, `*4[$"f" $"v" $"n" $"-7"]`},
		{"zset-ziplist", w(rdbTypeZSetZiplist, func(w *rdbWriter) { w.str(ziplist("a", "1", "b", "2.5")) }),
			[]string{"ZRANGE", "k", "0", "-1", "WITHSCORES"}, `*4[$"a" $"1" $"b" $"2.5"]`},
		{"zset-text-scores", w(rdbTypeZSet, func(w *rdbWriter) {
			w.len(3)
			w.str([]byte("a"))
			w.b = append(w.b, 3, '1', '.', '5')
			w.str([]byte("b"))
			w.b = append(w.b, 254)
			w.str([]byte("c"))
			w.b = append(w.b, 255)
		}), []string{"ZRANGE", "k", "0", "-1", "WITHSCORES"}, `*6[$"c" $"-inf" $"a" $"1.5" $"b" $"inf"]`},
		{"stream-v1", w(rdbTypeStreamListpacks, func(w *rdbWriter) {
			w.len(1)
			var key rdbWriter
			key.streamID(StreamID{5, 0})
			w.str(key.b)
			var lp lpBuilder
			for _, v := range []int64{2, 1, 1} { // live, deleted, master fields
				lp.appendInt(v)
			}
			lp.appendString([]byte("f"))
			lp.appendInt(0)
			for _, e := range []struct {
				flags, ms int64
				val       string
			}{{2, 0, "a"}, {3, 1, "b"}, {2, 2, "c"}} {
				lp.appendInt(e.flags)
				lp.appendInt(e.ms)
				lp.appendInt(0)
				lp.appendString([]byte(e.val))
				lp.appendInt(4)
			}
			w.str(lp.finish())
			w.len(2) // length
			w.len(7) // last id
			w.len(0) //
			w.len(1) // groups
			w.str([]byte("g"))
			w.len(5)
			w.len(0)
			w.len(1) // PEL
			w.streamID(StreamID{5, 0})
			w.millis(1000)
			w.len(2)
			w.len(1) // consumers
			w.str([]byte("alice"))
			w.millis(1000)
			w.len(1)
			w.streamID(StreamID{5, 0})
		}), []string{"XRANGE", "k", "-", "+"}, `*2[*2[$"5-0" *2[$"f" $"a"]] *2[$"7-0" *2[$"f" $"c"]]]`},
	}
}

// TestRestoreOldEncodings restores values in the pre-7.0 encodings
// (ziplists, quicklists of ziplists, plain lists, text scores, streams
// without 7.0's fields), here and, when it is installed, on redis-server,
// which must read them the same.
func TestRestoreOldEncodings(t *testing.T) {
	ours := dialRawConn(t, "tcp", StartTest(t, DefaultConfig()))
	var peer *rawConn
	if _, err := exec.LookPath("redis-server"); err == nil || testpeer.Required() {
		peer = dialRawConn(t, "unix", startRedisPeer(t))
	}
	for _, tc := range oldPayloads() {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []*rawConn{ours, peer} {
				if c == nil {
					continue
				}
				c.t = t
				c.do("DEL", "k")
				if v := c.do("RESTORE", "k", "0", string(tc.payload)); string(v.Str) != "OK" {
					t.Fatalf("RESTORE %x: %s", tc.payload, v)
				}
				if got := renderReply(c.do(tc.read...)); got != tc.want {
					t.Errorf("%q: got %s, want %s", tc.read, got, tc.want)
				}
			}
			if peer != nil && tc.name == "stream-v1" {
				for _, cmd := range [][]string{{"XINFO", "GROUPS", "k"}, {"XPENDING", "k", "g"}} {
					if got, want := renderReply(ours.do(cmd...)), renderReply(peer.do(cmd...)); got != want {
						t.Errorf("%q:\n got  %s\n want %s", cmd, got, want)
					}
				}
			}
		})
	}
}
