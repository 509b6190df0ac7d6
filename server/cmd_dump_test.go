package server

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/server/resp"
)

// rawConn sends commands and returns replies as resp.Values, for tests
// that need a DUMP payload's bytes.
type rawConn struct {
	t    testing.TB
	conn net.Conn
	r    *resp.Reader
}

func dialRawConn(t testing.TB, network, addr string) *rawConn {
	t.Helper()
	conn, err := net.DialTimeout(network, addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { conn.Close() })
	return &rawConn{t: t, conn: conn, r: resp.NewReader(conn)}
}

func (rc *rawConn) do(args ...string) resp.Value {
	rc.t.Helper()
	rc.conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := rc.conn.Write(resp.AppendCommand(nil, args...)); err != nil {
		rc.t.Fatalf("write %q: %v", args, err)
	}
	v, err := rc.r.ReadReply()
	if err != nil {
		rc.t.Fatalf("%q: read reply: %v", args, err)
	}
	return v
}

// dumpCase builds one value on a server with setup, then reads it back
// with read; each command is run with the key as $K.
type dumpCase struct {
	name     string
	kind     string
	setup    [][]string
	read     [][]string
	encoding string // OBJECT ENCODING on both sides after RESTORE ("": not compared)
}

func seq(n int, f func(i int) []string) [][]string {
	var out [][]string
	for i := 0; i < n; i++ {
		out = append(out, f(i))
	}
	return out
}

// bulk builds one command from a prefix and many generated arguments.
func bulk(prefix []string, n int, f func(i int) []string) [][]string {
	cmd := append([]string(nil), prefix...)
	for i := 0; i < n; i++ {
		cmd = append(cmd, f(i)...)
	}
	return [][]string{cmd}
}

