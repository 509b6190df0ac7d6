//go:build perf

package server

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/server/resp"
)

// perfServeEnv makes the test binary a plain server process (see
// TestPerfServerProcess) so that ours runs in a process of its own, like
// redis-server, for fair CPU and memory figures.
const perfServeEnv = "DPULAB_PERF_SERVE_PORT"

// TestPerfServerProcess is not a test: when perfServeEnv is set it serves on
// that port until killed. TestPerf starts the test binary this way.
func TestPerfServerProcess(t *testing.T) {
	port := os.Getenv(perfServeEnv)
	if port == "" {
		t.Skip("helper process for TestPerf")
	}
	cfg := DefaultConfig()
	cfg.Bind = []string{"127.0.0.1"}
	cfg.Port, _ = strconv.Atoi(port)
	TuneGC()
	srv, err := New(cfg.WithLog(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if secs, _ := strconv.Atoi(os.Getenv("DPULAB_PERF_SERVE_SECONDS")); secs > 0 {
		// Bounded run, so -cpuprofile gets written: profile the server with
		// DPULAB_PERF_SERVE_PORT=N DPULAB_PERF_SERVE_SECONDS=20 go test
		// -tags perf -run TestPerfServerProcess -cpuprofile cpu.out.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(secs)*time.Second)
		defer cancel()
	}
	if err := srv.ListenAndServe(ctx); err != nil {
		t.Fatal(err)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func waitPing(t *testing.T, port int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			conn.Write([]byte("PING\r\n"))
			buf := make([]byte, 16)
			n, _ := conn.Read(buf)
			conn.Close()
			if strings.HasPrefix(string(buf[:n]), "+PONG") {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("server on port %d did not answer PING", port)
}

// startProc starts a server process and stops it at cleanup.
func startProc(t *testing.T, cmd *exec.Cmd, port int) *exec.Cmd {
	t.Helper()
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", cmd.Path, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	waitPing(t, port)
	return cmd
}

type benchResult struct{ rps, p50 float64 }

// runBenchmark runs redis-benchmark and returns results per test name.
func runBenchmark(t *testing.T, bin string, port, pipeline int, extra ...string) map[string]benchResult {
	t.Helper()
	args := append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(port), "-t", "set,get", "-c", "50", "-n", "300000", "-d", "256", "-P", strconv.Itoa(pipeline), "--csv"}, extra...)
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatalf("redis-benchmark %v: %v", args, err)
	}
	recs, err := csv.NewReader(strings.NewReader(string(out))).ReadAll()
	if err != nil {
		t.Fatalf("parse redis-benchmark csv: %v\n%s", err, out)
	}
	res := map[string]benchResult{}
	for _, r := range recs[1:] {
		rps, _ := strconv.ParseFloat(r[1], 64)
		p50, _ := strconv.ParseFloat(r[4], 64)
		res[r[0]] = benchResult{rps, p50}
	}
	return res
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// load writes n keys "key:%d" with size-byte values over one pipelined
// connection.
func load(t *testing.T, port, n, size int) {
	t.Helper()
	conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := resp.NewReader(conn)
	val := []byte(strings.Repeat("x", size))
	var buf []byte
	const batch = 1000
	for i := 0; i < n; i += batch {
		buf = buf[:0]
		m := min(batch, n-i)
		for j := 0; j < m; j++ {
			buf = resp.AppendCommandBytes(buf, []byte("SET"), []byte("key:"+strconv.Itoa(i+j)), val)
		}
		if _, err := conn.Write(buf); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < m; j++ {
			v, err := r.ReadReply()
			if err != nil || v.IsError() {
				t.Fatalf("load: %v %v", err, v)
			}
		}
	}
}

func rssOf(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// TestPerf compares dpulab server with Debian's redis-server side by side:
// redis-benchmark SET/GET at pipeline depths 1 and 16, alternating between
// the two servers, and resident memory after 1,000,000 256-byte values.
// Goals: ratio >= 1.0 at both depths, memory ratio <= 1.3.
func TestPerf(t *testing.T) {
	redisBin := testpeer.Require(t, "redis-server")
	benchBin := testpeer.Require(t, "redis-benchmark")
	rounds := 3
	if s := os.Getenv("DPULAB_PERF_ROUNDS"); s != "" {
		rounds, _ = strconv.Atoi(s)
	}
	redisPort, ourPort := freePort(t), freePort(t)
	redis := startProc(t, exec.Command(redisBin, "--port", strconv.Itoa(redisPort), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"), redisPort)
	ours := exec.Command(os.Args[0], "-test.run", "^TestPerfServerProcess$")
	ours.Env = append(os.Environ(), fmt.Sprintf("%s=%d", perfServeEnv, ourPort))
	ours = startProc(t, ours, ourPort)

	for _, depth := range []int{1, 16} {
		rps := map[string]map[string][]float64{"redis": {}, "ours": {}}
		p50 := map[string]map[string][]float64{"redis": {}, "ours": {}}
		for round := 0; round < rounds; round++ {
			for _, who := range []string{"redis", "ours"} {
				port := redisPort
				if who == "ours" {
					port = ourPort
				}
				res := runBenchmark(t, benchBin, port, depth)
				for test, r := range res {
					rps[who][test] = append(rps[who][test], r.rps)
					p50[who][test] = append(p50[who][test], r.p50)
				}
				t.Logf("P%-2d round %d %-5s SET %9.0f/s p50 %.3f ms  GET %9.0f/s p50 %.3f ms", depth, round+1, who,
					res["SET"].rps, res["SET"].p50, res["GET"].rps, res["GET"].p50)
			}
		}
		for _, test := range []string{"SET", "GET"} {
			r, o := median(rps["redis"][test]), median(rps["ours"][test])
			t.Logf("ratio P%d %s %.2f (ours %.0f/s vs redis-server %.0f/s, medians of %d; p50 ours %.3f ms, redis-server %.3f ms)",
				depth, test, o/r, o, r, rounds, median(p50["ours"][test]), median(p50["redis"][test]))
		}
	}

	const nkeys, size = 1_000_000, 256
	load(t, redisPort, nkeys, size)
	load(t, ourPort, nkeys, size)
	time.Sleep(2 * time.Second) // let our GC settle, as redis has no GC
	rr, or := rssOf(t, redis.Process.Pid), rssOf(t, ours.Process.Pid)
	t.Logf("rss after %d keys of %d bytes: ours %d MiB, redis-server %d MiB, ratio %.2f (goal <= 1.3)", nkeys, size, or>>20, rr>>20, float64(or)/float64(rr))
}
