package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/server/resp"
)

// FuzzCommands runs random command lines against an in-process server:
// every command and subcommand of the table, arguments drawn from a
// dictionary of hostile values (extreme integers and floats, option words,
// keys of every type and missing ones) or raw bytes, in RESP2 or RESP3,
// optionally inside MULTI/EXEC. It fails on a panic (in the command or in
// anything it leaves behind: timers, deliveries), on a command that runs
// longer than fuzzCmdLimit, and on a reply that is not well-formed RESP.
//
// The corpus in testdata/fuzz/FuzzCommands (every crasher found so far)
// replays in plain `go test`; `.ci/run` fuzzes for a bounded time:
//
//	go test ./server/ -run '^$' -fuzz FuzzCommands -fuzztime 60s
//
// An input is read as: one flag byte (bit 0: RESP3, bit 1: wrap in
// MULTI/EXEC), then commands of 2 bytes (index into fuzzCommandNames) and
// 1 byte (argument count, mod 8), each argument one byte: an index into
// fuzzDict, or past its end a raw argument of the next (b-len) mod 24
// bytes.
func FuzzCommands(f *testing.F) {
	fuzzCommandNames = fuzzCommandNames[:0]
	for _, c := range table().all {
		fuzzCommandNames = append(fuzzCommandNames, c.Name)
	}
	enc := func(flags byte, lines ...[]string) []byte {
		out := []byte{flags}
		for _, l := range lines {
			idx := fuzzCommandIndex(l[0])
			if idx < 0 {
				f.Fatalf("seed: no command %q", l[0])
			}
			out = append(out, byte(idx>>8), byte(idx), byte(len(l)-1))
			for _, a := range l[1:] {
				out = append(out, byte(fuzzDictIndex(a)))
			}
		}
		return out
	}
	// One seed per command with a couple of arguments, so every command
	// is in the corpus from the start.
	for i, name := range fuzzCommandNames {
		f.Add(enc(byte(i%4), []string{name, "s", "1"}))
	}
	f.Add(enc(0, []string{"setrange", "s", "9223372036854775807", "x"}))
	f.Add(enc(0, []string{"blmpop", "1", "9223372036854775807", "l", "LEFT"}))
	f.Add(enc(0, []string{"bzmpop", "2147483647", "9223372036854775806", "z", "MIN"}))
	f.Add(enc(1, []string{"keys", "a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b"}))
	f.Fuzz(func(t *testing.T, data []byte) {
		runFuzzInput(t, data)
	})
}

// fuzzCmdLimit bounds one command's time; the server's keys are small, so
// anything near it is unbounded work.
const fuzzCmdLimit = 5 * time.Second

// fuzzCommandNames lists every command and subcommand ("client|kill"),
// filled by FuzzCommands (the table is built by init functions, after
// package variables).
var fuzzCommandNames []string

func fuzzCommandIndex(name string) int {
	for i, n := range fuzzCommandNames {
		if n == name {
			return i
		}
	}
	return -1
}

