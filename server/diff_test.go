package server

// Differential tests: every script in testdata/diff runs against Debian's
// redis-server and against our server, in RESP2 and in RESP3 (HELLO 3), and
// every reply must match exactly, error replies included.
//
// Script format (one command per line):
//
//	# a comment; blank lines are ignored
//	SET k "a value with spaces\r\n"     quoting and escapes as in redis-cli
//	!sort SMEMBERS s                    sort the reply's elements first
//	!sortdeep SCAN 0 COUNT 1000         sort nested aggregates too
//	!shape SPOP s 2                     compare only the reply's type and size
//	!type RANDOMKEY                     compare only the reply's type
//	!slowlog SLOWLOG GET                compare SLOWLOG GET's entries without
//	                                    their id, time, duration and address
//	!resp2 HGETALL h                    run only in the RESP2 pass (!resp3 too)
//	!c2 SET k v                         send on a second connection (!c3: a third),
//	                                    dialled on first use, in the pass's protocol
//	!recv                               read one more reply (a push) without sending
//	!c2 !send BLPOP l 0                 send without reading the reply (a blocking
//	                                    command); a later !c2 !recv reads it
//	!blocked 1                          wait until exactly 1 client is blocked
//	                                    (CLIENT LIST's b flag, read on a connection
//	                                    of its own), so that what the next line
//	                                    writes finds it waiting; records nothing
//	CLIENT UNBLOCK $ID2                 $ID1..$ID3: that connection's client id
//
// Markers combine: "!resp3 !sort SMEMBERS s". After changing a script,
// re-record redis-server's replies for TestDiffGolden (which runs without
// redis-server): go test ./server/ -run TestDiff -diff.update. Before a script runs both
// redis-server is flushed (FLUSHALL) and our server is a fresh in-process
// instance; each pass uses a fresh connection.

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/server/resp"
)

// showDiff logs every reply (DPULAB_DIFF_SHOW=1), to check what a new
// script line actually exercises.
var showDiff = os.Getenv("DPULAB_DIFF_SHOW") == "1"

// diffLine is one command of a script with its comparison mode.
type diffLine struct {
	lineNo int
	text   string
	args   []string
	sort   bool
	deep   bool // sort nested aggregates too
	shape  bool
	typ    bool
	slow   bool // SLOWLOG GET: see renderSlowlog
	only   int  // 0: both passes, 2 or 3: only that protocol
	conn   int  // 0: the first connection, 1 and 2: !c2, !c3
	recv   bool
	send   bool // write only; the reply is read by a later !recv
	// blocked >= 0: wait for that many blocked clients (no command).
	blocked int
}

// parseDiffScript reads a script; errors name the file and line.
func parseDiffScript(name string, data []byte) ([]diffLine, error) {
	var out []diffLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		l := diffLine{lineNo: n, text: text, blocked: -1}
		rest := text
		for strings.HasPrefix(rest, "!") {
			marker, after, _ := strings.Cut(rest, " ")
			switch marker {
			case "!sort":
				l.sort = true
			case "!sortdeep":
				l.deep = true
			case "!shape":
				l.shape = true
			case "!type":
				l.typ = true
			case "!slowlog":
				l.slow = true
			case "!resp2":
				l.only = 2
			case "!resp3":
				l.only = 3
			case "!c2":
				l.conn = 1
			case "!c3":
				l.conn = 2
			case "!recv":
				l.recv = true
			case "!send":
				l.send = true
			case "!blocked":
				l.blocked = 0
			default:
				return nil, fmt.Errorf("%s:%d: unknown marker %q (want !sort, !sortdeep, !shape, !type, !slowlog, !resp2, !resp3, !c2, !c3, !recv, !send, !blocked)", name, n, marker)
			}
			rest = strings.TrimSpace(after)
			if l.blocked == 0 {
				// Its argument is a count, not a command.
				break
			}
		}
		if l.blocked == 0 {
			v, err := strconv.Atoi(strings.TrimSpace(rest))
			if err != nil || v < 0 {
				return nil, fmt.Errorf("%s:%d: !blocked takes a count of clients", name, n)
			}
			l.blocked = v
			out = append(out, l)
			continue
		}
		args, ok := resp.SplitArgs([]byte(rest), nil)
		if !ok {
			return nil, fmt.Errorf("%s:%d: unbalanced quotes", name, n)
		}
		if len(args) == 0 && !l.recv {
			return nil, fmt.Errorf("%s:%d: marker without a command", name, n)
		}
		if len(args) > 0 && l.recv {
			return nil, fmt.Errorf("%s:%d: !recv takes no command", name, n)
		}
		if l.send && (l.recv || len(args) == 0) {
			return nil, fmt.Errorf("%s:%d: !send needs a command", name, n)
		}
		for _, a := range args {
			l.args = append(l.args, string(a))
		}
		out = append(out, l)
	}
	return out, sc.Err()
}

