//go:build perf

package server

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/dpulab/dpulab/internal/testpeer"
)

// newCommandBenchmarks are issue 19's commands that redis-benchmark can
// drive as custom command lines. Integer arguments are fixed: redis-benchmark
// replaces __rand_int__ with 12 zero-padded digits, which Redis's
// string2ll (and ours) refuse, so "SETBIT key __rand_int__ 1" would time
// error replies.
var newCommandBenchmarks = [][]string{
	{"SETBIT", "bits", "800000", "1"},
	{"GETBIT", "bits", "800000"},
	{"BITCOUNT", "bits", "0", "1000"},
	{"BITFIELD", "bf", "INCRBY", "u8", "#1000", "1"},
	{"LMOVE", "rot", "rot", "LEFT", "RIGHT"},
	{"ZMSCORE", "zs", "m1", "m2", "nosuch"},
	{"SINTERCARD", "2", "sa", "sb"},
	{"COPY", "src", "dst", "REPLACE"},
}

// TestPerfCommands compares those commands between dpulab server and
// Debian's redis-server, side by side and alternating, at pipeline depths
// 1 and 16, and prints one ratio per command (ours/redis-server,
// requests per second, medians). Run: go test -tags perf -run PerfCommands -v ./server/
func TestPerfCommands(t *testing.T) {
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
	setup := [][]string{
		{"RPUSH", "rot", "a", "b", "c", "d"},
		{"ZADD", "zs", "1", "m1", "2", "m2"},
		{"SADD", "sa", "1", "2", "3", "x"}, {"SADD", "sb", "2", "3", "y"},
		{"SET", "src", "a value to copy"},
	}
	for _, port := range []int{redisPort, ourPort} {
		for _, cmd := range setup {
			loadCommands(t, port, 1, func(int) []string { return cmd })
		}
		// Each command once, failing on an error reply: a benchmark of
		// errors would measure nothing.
		for _, cmd := range newCommandBenchmarks {
			loadCommands(t, port, 1, func(int) []string { return cmd })
		}
	}
	for _, depth := range []int{1, 16} {
		for _, cmd := range newCommandBenchmarks {
			var r, o []float64
			for round := 0; round < rounds; round++ {
				for _, who := range []string{"redis", "ours"} {
					port := redisPort
					if who == "ours" {
						port = ourPort
					}
					for _, v := range runTypesBenchmark(t, benchBin, port, depth, n, cmd...) {
						if who == "ours" {
							o = append(o, v)
						} else {
							r = append(r, v)
						}
					}
				}
			}
			rm, om := median(r), median(o)
			t.Logf("ratio P%d %-34s %.2f (ours %.0f/s vs redis-server %.0f/s, medians of %d)", depth, cmd[0], om/rm, om, rm, rounds)
		}
	}
}
