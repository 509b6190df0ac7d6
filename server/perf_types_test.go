//go:build perf

package server

import (
	"encoding/csv"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/server/resp"
)

// typesBenchTests are redis-benchmark's tests of the data types (lists,
// sets, hashes, sorted sets; XADD as a custom command below).
const typesBenchTests = "lpush,rpush,lpop,rpop,sadd,hset,spop,zadd,zpopmin,lrange_100,lrange_600"

// runTypesBenchmark runs redis-benchmark with the given test selection or
// custom command and returns requests per second by test name.
func runTypesBenchmark(t *testing.T, bin string, port, pipeline, n int, extra ...string) map[string]float64 {
	t.Helper()
	args := append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(port), "-c", "50", "-n", strconv.Itoa(n),
		"-P", strconv.Itoa(pipeline), "--csv"}, extra...)
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-benchmark %v: %v\n%s", args, err, out)
	}
	recs, err := csv.NewReader(strings.NewReader(string(out))).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("parse redis-benchmark csv: %v\n%s", err, out)
	}
	res := map[string]float64{}
	for _, r := range recs[1:] {
		rps, _ := strconv.ParseFloat(r[1], 64)
		res[r[0]] = rps
	}
	return res
}

// TestPerfTypes compares the data-type commands of dpulab server with
// Debian's redis-server side by side, alternating, at pipeline depths 1 and
// 16, and prints one ratio (ours/redis-server, requests per second, medians)
// per redis-benchmark test. Run: go test -tags perf -run PerfTypes -v ./server/
func TestPerfTypes(t *testing.T) {
	redisBin := testpeer.Require(t, "redis-server")
	benchBin := testpeer.Require(t, "redis-benchmark")
	rounds, n := 3, 100000
	if s := os.Getenv("DPULAB_PERF_ROUNDS"); s != "" {
		rounds, _ = strconv.Atoi(s)
	}
	redisPort, ourPort := freePort(t), freePort(t)
	startProc(t, exec.Command(redisBin, "--port", strconv.Itoa(redisPort), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"), redisPort)
	ours := exec.Command(os.Args[0], "-test.run", "^TestPerfServerProcess$")
	ours.Env = append(os.Environ(), fmt.Sprintf("%s=%d", perfServeEnv, ourPort))
	startProc(t, ours, ourPort)

	for _, depth := range []int{1, 16} {
		rps := map[string]map[string][]float64{"redis": {}, "ours": {}}
		var names []string
		for round := 0; round < rounds; round++ {
			for _, who := range []string{"redis", "ours"} {
				port := redisPort
				if who == "ours" {
					port = ourPort
				}
				res := runTypesBenchmark(t, benchBin, port, depth, n, "-t", typesBenchTests)
				for k, v := range runTypesBenchmark(t, benchBin, port, depth, n, "XADD", "mystream", "*", "myfield", "myvalue") {
					res[k] = v
				}
				for test, v := range res {
					if len(rps[who][test]) == 0 && who == "redis" && round == 0 {
						names = append(names, test)
					}
					rps[who][test] = append(rps[who][test], v)
				}
			}
		}
		for _, test := range names {
			r, o := median(rps["redis"][test]), median(rps["ours"][test])
			t.Logf("ratio P%d %-34s %.2f (ours %.0f/s vs redis-server %.0f/s, medians of %d)", depth, test, o/r, o, r, rounds)
		}
	}
}

// loadCommands sends cmds over one pipelined connection, 1000 at a time.
func loadCommands(t *testing.T, port int, n int, cmd func(i int) []string) {
	t.Helper()
	conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := resp.NewReader(conn)
	var buf []byte
	for i := 0; i < n; i += 1000 {
		buf = buf[:0]
		m := min(1000, n-i)
		for j := 0; j < m; j++ {
			buf = resp.AppendCommand(buf, cmd(i+j)...)
		}
		if _, err := conn.Write(buf); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < m; j++ {
			if v, err := r.ReadReply(); err != nil || v.IsError() {
				t.Fatalf("load: %v %v", err, v)
			}
		}
	}
}

// TestPerfTypesMemory loads the same container data into redis-server and
// into dpulab server (each a process of its own) and prints the resident
// memory of both per data set. No goal is set for containers; the figures
// show where ours stands.
func TestPerfTypesMemory(t *testing.T) {
	redisBin := testpeer.Require(t, "redis-server")
	sets := []struct {
		name string
		n    int
		cmd  func(i int) []string
	}{
		{"1M-element list", 1000, func(i int) []string {
			a := []string{"RPUSH", "biglist"}
			for j := 0; j < 1000; j++ {
				a = append(a, fmt.Sprintf("element:%d", i*1000+j))
			}
			return a
		}},
		{"100k hashes of 10 fields", 100000, func(i int) []string {
			a := []string{"HSET", fmt.Sprintf("hash:%d", i)}
			for j := 0; j < 10; j++ {
				a = append(a, fmt.Sprintf("field%d", j), fmt.Sprintf("value%d", i+j))
			}
			return a
		}},
		{"100k sets of 10 members", 100000, func(i int) []string {
			a := []string{"SADD", fmt.Sprintf("set:%d", i)}
			for j := 0; j < 10; j++ {
				a = append(a, fmt.Sprintf("member%d", i+j))
			}
			return a
		}},
		{"100k sorted sets of 10 members", 100000, func(i int) []string {
			a := []string{"ZADD", fmt.Sprintf("zset:%d", i)}
			for j := 0; j < 10; j++ {
				a = append(a, strconv.Itoa(j), fmt.Sprintf("member%d", i+j))
			}
			return a
		}},
		{"1M stream entries", 1000000, func(i int) []string {
			return []string{"XADD", "stream", "*", "myfield", "myvalue"}
		}},
	}
	for _, ds := range sets {
		redisPort, ourPort := freePort(t), freePort(t)
		redis := startProc(t, exec.Command(redisBin, "--port", strconv.Itoa(redisPort), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"), redisPort)
		ours := exec.Command(os.Args[0], "-test.run", "^TestPerfServerProcess$")
		ours.Env = append(os.Environ(), fmt.Sprintf("%s=%d", perfServeEnv, ourPort))
		ours = startProc(t, ours, ourPort)
		r0, o0 := rssOf(t, redis.Process.Pid), rssOf(t, ours.Process.Pid)
		loadCommands(t, redisPort, ds.n, ds.cmd)
		loadCommands(t, ourPort, ds.n, ds.cmd)
		time.Sleep(2 * time.Second)
		rr, or := rssOf(t, redis.Process.Pid)-r0, rssOf(t, ours.Process.Pid)-o0
		t.Logf("memory %-32s ours %4d MiB, redis-server %4d MiB (growth in RSS), ratio %.2f", ds.name, or>>20, rr>>20, float64(or)/float64(rr))
		redis.Process.Kill()
		ours.Process.Kill()
	}
}
