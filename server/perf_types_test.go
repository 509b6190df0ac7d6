//go:build perf

package server

import (
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/internal/testpeer"
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