func dumpCases() []dumpCase {
	long := strings.Repeat("abcdefgh", 200)
	var rnd strings.Builder
	for i := 0; i < 300; i++ {
		rnd.WriteString(strconv.Itoa(i * 7919 % 1000))
	}
	lrange := [][]string{{"LRANGE", "$K", "0", "-1"}, {"LLEN", "$K"}}
	hget := [][]string{{"!sort", "HGETALL", "$K"}, {"HLEN", "$K"}}
	smem := [][]string{{"!sort", "SMEMBERS", "$K"}, {"SCARD", "$K"}}
	zr := [][]string{{"ZRANGE", "$K", "0", "-1", "WITHSCORES"}, {"ZCARD", "$K"}}
	xr := [][]string{{"XRANGE", "$K", "-", "+"}, {"XLEN", "$K"}, {"!nolag", "XINFO", "STREAM", "$K", "FULL"},
		{"XINFO", "GROUPS", "$K"}, {"XPENDING", "$K", "g1"}}
	return []dumpCase{
		{name: "int-small", kind: "string", setup: [][]string{{"SET", "$K", "7"}}, read: [][]string{{"GET", "$K"}}, encoding: "int"},
		{name: "int-neg16", kind: "string", setup: [][]string{{"SET", "$K", "-30000"}}, read: [][]string{{"GET", "$K"}}},
		{name: "int-32", kind: "string", setup: [][]string{{"SET", "$K", "2000000000"}}, read: [][]string{{"GET", "$K"}}},
		{name: "int-64", kind: "string", setup: [][]string{{"SET", "$K", "-9223372036854775808"}}, read: [][]string{{"GET", "$K"}}},
		{name: "int-like", kind: "string", setup: [][]string{{"SET", "$K", "007"}}, read: [][]string{{"GET", "$K"}}},
		{name: "empty", kind: "string", setup: [][]string{{"SET", "$K", ""}}, read: [][]string{{"GET", "$K"}}},
		{name: "short", kind: "string", setup: [][]string{{"SET", "$K", "hello world"}}, read: [][]string{{"GET", "$K"}}},
		{name: "long-compressible", kind: "string", setup: [][]string{{"SET", "$K", long}}, read: [][]string{{"GET", "$K"}}},
		{name: "long-digits", kind: "string", setup: [][]string{{"SET", "$K", rnd.String()}}, read: [][]string{{"GET", "$K"}}},
		{name: "binary", kind: "string", setup: [][]string{{"SET", "$K", "\x00\xff\r\n\x01binary"}}, read: [][]string{{"GET", "$K"}}},
		{name: "list-small", kind: "list", setup: [][]string{{"RPUSH", "$K", "a", "1", "-5", "300", "-70000", "9999999999", "", long[:100]}}, read: lrange},
		{name: "list-big", kind: "list", setup: bulk([]string{"RPUSH", "$K"}, 1200, func(i int) []string { return []string{"element-" + strconv.Itoa(i)} }), read: lrange},
		{name: "list-long-elems", kind: "list", setup: bulk([]string{"RPUSH", "$K"}, 20, func(i int) []string { return []string{long + strconv.Itoa(i)} }), read: lrange},
		{name: "hash-small", kind: "hash", setup: [][]string{{"HSET", "$K", "f1", "v1", "n", "12", "neg", "-4000", "e", ""}}, read: hget, encoding: "listpack"},
		{name: "hash-big", kind: "hash", setup: bulk([]string{"HSET", "$K"}, 1000, func(i int) []string { return []string{"field" + strconv.Itoa(i), strconv.Itoa(i * 3)} }), read: hget, encoding: "hashtable"},
		{name: "hash-long-value", kind: "hash", setup: [][]string{{"HSET", "$K", "f", long}}, read: hget, encoding: "hashtable"},
		{name: "set-intset", kind: "set", setup: [][]string{{"SADD", "$K", "1", "2", "-3", "100000"}}, read: smem, encoding: "intset"},
		{name: "set-intset64", kind: "set", setup: [][]string{{"SADD", "$K", "1", "9000000000"}}, read: smem, encoding: "intset"},
		{name: "set-strings", kind: "set", setup: [][]string{{"SADD", "$K", "a", "b", "1"}}, read: smem, encoding: "hashtable"},
		{name: "set-big-ints", kind: "set", setup: bulk([]string{"SADD", "$K"}, 600, func(i int) []string { return []string{strconv.Itoa(i)} }), read: smem, encoding: "hashtable"},
		{name: "zset-small", kind: "zset", setup: [][]string{{"ZADD", "$K", "1", "a", "2.5", "b", "-3", "c", "1e100", "d", "inf", "e", "-inf", "f", "0.1", "g"}}, read: zr, encoding: "listpack"},
		{name: "zset-big", kind: "zset", setup: bulk([]string{"ZADD", "$K"}, 500, func(i int) []string {
			return []string{strconv.FormatFloat(float64(i)/7, 'g', -1, 64), "m" + strconv.Itoa(i)}
		}), read: zr, encoding: "skiplist"},
		{name: "zset-long-member", kind: "zset", setup: [][]string{{"ZADD", "$K", "1", long, "2", "x"}}, read: zr, encoding: "skiplist"},
		{name: "stream-empty-groups", kind: "stream", setup: [][]string{{"XADD", "$K", "1-1", "a", "1"}, {"XDEL", "$K", "1-1"}, {"XGROUP", "CREATE", "$K", "g1", "0"}}, read: xr},
		{name: "stream", kind: "stream", setup: append(append(
			seq(250, func(i int) []string {
				if i%3 == 0 {
					return []string{"XADD", "$K", strconv.Itoa(1000+i) + "-" + strconv.Itoa(i%5), "other", strconv.Itoa(i), "x", long[:i%50]}
				}
				return []string{"XADD", "$K", strconv.Itoa(1000+i) + "-" + strconv.Itoa(i%5), "temp", strconv.Itoa(i), "hum", "-" + strconv.Itoa(i)}
			}),
			[]string{"XDEL", "$K", "1005-0", "1100-0"},
			[]string{"XGROUP", "CREATE", "$K", "g1", "0"},
			[]string{"XGROUP", "CREATE", "$K", "g2", "$"},
			[]string{"XREADGROUP", "GROUP", "g1", "alice", "COUNT", "5", "STREAMS", "$K", ">"},
			[]string{"XREADGROUP", "GROUP", "g1", "bob", "COUNT", "3", "STREAMS", "$K", ">"},
			[]string{"XACK", "$K", "g1", "1001-1"},
			[]string{"XGROUP", "CREATECONSUMER", "$K", "g1", "carol"}),
			[]string{"XADD", "$K", "MAXLEN", "240", "5000-0", "f", "v"}), read: xr},
	}
}

// expandKey substitutes the key for $K and strips a leading marker.
func expandKey(cmd []string, key string) (out []string, marker string) {
	if strings.HasPrefix(cmd[0], "!") {
		marker, cmd = cmd[0], cmd[1:]
	}
	out = make([]string, len(cmd))
	for i, a := range cmd {
		if a == "$K" {
			a = key
		}
		out[i] = a
	}
	return out, marker
}

// renderDumpRead renders a read command's reply for comparison: sorted
// for unordered replies, and without XINFO FULL's times and the
// fields that depend on when an entry was delivered.
func renderDumpRead(v resp.Value, marker string) string {
	if marker == "!sort" {
		return renderSorted(v)
	}
	return renderReply(v)
}

