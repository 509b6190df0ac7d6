package server

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// withTrailer appends the RDB version and CRC64 DUMP payloads end with.
func withTrailer(obj []byte, version uint16) []byte {
	p := binary.LittleEndian.AppendUint16(append([]byte(nil), obj...), version)
	return binary.LittleEndian.AppendUint64(p, redisCRC64(p))
}

// crc64Jones is crc64.c's algorithm bit by bit: the reference the
// table-driven redisCRC64 is checked against.
func crc64Jones(b []byte) uint64 {
	const poly = 0x95ac9329ac4bc9b5 // 0xad93d23594c935a9 reflected
	var crc uint64
	for _, x := range b {
		crc ^= uint64(x)
		for i := 0; i < 8; i++ {
			if crc&1 != 0 {
				crc = crc>>1 ^ poly
			} else {
				crc >>= 1
			}
		}
	}
	return crc
}

func TestRedisCRC64(t *testing.T) {
	// crc64.c's test vector.
	if got := redisCRC64([]byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Errorf("crc64(123456789) = %#x, want 0xe9c6d914c4b8d9ca", got)
	}
	for _, s := range []string{"", "a", "hello world", strings.Repeat("xyz", 1000)} {
		if redisCRC64([]byte(s)) != crc64Jones([]byte(s)) {
			t.Errorf("redisCRC64 and crc64Jones disagree on %q", s)
		}
	}
}

func TestLZFRoundTrip(t *testing.T) {
	for _, s := range []string{
		strings.Repeat("a", 21), strings.Repeat("abcdefgh", 200), strings.Repeat("0123456789", 3000),
		"the quick brown fox jumps over the lazy dog; the quick brown fox jumps over the lazy dog",
	} {
		c := lzfCompress([]byte(s))
		if c == nil {
			t.Errorf("%.20q...: not compressed", s)
			continue
		}
		d, err := lzfDecompress(c, len(s))
		if err != nil || string(d) != s {
			t.Errorf("%.20q...: round trip: %v", s, err)
		}
	}
	if c := lzfCompress([]byte("abcdefghijklmnopqrstuvwxyz")); c != nil {
		t.Errorf("incompressible input compressed to %x", c)
	}
	// Back references before the start, runs past the end, short output.
	for _, in := range [][]byte{{0x20, 0x05}, {0x02, 'a'}, {0x00, 'a', 0x20, 0x01}, {0xE0}} {
		if _, err := lzfDecompress(in, 4); err == nil {
			t.Errorf("lzfDecompress(%x) accepted", in)
		}
	}
}

// TestRestoreBadPayloads: what RESTORE refuses, with Redis's errors, and
// that a refused RESTORE leaves the key alone.
func TestRestoreBadPayloads(t *testing.T) {
	c, _ := newTestServer(t)
	c.must(`"OK"`, "SET", "k", "v")
	good := string(withTrailer([]byte{rdbTypeString, 0x01, 'x'}, rdbVersion))
	for _, tc := range []struct {
		payload, want string
	}{
		{"", "(error) ERR DUMP payload version or checksum are wrong"},
		{"short", "(error) ERR DUMP payload version or checksum are wrong"},
		{string(withTrailer([]byte{rdbTypeString, 0x01, 'x'}, 11)), "(error) ERR DUMP payload version or checksum are wrong"},
		{good[:len(good)-1] + "\x00", "(error) ERR DUMP payload version or checksum are wrong"},
		{string(withTrailer([]byte{rdbTypeString, 0x3f, 'x'}, rdbVersion)), "(error) ERR Bad data format"},
		{string(withTrailer([]byte{rdbTypeListQuicklist2, 0x00}, rdbVersion)), "(error) ERR Bad data format"},
		{string(withTrailer([]byte{6}, rdbVersion)), "(error) ERR Bad data format"},
		{string(withTrailer([]byte{rdbTypeSet, 0x02, 0x01, 'a', 0x01, 'a'}, rdbVersion)), "(error) ERR Bad data format"},
		{string(withTrailer([]byte{rdbTypeZSet2, 0x01, 0x01, 'a', 0, 0, 0, 0, 0, 0, 0xf8, 0x7f}, rdbVersion)), "(error) ERR Bad data format"},
		{string(withTrailer([]byte{rdbTypeString, 0xC3, 0x01, 0x7f, 0x00}, rdbVersion)), "(error) ERR Bad data format"},
	} {
		if got := c.do("RESTORE", "new", "0", tc.payload); got != tc.want {
			t.Errorf("RESTORE %x: %s, want %s", tc.payload, got, tc.want)
		}
	}
	c.must("(integer) 0", "EXISTS", "new")
	// An older version with the same encoding is accepted, as Redis does.
	c.must(`"OK"`, "RESTORE", "old", "0", string(withTrailer([]byte{rdbTypeString, 0x01, 'x'}, 9)))
	c.must(`"x"`, "GET", "old")
}