// renderReply prints a reply exactly, type byte included, so that a bulk
// "1" and an integer 1, or RESP2's $-1 and *-1, never compare equal.
func renderReply(v resp.Value) string {
	var b strings.Builder
	renderInto(&b, v)
	return b.String()
}

func renderInto(b *strings.Builder, v resp.Value) {
	b.WriteByte(byte(v.Type))
	switch {
	case v.Null && v.Type != resp.Null:
		b.WriteString("nil")
	case v.Type == resp.Null:
	case v.Type == resp.Integer, v.Type == resp.Boolean:
		b.WriteString(strconv.FormatInt(v.Int, 10))
	case v.Type == resp.Array || v.Type == resp.Set || v.Type == resp.Map || v.Type == resp.Push || v.Type == resp.Attribute:
		b.WriteString(strconv.Itoa(len(v.Elems)))
		b.WriteByte('[')
		for i, e := range v.Elems {
			if i > 0 {
				b.WriteByte(' ')
			}
			renderInto(b, e)
		}
		b.WriteByte(']')
	default:
		b.WriteString(strconv.Quote(string(v.Str)))
	}
}

// renderSorted renders an aggregate with its elements sorted (a map's
// key/value pairs are kept together).
func renderSorted(v resp.Value) string {
	if v.Null {
		return renderReply(v)
	}
	var items []string
	switch v.Type {
	case resp.Map:
		for i := 0; i+1 < len(v.Elems); i += 2 {
			items = append(items, renderReply(v.Elems[i])+" "+renderReply(v.Elems[i+1]))
		}
	case resp.Array, resp.Set, resp.Push:
		for _, e := range v.Elems {
			items = append(items, renderReply(e))
		}
	default:
		return renderReply(v)
	}
	sort.Strings(items)
	return fmt.Sprintf("%c%d sorted[%s]", v.Type, len(v.Elems), strings.Join(items, " "))
}

// renderSortedDeep renders v with the elements of every aggregate sorted,
// at every depth (a map's pairs kept together).
func renderSortedDeep(v resp.Value) string {
	if v.Null || len(v.Elems) == 0 && v.Type != resp.Array && v.Type != resp.Set && v.Type != resp.Map && v.Type != resp.Push {
		return renderReply(v)
	}
	var items []string
	if v.Type == resp.Map {
		for i := 0; i+1 < len(v.Elems); i += 2 {
			items = append(items, renderSortedDeep(v.Elems[i])+" "+renderSortedDeep(v.Elems[i+1]))
		}
	} else {
		for _, e := range v.Elems {
			items = append(items, renderSortedDeep(e))
		}
	}
	sort.Strings(items)
	return fmt.Sprintf("%c%d sorted[%s]", v.Type, len(v.Elems), strings.Join(items, " "))
}

// renderShape renders only the type and, for aggregates and strings, size
// class (nil or not, number of elements).
func renderShape(v resp.Value) string {
	switch {
	case v.Null:
		return fmt.Sprintf("%c nil", v.Type)
	case v.IsError():
		return renderReply(v) // errors must still match exactly
	case len(v.Elems) > 0 || v.Type == resp.Array || v.Type == resp.Set || v.Type == resp.Map:
		return fmt.Sprintf("%c %d elements", v.Type, len(v.Elems))
	}
	return fmt.Sprintf("%c value", v.Type)
}

func renderType(v resp.Value) string {
	if v.IsError() {
		return renderReply(v)
	}
	return fmt.Sprintf("%c", v.Type)
}