// fuzzDict are the argument values: keys of every type (see
// fuzzPopulate) and missing ones, numbers at the edges of every width,
// floats Redis parses specially, and the option words commands look for.
var fuzzDict = []string{
	// keys
	"s", "n", "l", "st", "si", "z", "h", "x", "nokey", "{s}a", "bm",
	// integers
	"0", "1", "-1", "2", "3", "10", "100", "-100", "1000000",
	"2147483647", "-2147483648", "2147483648", "4294967295", "4294967296",
	"9223372036854775807", "-9223372036854775808", "9223372036854775806", "-9223372036854775807",
	"9223372036854775808", "18446744073709551615", "18446744073709551616", "4611686018427387904",
	"536870912", "536870911", "1099511627776",
	// floats
	"inf", "-inf", "+inf", "nan", "1e308", "-1e308", "1e309", "0.5", "-0.0", "1.5e-300", "(1", "(inf", "[a", "(a", "-", "+", "[", "(",
	// ids
	"0-0", "0-1", "1-0", "*", "$", ">", "18446744073709551615-18446744073709551615", "1-*", "9223372036854775807-0",
	// option words
	"WITHSCORES", "LIMIT", "COUNT", "MATCH", "TYPE", "BYLEX", "BYSCORE", "REV", "KEEPTTL", "GET", "STORE",
	"EX", "PX", "EXAT", "PXAT", "NX", "XX", "GT", "LT", "CH", "INCR", "PERSIST", "WEIGHTS", "AGGREGATE",
	"SUM", "MIN", "MAX", "LEFT", "RIGHT", "BEFORE", "AFTER", "RANK", "MAXLEN", "IDX", "MINMATCHLEN",
	"WITHMATCHLEN", "LEN", "BY", "ASC", "DESC", "ALPHA", "NOMKSTREAM", "MINID", "~", "=", "JUSTID",
	"FORCE", "IDLE", "TIME", "RETRYCOUNT", "BLOCK", "STREAMS", "GROUP", "NOACK", "MKSTREAM", "ENTRIESREAD",
	"FULL", "WITHVALUES", "REPLACE", "DB", "ABSTTL", "FREQ", "SYNC", "ASYNC", "ID", "USER", "ADDR",
	"LADDR", "SKIPME", "MAXAGE", "WRITE", "ALL", "ON", "OFF", "SKIP", "BCAST", "PREFIX", "OPTIN",
	"OPTOUT", "NOLOOP", "YES", "NO", "RESET", "SAMPLES", "OVERFLOW", "WRAP", "SAT", "FAIL", "u8", "i64",
	"u63", "i65", "#1", "AND", "OR", "XOR", "NOT", "BIT", "BYTE", "WITHCODE", "LIBRARYNAME", "FILTERBY",
	"MODULE", "ACLCAT", "PATTERN", "HELP", "AUTH", "SETNAME", "NOSAVE", "NOW", "ABORT",
	// patterns and config names
	"*a*", "a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", "[a-", "\\", "[^]", "maxmemory", "hz", "timeout",
	"notify-keyspace-events", "slowlog-log-slower-than", "list-max-listpack-size", "save",
	// odd bytes
	"", " ", "\x00", "\xff\xfe", "\r\n", strings.Repeat("a", 300),
	// command names, for COMMAND INFO/DOCS/GETKEYS (appended: the corpus
	// refers to the entries above by index)
	"get", "set", "zunionstore", "zinter", "sintercard", "lmpop", "blmpop", "zmpop", "eval", "sort",
	"xread", "xreadgroup", "migrate", "georadius", "object|encoding", "client|kill", "config",
}

func fuzzDictIndex(s string) int {
	for i, d := range fuzzDict {
		if d == s {
			return i
		}
	}
	panic("fuzz seed: not in dictionary: " + s)
}

// fuzzPopulate gives the keys of fuzzDict their types.
var fuzzPopulate = [][]string{
	{"SET", "s", "hello"},
	{"SET", "n", "12"},
	{"SETBIT", "bm", "100", "1"},
	{"RPUSH", "l", "a", "b", "c", "1", "2"},
	{"SADD", "st", "a", "b", "c"},
	{"SADD", "si", "1", "2", "3"},
	{"ZADD", "z", "1", "a", "2", "b", "-inf", "c", "inf", "d"},
	{"HSET", "h", "a", "1", "b", "x"},
	{"XADD", "x", "1-1", "f", "v"},
	{"XADD", "x", "2-1", "f", "v"},
	{"XGROUP", "CREATE", "x", "g", "0"},
	{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "x", ">"},
	{"EXPIRE", "n", "1000"},
}

// fuzzNewClient returns a client of srv served by nobody: commands run
// through runCommands as the connection paths run them, replies stay in
// out. Its connection is one end of a pipe, so output delivered to it
// from elsewhere has somewhere to wake.
func fuzzNewClient(t *testing.T, srv *Server) *Client {
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	c := &Client{srv: srv, conn: a, fd: -1, id: srv.nextID.Add(1), db: srv.dbs[0], resp: 2, authed: true,
		created: time.Now(), addr: "fuzz", laddr: "fuzz", netw: "pipe"}
	srv.clientsMu.Lock()
	srv.clients[c.id] = c
	srv.clientsMu.Unlock()
	return c
}