// TestRestoreOptions: BUSYKEY, REPLACE, TTLs relative and absolute,
// IDLETIME and FREQ, in Redis's order of checks.
func TestRestoreOptions(t *testing.T) {
	c, _ := newTestServer(t)
	c.must(`"OK"`, "SET", "src", "value")
	p := c.do("DUMP", "src")
	pl, err := unquoteRendered(p)
	if err != nil {
		t.Fatalf("DUMP reply %s: %v", p, err)
	}
	c.must("(error) BUSYKEY Target key name already exists.", "RESTORE", "src", "0", pl)
	c.must("(error) BUSYKEY Target key name already exists.", "RESTORE", "src", "-1", pl)
	c.must("(error) ERR Invalid TTL value, must be >= 0", "RESTORE", "new", "-1", pl)
	c.must("(error) ERR value is not an integer or out of range", "RESTORE", "new", "x", pl)
	c.must("(error) ERR syntax error", "RESTORE", "new", "0", pl, "IDLETIME")
	c.must("(error) ERR syntax error", "RESTORE", "new", "0", pl, "IDLETIME", "1", "FREQ", "1")
	c.must("(error) ERR syntax error", "RESTORE", "new", "0", pl, "BOGUS")
	c.must("(error) ERR Invalid IDLETIME value, must be >= 0", "RESTORE", "new", "0", pl, "IDLETIME", "-1")
	c.must("(error) ERR Invalid FREQ value, must be >= 0 and <= 255", "RESTORE", "new", "0", pl, "FREQ", "256")
	c.must("(error) ERR value is not an integer or out of range", "RESTORE", "new", "0", pl, "FREQ", "x")
	c.must(`"OK"`, "RESTORE", "src", "0", pl, "REPLACE")
	c.must(`"OK"`, "RESTORE", "ttl", "100000", pl)
	if got := renderedInt(c.do("PTTL", "ttl")); got < 99000 || got > 100000 {
		t.Errorf("PTTL after RESTORE with 100000 = %d", got)
	}
	c.must(`"OK"`, "RESTORE", "abs", "4102444800000", pl, "ABSTTL")
	c.must("(integer) 4102444800", "EXPIRETIME", "abs")
	// An expired TTL creates nothing, and REPLACE still removes the old value.
	c.must(`"OK"`, "RESTORE", "gone", "1", pl, "ABSTTL")
	c.must("(integer) 0", "EXISTS", "gone")
	c.must(`"OK"`, "RESTORE", "src", "1", pl, "ABSTTL", "REPLACE")
	c.must("(integer) 0", "EXISTS", "src")
	c.must(`"OK"`, "RESTORE", "idle", "0", pl, "IDLETIME", "1000")
	if got := renderedInt(c.do("OBJECT", "IDLETIME", "idle")); got < 1000 || got > 1002 {
		t.Errorf("OBJECT IDLETIME after IDLETIME 1000 = %d", got)
	}
	c.must(`"OK"`, "RESTORE", "freq", "0", pl, "FREQ", "100")
	c.must("(nil)", "DUMP", "missing")
}

// renderedInt reads "(integer) n"; -1 << 62 for anything else.
func renderedInt(s string) int64 {
	var n int64
	if _, err := fmt.Sscanf(s, "(integer) %d", &n); err != nil {
		return -1 << 62
	}
	return n
}

// unquoteRendered turns a bulk string rendered by resp.Value.String back
// into its bytes.
func unquoteRendered(s string) (string, error) {
	var out string
	_, err := fmt.Sscanf(s, "%q", &out)
	return out, err
}

