package server

import (
	"context"
	"encoding/csv"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
)

// redisBenchmarkDefaultTests are the tests redis-benchmark 7.0 (Debian 12)
// runs when given no -t: every one must complete against our server.
var redisBenchmarkDefaultTests = []string{
	"PING_INLINE", "PING_MBULK", "SET", "GET", "INCR", "LPUSH", "RPUSH", "LPOP", "RPOP",
	"SADD", "HSET", "SPOP", "ZADD", "ZPOPMIN", "LPUSH (needed to benchmark LRANGE)",
	"LRANGE_100 (first 100 elements)", "LRANGE_300 (first 300 elements)",
	"LRANGE_500 (first 500 elements)", "LRANGE_600 (first 600 elements)", "MSET (10 keys)",
}

// runRedisBenchmark runs redis-benchmark with --csv against addr and
// returns requests per second by test name, failing the test on any error
// or warning in its output.
func runRedisBenchmark(t *testing.T, bin, addr string, extra ...string) map[string]float64 {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args := append([]string{"-h", host, "-p", port, "-n", "2000", "-c", "20", "--csv"}, extra...)
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	text := string(out)
	if err != nil {
		t.Fatalf("redis-benchmark %s: %v\n%s", strings.Join(args, " "), err, text)
	}
	for _, bad := range []string{"rror", "WARNING", "ERR", "WRONGTYPE"} {
		if strings.Contains(text, bad) {
			t.Fatalf("redis-benchmark output mentions %q:\n%s", bad, text)
		}
	}
	recs, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil || len(recs) < 2 || recs[0][0] != "test" || recs[0][1] != "rps" {
		t.Fatalf("redis-benchmark --csv output not understood (%v):\n%s", err, text)
	}
	rps := make(map[string]float64)
	for _, r := range recs[1:] {
		v, err := strconv.ParseFloat(r[1], 64)
		if err != nil {
			t.Fatalf("rps %q of %s: %v", r[1], r[0], err)
		}
		rps[r[0]] = v
	}
	t.Logf("redis-benchmark %s:\n%s", strings.Join(extra, " "), text)
	return rps
}

// TestRedisBenchmarkDefaultSuite runs Debian's redis-benchmark default
// suite (and the XADD command newer versions include) against our server.
func TestRedisBenchmarkDefaultSuite(t *testing.T) {
	bin := testpeer.Require(t, "redis-benchmark")
	addr := StartTest(t, DefaultConfig())
	rps := runRedisBenchmark(t, bin, addr)
	for _, name := range redisBenchmarkDefaultTests {
		v, ok := rps[name]
		if !ok {
			t.Errorf("test %q did not complete", name)
			continue
		}
		if v <= 0 {
			t.Errorf("test %q: %v requests per second", name, v)
		}
	}
	// redis-benchmark 7.2+ has an XADD test, "XADD key * field value";
	// 7.0 runs it as a custom command.
	rps = runRedisBenchmark(t, bin, addr, "XADD", "mystream", "*", "myfield", "myvalue")
	for name, v := range rps {
		if !strings.HasPrefix(name, "XADD") || v <= 0 {
			t.Errorf("XADD run: %q at %v requests per second", name, v)
		}
	}
	if len(rps) != 1 {
		t.Errorf("XADD run reported %d tests, want 1", len(rps))
	}
	c := dialDiff(t, "tcp", addr)
	if r, err := c.do([]string{"XLEN", "mystream"}, renderReply); err != nil || r != ":2000" {
		t.Errorf("XLEN after 2000 XADDs = %s (%v), want :2000", r, err)
	}
}