// fuzzRun runs one command line on c and returns the bytes it replied.
func fuzzRun(t *testing.T, c *Client, args []string) []byte {
	s := c.srv
	start := len(c.out)
	c.rbuf = resp.AppendCommand(c.rbuf[:0], args...)
	c.rpos, c.wpos = 0, len(c.rbuf)
	// A hang fails the whole process (a test cannot stop a running
	// goroutine): the fuzzer keeps the input as a crasher.
	watchdog := time.AfterFunc(fuzzCmdLimit, func() {
		panic(fmt.Sprintf("fuzz: %q ran longer than %v", args, fuzzCmdLimit))
	})
	s.mu.Lock()
	c.now = time.Now().UnixMilli()
	var batch [4]int
	ids := batch[:0]
	c.runCommands(resp.Limits{MaxBulkLen: s.maxBulk()}, &ids)
	if c.asyncQueued {
		c.takeAsync()
	}
	p := s.panics
	s.mu.Unlock()
	watchdog.Stop()
	// Containment (contain.go) keeps the server up; for the fuzzer a
	// contained panic is still a failure.
	if p.count > 0 {
		t.Fatalf("%q: panic in %s: %v\n%s", args, p.lastCmd, p.last, p.stack)
	}
	return c.out[start:]
}

func runFuzzInput(t *testing.T, data []byte) {
	if len(data) == 0 {
		return
	}
	cfg := DefaultConfig().WithLog(io.Discard)
	// Values may grow to proto-max-bulk-len, as in Redis: a legitimate
	// SETRANGE k 536870911 x asks for 512 MB, which is no bug but would
	// exhaust the fuzzer's memory. Redis's minimum bounds them to 1 MB.
	cfg.ProtoMaxBulkLen = 1 << 20
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.stop)
	c := fuzzNewClient(t, srv)
	for _, l := range fuzzPopulate {
		fuzzRun(t, c, l)
	}
	c.out = c.out[:0]
	flags := data[0]
	data = data[1:]
	if flags&1 != 0 {
		fuzzRun(t, c, []string{"HELLO", "3"})
	}
	if flags&2 != 0 {
		fuzzRun(t, c, []string{"MULTI"})
	}
	next := func() (byte, bool) {
		if len(data) == 0 {
			return 0, false
		}
		b := data[0]
		data = data[1:]
		return b, true
	}
	for n := 0; len(data) >= 3 && n < 32; n++ {
		hi, _ := next()
		lo, _ := next()
		nargs, _ := next()
		name := fuzzCommandNames[(int(hi)<<8|int(lo))%len(fuzzCommandNames)]
		args := strings.Split(name, "|")
		for k := 0; k < int(nargs%8); k++ {
			b, ok := next()
			if !ok {
				break
			}
			if int(b) < len(fuzzDict) {
				args = append(args, fuzzDict[b])
				continue
			}
			raw := min((int(b)-len(fuzzDict))%24, len(data))
			args = append(args, string(data[:raw]))
			data = data[raw:]
		}
		if c.closeAfter || c.blocked != nil {
			break
		}
		out := fuzzRun(t, c, args)
		checkRESP(t, args, out)
		c.out = c.out[:0]
	}
	if flags&2 != 0 && !c.closeAfter && c.blocked == nil {
		checkRESP(t, []string{"EXEC"}, fuzzRun(t, c, []string{"EXEC"}))
	}
}

// checkRESP fails unless out is a sequence of well-formed replies.
func checkRESP(t *testing.T, args []string, out []byte) {
	r := resp.NewReader(bytes.NewReader(out))
	for {
		_, err := r.ReadReply()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("%q: reply is not RESP (%v): %q", args, err, out)
		}
	}
}