// TestDumpRestorePeer moves every type and encoding between Debian's
// redis-server and our server, in both directions, and reads the value
// back with the same commands on both.
func TestDumpRestorePeer(t *testing.T) {
	sock := startRedisPeer(t)
	peer := dialRawConn(t, "unix", sock)
	ours := dialRawConn(t, "tcp", StartTest(t, DefaultConfig()))
	for _, tc := range dumpCases() {
		t.Run(tc.name, func(t *testing.T) {
			peer.t, ours.t = t, t
			for _, dir := range []struct {
				name     string
				src, dst *rawConn
			}{{"redis-to-ours", peer, ours}, {"ours-to-redis", ours, peer}} {
				src, dst := dir.src, dir.dst
				src.do("DEL", "src")
				dst.do("DEL", "dst")
				peer.do("DEL", "ref")
				for _, cmd := range tc.setup {
					a, _ := expandKey(cmd, "src")
					if v := src.do(a...); v.IsError() {
						t.Fatalf("%s: setup %q: %s", dir.name, a, v.Str)
					}
					b, _ := expandKey(cmd, "ref")
					peer.do(b...)
				}
				payload := src.do("DUMP", "src")
				if payload.Type != resp.BulkString || payload.Null {
					t.Fatalf("%s: DUMP = %s", dir.name, payload)
				}
				if v := dst.do("RESTORE", "dst", "0", string(payload.Str)); string(v.Str) != "OK" {
					t.Fatalf("%s: RESTORE of %x: %s", dir.name, payload.Str, v)
				}
				if got := string(dst.do("TYPE", "dst").Str); got != tc.kind {
					t.Errorf("%s: TYPE = %s", dir.name, got)
				}
				if tc.encoding != "" {
					if got := string(dst.do("OBJECT", "ENCODING", "dst").Str); got != tc.encoding {
						t.Errorf("%s: OBJECT ENCODING = %s, want %s", dir.name, got, tc.encoding)
					}
				}
				// The restored value reads as the value built on
				// redis-server directly.
				for _, cmd := range tc.read {
					a, marker := expandKey(cmd, "dst")
					b, _ := expandKey(cmd, "ref")
					if marker == "!nolag" {
						continue // compared field by field below
					}
					got, want := renderDumpRead(dst.do(a...), marker), renderDumpRead(peer.do(b...), marker)
					if got != want {
						t.Errorf("%s: %q:\n got  %s\n want %s", dir.name, a, got, want)
					}
				}
				if tc.kind == "stream" {
					compareStreamInfo(t, dir.name, dst, peer)
				}
			}
		})
	}
}

// compareStreamInfo compares XINFO STREAM FULL of dst on one side with
// ref on redis-server, leaving out what depends on when it ran (seen and
// delivery times) and the node layout (radix-tree-keys and -nodes).
func compareStreamInfo(t *testing.T, dir string, dst, peer *rawConn) {
	t.Helper()
	got := dst.do("XINFO", "STREAM", "dst", "FULL")
	want := peer.do("XINFO", "STREAM", "ref", "FULL")
	g, w := scrubStreamInfo(got), scrubStreamInfo(want)
	if g != w {
		t.Errorf("%s: XINFO STREAM FULL:\n got  %s\n want %s", dir, g, w)
	}
}

func scrubStreamInfo(v resp.Value) string {
	var walk func(v resp.Value) resp.Value
	walk = func(v resp.Value) resp.Value {
		if v.Type != resp.Array && v.Type != resp.Map {
			return v
		}
		out := v
		out.Elems = nil
		for i := 0; i < len(v.Elems); i++ {
			e := v.Elems[i]
			if i%2 == 0 && i+1 < len(v.Elems) && (e.Type == resp.BulkString || e.Type == resp.SimpleString) {
				switch string(e.Str) {
				case "seen-time", "radix-tree-keys", "radix-tree-nodes", "active-time":
					i++
					continue
				}
			}
			// A pending entry [id, consumer, delivery-time, count]: drop the time.
			if e.Type == resp.Array && len(e.Elems) == 4 && e.Elems[2].Type == resp.Integer {
				e.Elems = append(append([]resp.Value(nil), e.Elems[:2]...), e.Elems[3])
			}
			if e.Type == resp.Array && len(e.Elems) == 3 && e.Elems[1].Type == resp.Integer && e.Elems[2].Type == resp.Integer {
				e.Elems = append([]resp.Value(nil), e.Elems[0], e.Elems[2])
			}
			out.Elems = append(out.Elems, walk(e))
		}
		return out
	}
	return renderReply(walk(v))
}