// renderSlowlog renders SLOWLOG GET's entries with only what two servers
// can agree on: each entry's arguments (CLIENT UNBLOCK's client id
// masked) and client name, and the types of its id, timestamp, duration
// and client address (ids count from the
// server's start, redis-server's is shared by every script, and it listens
// on a unix socket where ours is on TCP).
func renderSlowlog(v resp.Value) string {
	if v.Type != resp.Array || v.Null {
		return renderReply(v)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "*%d[", len(v.Elems))
	for i, e := range v.Elems {
		if i > 0 {
			b.WriteByte(' ')
		}
		if e.Type != resp.Array || len(e.Elems) != 6 {
			b.WriteString(renderReply(e))
			continue
		}
		f := e.Elems
		args := f[3]
		if len(args.Elems) >= 3 && strings.EqualFold(string(args.Elems[0].Str), "client") && strings.EqualFold(string(args.Elems[1].Str), "unblock") {
			// A client id: each server numbers its own clients.
			args.Elems = append([]resp.Value(nil), args.Elems...)
			args.Elems[2] = resp.Value{Type: args.Elems[2].Type, Str: []byte("$ID")}
		}
		fmt.Fprintf(&b, "entry(%c %c %c %s %c %s)", f[0].Type, f[1].Type, f[2].Type, renderReply(args), f[4].Type, renderReply(f[5]))
	}
	b.WriteByte(']')
	return b.String()
}

// diffConn is a raw RESP connection for the differential tests.
type diffConn struct {
	c  net.Conn
	rd *resp.Reader
}

func dialDiff(t testing.TB, network, addr string) *diffConn {
	t.Helper()
	c, err := net.DialTimeout(network, addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s %s: %v", network, addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return &diffConn{c: c, rd: resp.NewReader(c)}
}

// do sends one command and returns its reply rendered by render (the
// resp.Value is only valid until the next read).
func (d *diffConn) do(args []string, render func(resp.Value) string) (string, error) {
	if err := d.c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return "", err
	}
	if len(args) > 0 {
		if _, err := d.c.Write(resp.AppendCommand(nil, args...)); err != nil {
			return "", fmt.Errorf("write: %w", err)
		}
	}
	v, err := d.rd.ReadReply()
	if err != nil {
		return "", fmt.Errorf("read reply: %w", err)
	}
	return render(v), nil
}

// startRedisPeer starts Debian's redis-server on a unix socket in a temp dir
// (no TCP port, so nothing to race for), with extra options appended to its
// command line, and returns the socket path.
func startRedisPeer(t testing.TB, extra ...string) string {
	t.Helper()
	bin := testpeer.Require(t, "redis-server")
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command(bin, append([]string{"--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no",
		"--dir", dir, "--daemonize", "no", "--logfile", filepath.Join(dir, "redis.log")}, extra...)...)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("unix", sock)
		if err == nil {
			c.Close()
			return sock
		}
		select {
		case <-done:
			log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			t.Fatalf("redis-server exited before accepting connections: %s", log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server did not accept connections on %s within 10s", sock)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// diffScripts loads every testdata/diff/*.txt script.
func diffScripts(t *testing.T) map[string][]diffLine {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "diff", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in testdata/diff (err %v)", err)
	}
	out := make(map[string][]diffLine)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := parseDiffScript(f, data)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".txt")] = lines
	}
	return out
}

// renderFor picks the comparison a line's markers ask for.
func (l diffLine) renderFor() func(resp.Value) string {
	switch {
	case l.typ:
		return renderType
	case l.slow:
		return renderSlowlog
	case l.shape:
		return renderShape
	case l.sort:
		return renderSorted
	case l.deep:
		return renderSortedDeep
	}
	return renderReply
}

// diffSession is one side's connections for a script pass: the first
// given, the others (!c2, !c3) dialled on first use in the same protocol.
type diffSession struct {
	t     testing.TB
	proto int
	dial  func(testing.TB) *diffConn
	conns [3]*diffConn
	ids   [3]string // CLIENT ID of each connection, for $ID1..$ID3
	ctl   *diffConn // for !blocked, dialled on first use
}

func (s *diffSession) conn(i int) *diffConn {
	if s.conns[i] == nil {
		c := s.dial(s.t)
		if s.proto == 3 {
			if r, err := c.do([]string{"HELLO", "3"}, renderReply); err != nil || strings.HasPrefix(r, "-") {
				s.t.Fatalf("connection %d: HELLO 3: %v %s", i+1, err, r)
			}
		}
		s.conns[i] = c
	}
	if s.ids[i] == "" {
		r, err := s.conns[i].do([]string{"CLIENT", "ID"}, renderReply)
		if err != nil || !strings.HasPrefix(r, ":") {
			s.t.Fatalf("connection %d: CLIENT ID: %v %s", i+1, err, r)
		}
		s.ids[i] = r[1:]
	}
	return s.conns[i]
}

