//go:build perf

package server

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/internal/testpeer"
)

// perfScript is the script EVAL and EVALSHA time: one redis.call, the
// common shape (a counter, a lock, a limiter step).
const perfScript = "return redis.call('INCR', KEYS[1])"

// scriptBenchmarks: EVAL of a cached script (Redis hashes the body on
// every EVAL, as we do), EVALSHA of the same, and EVAL of a script that
// calls nothing (the VM and conversion alone).
var scriptBenchmarks = [][]string{
	{"EVAL", perfScript, "1", "evalkey"},
	{"EVALSHA", sha1hex([]byte(perfScript)), "1", "evalkey"},
	{"EVAL", "return 1", "0"},
}

// cpuSeconds is the user and system CPU time a process has used
// (/proc/<pid>/stat, in clock ticks of 1/100 s).
func cpuSeconds(t *testing.T, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command name, which ends with the last ')'.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100
}

// TestPerfScripting compares EVAL and EVALSHA between dpulab server and
// Debian's redis-server as TestPerfCommands does (side by side,
// alternating, pipeline depths 1 and 16, medians), and prints the
// throughput ratio and each server's CPU time per call (robust to a busy
// machine, which throughput is not). Run: go test -tags perf -run PerfScripting -v ./server/
func TestPerfScripting(t *testing.T) {
	redisBin := testpeer.Require(t, "redis-server")
	benchBin := testpeer.Require(t, "redis-benchmark")
	rounds, n := 3, 100000
	if s := os.Getenv("DPULAB_PERF_ROUNDS"); s != "" {
		rounds, _ = strconv.Atoi(s)
	}
	redisPort, ourPort := freePort(t), freePort(t)
	redisProc := startProc(t, exec.Command(redisBin, "--port", strconv.Itoa(redisPort), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"), redisPort)
	ours := exec.Command(os.Args[0], "-test.run", "^TestPerfServerProcess$")
	ours.Env = append(os.Environ(), fmt.Sprintf("%s=%d", perfServeEnv, ourPort))
	startProc(t, ours, ourPort)
	pids := map[string]int{"redis": redisProc.Process.Pid, "ours": ours.Process.Pid}
	for _, port := range []int{redisPort, ourPort} {
		// Each once, failing on an error reply (EVAL also loads the
		// script EVALSHA runs).
		for _, cmd := range scriptBenchmarks {
			loadCommands(t, port, 1, func(int) []string { return cmd })
		}
	}
	for _, depth := range []int{1, 16} {
		for _, cmd := range scriptBenchmarks {
			rps := map[string][]float64{}
			cpu := map[string][]float64{}
			for round := 0; round < rounds; round++ {
				for _, who := range []string{"redis", "ours"} {
					port := redisPort
					if who == "ours" {
						port = ourPort
					}
					before := cpuSeconds(t, pids[who])
					for _, v := range runTypesBenchmark(t, benchBin, port, depth, n, cmd...) {
						rps[who] = append(rps[who], v)
					}
					cpu[who] = append(cpu[who], (cpuSeconds(t, pids[who])-before)/float64(n)*1e6)
				}
			}
			rm, om := median(rps["redis"]), median(rps["ours"])
			rc, oc := median(cpu["redis"]), median(cpu["ours"])
			name := cmd[0] + " " + strconv.Quote(cmd[1][:min(len(cmd[1]), 12)])
			t.Logf("ratio P%d %-24s %.2f (ours %.0f/s vs redis-server %.0f/s); server CPU per call: ours %.2f µs, redis-server %.2f µs (%.2fx), medians of %d",
				depth, name, om/rm, om, rm, oc, rc, oc/rc, rounds)
		}
	}
}