// TestDumpRestoreGoldens restores payloads that redis-server 7.0.15
// DUMPed (testdata/dump/*.hex, each "<name>: <read reply>" in a comment
// line), without redis-server: see TestDumpRecordGoldens.
func TestDumpRestoreGoldens(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "dump", "*.hex"))
	if len(files) == 0 {
		t.Fatal("no goldens in testdata/dump")
	}
	c := dialRawConn(t, "tcp", StartTest(t, DefaultConfig()))
	c.t = t
	for _, f := range files {
		g := readDumpGolden(t, f)
		c.do("DEL", "k")
		if v := c.do("RESTORE", "k", "0", string(g.payload)); string(v.Str) != "OK" {
			t.Errorf("%s: RESTORE: %s", f, v)
			continue
		}
		for i, cmd := range g.reads {
			a, marker := expandKey(cmd, "k")
			if got := goldenReply(renderDumpRead(c.do(a...), marker)); got != g.replies[i] {
				t.Errorf("%s: %q:\n got  %s\n want %s", f, a, got, g.replies[i])
			}
		}
		if g.sameBytes {
			if v := c.do("DUMP", "k"); string(v.Str) != string(g.payload) {
				t.Errorf("%s: our DUMP %x, redis-server's %x", f, v.Str, g.payload)
			}
		}
	}
}

// goldenReply keeps a long reply as its SHA-256, so the goldens stay small.
func goldenReply(r string) string {
	if len(r) <= 200 {
		return r
	}
	return fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(r)))
}

type dumpGolden struct {
	payload   []byte
	reads     [][]string
	replies   []string
	sameBytes bool
}

// A golden file: "payload <hex>", optionally "same-bytes" (our DUMP of the
// restored value is byte-equal), then "read <args as a Go-quoted list>"
// and "reply <rendered reply, Go-quoted>" lines.
func readDumpGolden(t *testing.T, path string) dumpGolden {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var g dumpGolden
	for _, line := range strings.Split(string(data), "\n") {
		word, rest, _ := strings.Cut(line, " ")
		switch word {
		case "payload":
			if g.payload, err = hex.DecodeString(rest); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
		case "same-bytes":
			g.sameBytes = true
		case "read":
			var args []string
			for _, q := range strings.Split(rest, "\t") {
				s, err := strconv.Unquote(q)
				if err != nil {
					t.Fatalf("%s: %q: %v", path, q, err)
				}
				args = append(args, s)
			}
			g.reads = append(g.reads, args)
		case "reply":
			s, err := strconv.Unquote(rest)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			g.replies = append(g.replies, s)
		}
	}
	return g
}

// TestDumpRecordGoldens rewrites testdata/dump from redis-server when run
// with DPULAB_DUMP_RECORD=1.
func TestDumpRecordGoldens(t *testing.T) {
	if os.Getenv("DPULAB_DUMP_RECORD") != "1" {
		t.Skip("set DPULAB_DUMP_RECORD=1 to record testdata/dump from redis-server")
	}
	sock := startRedisPeer(t)
	peer := dialRawConn(t, "unix", sock)
	ours := dialRawConn(t, "tcp", StartTest(t, DefaultConfig()))
	dir := filepath.Join("testdata", "dump")
	os.MkdirAll(dir, 0o755)
	for _, tc := range dumpCases() {
		peer.do("DEL", "k")
		ours.do("DEL", "k")
		for _, cmd := range tc.setup {
			a, _ := expandKey(cmd, "k")
			peer.do(a...)
			ours.do(a...)
		}
		payload := peer.do("DUMP", "k").Str
		var b strings.Builder
		fmt.Fprintf(&b, "# %s: DUMP by redis-server 7.0.15 (TestDumpRecordGoldens)\n", tc.name)
		fmt.Fprintf(&b, "payload %x\n", payload)
		if string(ours.do("DUMP", "k").Str) == string(payload) {
			b.WriteString("same-bytes\n")
		}
		for _, cmd := range tc.read {
			a, marker := expandKey(cmd, "k")
			if marker == "!nolag" {
				continue
			}
			var q []string
			if marker != "" {
				q = append(q, strconv.Quote(marker))
			}
			for _, s := range a {
				if s == "k" {
					s = "$K"
				}
				q = append(q, strconv.Quote(s))
			}
			fmt.Fprintf(&b, "read %s\n", strings.Join(q, "\t"))
			fmt.Fprintf(&b, "reply %s\n", strconv.Quote(goldenReply(renderDumpRead(peer.do(a...), marker))))
		}
		if err := os.WriteFile(filepath.Join(dir, tc.name+".hex"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