// run carries out one script line on this side: waits for !blocked, else
// sends (with $IDn replaced) and, unless !send, reads and renders the
// reply. done is false for lines that produce no reply to compare.
func (s *diffSession) run(l diffLine) (reply string, done bool, err error) {
	if l.blocked >= 0 {
		return "", false, s.waitBlocked(l.blocked)
	}
	c := s.conn(l.conn)
	args := l.args
	if strings.Contains(l.text, "$ID") {
		args = append([]string(nil), args...)
		for i, a := range args {
			for j := range s.conns {
				if s.conns[j] != nil {
					a = strings.ReplaceAll(a, fmt.Sprintf("$ID%d", j+1), s.ids[j])
				}
			}
			args[i] = a
		}
	}
	if l.send {
		if err := c.c.SetWriteDeadline(time.Now().Add(10 * time.Second)); err != nil {
			return "", false, err
		}
		_, err := c.c.Write(resp.AppendCommand(nil, args...))
		return "", false, err
	}
	reply, err = c.do(args, l.renderFor())
	return reply, true, err
}

// waitBlocked polls CLIENT LIST on a connection of its own until exactly n
// clients have the b (blocked) flag. It waits for a state, not for time:
// the 10 s bound only turns a hang into a failure.
func (s *diffSession) waitBlocked(n int) error {
	if s.ctl == nil {
		s.ctl = s.dial(s.t)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := s.ctl.do([]string{"CLIENT", "LIST"}, func(v resp.Value) string { return string(v.Str) })
		if err != nil {
			return err
		}
		got := 0
		for _, line := range strings.Split(r, "\n") {
			for _, f := range strings.Fields(line) {
				if flags, ok := strings.CutPrefix(f, "flags="); ok && strings.Contains(flags, "b") {
					got++
				}
			}
		}
		if got == n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("!blocked %d: %d clients blocked after 10s", n, got)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// goldenLine is how a reply is recorded in testdata/diff/NAME.golden:
// protocol, script line, the command (quoted) and the rendered reply.
func goldenLine(proto int, l diffLine, reply string) string {
	return fmt.Sprintf("%d\t%d\t%s\t%s", proto, l.lineNo, strconv.Quote(l.text), reply)
}

// runDiffScript runs one script against both servers in protocol proto,
// reports every differing reply, and returns redis-server's replies as
// golden lines.
func runDiffScript(t *testing.T, lines []diffLine, proto int, want, got func(testing.TB) *diffConn) []string {
	refs, ourss := &diffSession{t: t, proto: proto, dial: want}, &diffSession{t: t, proto: proto, dial: got}
	ref, ours := want(t), got(t)
	// redis-server is shared by all scripts and flushed; ours is a fresh
	// instance per script and protocol.
	if r, err := ref.do([]string{"FLUSHALL"}, renderReply); err != nil || r != `+"OK"` {
		t.Fatalf("redis-server: FLUSHALL: %v %s", err, r)
	}
	if proto == 3 {
		for name, c := range map[string]*diffConn{"redis-server": ref, "ours": ours} {
			r, err := c.do([]string{"HELLO", "3"}, renderReply)
			if err != nil || strings.HasPrefix(r, "-") {
				t.Fatalf("%s: HELLO 3: %v %s", name, err, r)
			}
		}
	}
	refs.conns[0], ourss.conns[0] = ref, ours
	var golden []string
	fails := 0
	for _, l := range lines {
		if l.only != 0 && l.only != proto {
			continue
		}
		w, done, err := refs.run(l)
		if err != nil {
			t.Fatalf("line %d %q: redis-server: %v", l.lineNo, l.text, err)
		}
		if done {
			golden = append(golden, goldenLine(proto, l, w))
		}
		g, _, err := ourss.run(l)
		if err != nil {
			t.Fatalf("line %d %q: ours: %v (redis-server replied %s)", l.lineNo, l.text, err, w)
		}
		if !done {
			continue
		}
		if showDiff {
			t.Logf("line %d: %s\n  -> %s", l.lineNo, l.text, w)
		}
		if w != g {
			t.Errorf("line %d: %s\n  redis-server: %s\n  ours:         %s", l.lineNo, l.text, w, g)
			if fails++; fails > 30 {
				t.Fatal("too many differences, stopping")
			}
		}
	}
	return golden
}

var updateGolden = flag.Bool("diff.update", false, "TestDiff: record redis-server's replies in testdata/diff/*.golden for TestDiffGolden")

func goldenPath(name string) string { return filepath.Join("testdata", "diff", name+".golden") }

// writeGolden replaces a golden file atomically.
func writeGolden(name string, lines []string) error {
	path := goldenPath(name)
	tmp := path + ".tmp"
	data := "# Replies of Debian 12's redis-server to " + name + ".txt, recorded by\n" +
		"# go test ./server/ -run TestDiff -diff.update (protocol, line, command, reply).\n" +
		strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// readGolden loads a golden file as "proto line" -> golden line.
func readGolden(name string) (map[string]string, error) {
	data, err := os.ReadFile(goldenPath(name))
	if err != nil {
		return nil, err
	}
	out := make(map[string]string)
	for _, ln := range strings.Split(string(data), "\n") {
		if ln == "" || strings.HasPrefix(ln, "#") {
			continue
		}
		f := strings.SplitN(ln, "\t", 3)
		if len(f) < 3 {
			return nil, fmt.Errorf("%s: malformed line %q", goldenPath(name), ln)
		}
		out[f[0]+" "+f[1]] = ln
	}
	return out, nil
}

// TestDiffGolden replays every script against our server and compares
// with redis-server's recorded replies, so the comparison runs on machines
// without redis-server too (TestDiff, against the live peer, is the
// authority and refreshes the recordings with -diff.update).
func TestDiffGolden(t *testing.T) {
	scripts := diffScripts(t)
	names := make([]string, 0, len(scripts))
	for n := range scripts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		golden, err := readGolden(name)
		if err != nil {
			t.Errorf("%s: %v; record it with: go test ./server/ -run TestDiff -diff.update (needs redis-server)", name, err)
			continue
		}
		for _, proto := range []int{2, 3} {
			t.Run(fmt.Sprintf("%s/resp%d", name, proto), func(t *testing.T) {
				network, addr := startDiffOurs(t)
				ours := &diffSession{t: t, proto: proto, dial: func(t testing.TB) *diffConn { return dialDiff(t, network, addr) }}
				fails := 0
				for _, l := range scripts[name] {
					if l.only != 0 && l.only != proto {
						continue
					}
					if l.send || l.blocked >= 0 {
						if _, _, err := ours.run(l); err != nil {
							t.Fatalf("line %d %q: %v", l.lineNo, l.text, err)
						}
						continue
					}
					want, ok := golden[fmt.Sprintf("%d %d", proto, l.lineNo)]
					wantPrefix := goldenLine(proto, l, "")
					if !ok || !strings.HasPrefix(want, wantPrefix) {
						t.Fatalf("%s.golden is out of date at %s.txt:%d (%s); re-record: go test ./server/ -run TestDiff -diff.update", name, name, l.lineNo, l.text)
					}
					g, _, err := ours.run(l)
					if err != nil {
						t.Fatalf("line %d %q: %v", l.lineNo, l.text, err)
					}
					if w := strings.TrimPrefix(want, wantPrefix); w != g {
						t.Errorf("line %d: %s\n  redis-server (recorded): %s\n  ours:                    %s", l.lineNo, l.text, w, g)
						if fails++; fails > 30 {
							t.Fatal("too many differences, stopping")
						}
					}
				}
			})
		}
	}
}

func TestDiffScriptsParse(t *testing.T) {
	for name, lines := range diffScripts(t) {
		if len(lines) == 0 {
			t.Errorf("%s: empty script", name)
		}
	}
	lines, err := parseDiffScript("x", []byte("# c\n\n!resp3 !sort SMEMBERS \"a b\"\nSET k 'v'\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 || !lines[0].sort || lines[0].only != 3 || lines[0].args[1] != "a b" || lines[1].args[2] != "v" || lines[1].lineNo != 4 {
		t.Fatalf("parsed %+v", lines)
	}
	if _, err := parseDiffScript("x", []byte("!bogus GET k\n")); err == nil || !strings.Contains(err.Error(), "x:1") {
		t.Fatalf("unknown marker: err %v, want one naming x:1", err)
	}
}

func TestDiff(t *testing.T) {
	scripts := diffScripts(t)
	sock := startRedisPeer(t)
	names := make([]string, 0, len(scripts))
	for n := range scripts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		var golden []string
		for _, proto := range []int{2, 3} {
			t.Run(fmt.Sprintf("%s/resp%d", name, proto), func(t *testing.T) {
				// One instance of ours per pass, shared by its connections.
				network, addr := startDiffOurs(t)
				golden = append(golden, runDiffScript(t, scripts[name], proto,
					func(t testing.TB) *diffConn { return dialDiff(t, "unix", sock) },
					func(t testing.TB) *diffConn { return dialDiff(t, network, addr) })...)
			})
		}
		// A script -run filtered out recorded nothing: keep its golden.
		if *updateGolden && len(golden) > 0 {
			if err := writeGolden(name, golden); err != nil {
				t.Fatal(err)
			}
		}
	}
}