// FuzzRestorePayload feeds the loader arbitrary objects behind a valid
// trailer: it must never panic, and what it accepts must DUMP to a payload
// it accepts again, of the same type. The seed corpus
// (testdata/fuzz/FuzzRestorePayload) is redis-server's DUMPs of every type
// and encoding plus old-format payloads; it replays in plain go test.
func FuzzRestorePayload(f *testing.F) {
	lim := DefaultTuning()
	f.Fuzz(func(t *testing.T, obj []byte) {
		payload := withTrailer(obj, rdbVersion)
		o, ok := verifyDumpPayload(payload)
		if !ok || !bytes.Equal(o[:len(obj)], obj) {
			t.Fatalf("verifyDumpPayload refused its own trailer")
		}
		k, str, v, err := loadPayload(o, &lim)
		if err != nil {
			return
		}
		var e entry
		if k == kindString {
			e = stringEntry(str, 0)
		} else {
			e = objectEntry(&objBox{o: v}, k, 0)
		}
		again, ok := verifyDumpPayload(dumpPayload(e))
		if !ok {
			t.Fatalf("our DUMP fails verification")
		}
		k2, _, _, err := loadPayload(again, &lim)
		if err != nil || k2 != k {
			t.Fatalf("re-DUMP of a loaded %v does not load: %v (%x)", k, err, again)
		}
	})
}

// TestWriteFuzzSeeds writes FuzzRestorePayload's seed corpus
// (testdata/fuzz/FuzzRestorePayload) from the redis-server goldens and
// the old encodings, when run with DPULAB_DUMP_RECORD=1.
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("DPULAB_DUMP_RECORD") != "1" {
		t.Skip("set DPULAB_DUMP_RECORD=1 to rewrite the seed corpus")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzRestorePayload")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, payload []byte) {
		obj := payload[:len(payload)-10]
		data := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", obj)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "dump", "*.hex"))
	for _, f := range files {
		g := readDumpGolden(t, f)
		if len(g.payload) < 4096 {
			write("redis-"+strings.TrimSuffix(filepath.Base(f), ".hex"), g.payload)
		}
	}
	for _, p := range oldPayloads() {
		write("old-"+p.name, p.payload)
	}
}

// TestRestoreMutations runs the loader over 20000 deterministic mutations
// of the seed corpus (bytes changed, dropped and repeated), as
// FuzzRestorePayload does without the fuzzing engine: nothing may panic,
// and what loads must DUMP to a payload that loads.
func TestRestoreMutations(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzRestorePayload", "*"))
	var seeds [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		_, body, _ := strings.Cut(string(data), "\n")
		s := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(body), "[]byte("), ")")
		b, err := strconv.Unquote(s)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		seeds = append(seeds, []byte(b))
	}
	if len(seeds) == 0 {
		t.Fatal("no seed corpus")
	}
	lim := DefaultTuning()
	r := rand.New(rand.NewPCG(29, 1))
	for n := 0; n < 20000; n++ {
		in := append([]byte(nil), seeds[r.IntN(len(seeds))]...)
		for k := r.IntN(6) + 1; k > 0 && len(in) > 1; k-- {
			switch i := r.IntN(len(in)); r.IntN(4) {
			case 0:
				in[i] = byte(r.IntN(256))
			case 1:
				in = append(in[:i], in[i+1:]...)
			case 2:
				j := i + r.IntN(len(in)-i)
				in = append(in[:j], append(append([]byte(nil), in[i:j]...), in[j:]...)...)
			case 3:
				in[i] = []byte{0, 0x80, 0x81, 0xff, 0x7f, 0x3f, 0xc3, 0xf0}[r.IntN(8)]
			}
		}
		k, str, v, err := loadPayload(withTrailer(in, rdbVersion), &lim)
		if err != nil {
			continue
		}
		var e entry
		if k == kindString {
			e = stringEntry(str, 0)
		} else {
			e = objectEntry(&objBox{o: v}, k, 0)
		}
		if _, _, _, err := loadPayload(dumpPayload(e), &lim); err != nil {
			t.Fatalf("a loaded %v does not load again after DUMP: %q", k, in)
		}
	}
}
