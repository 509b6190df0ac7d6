//go:build perf

package server

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/dpulab/dpulab/internal/testpeer"
)

// geoHLLBenchmarks are the GEO and HyperLogLog commands timed against
// redis-server: searches over a set of 2000 points spread over 10° by
// 10° (a 100 km circle holds about 70 of them), and PFADD/PFCOUNT on a
// dense HLL (redis-benchmark's __rand_int__ makes PFADD's elements new).
var geoHLLBenchmarks = []struct {
	name string
	n    int
	cmd  []string
}{
	{"GEOSEARCH BYRADIUS 100km", 20000, []string{"GEOSEARCH", "geo", "FROMLONLAT", "12.3", "45.1", "BYRADIUS", "100", "km", "ASC", "COUNT", "10", "WITHDIST"}},
	{"GEOSEARCH BYBOX 200x100km", 20000, []string{"GEOSEARCH", "geo", "FROMMEMBER", "p7", "BYBOX", "200", "100", "km", "WITHCOORD"}},
	{"GEORADIUS_RO 20km", 50000, []string{"GEORADIUS_RO", "geo", "12.3", "45.1", "20", "km"}},
	{"GEOADD", 100000, []string{"GEOADD", "geo2", "12.5", "45.5", "__rand_int__"}},
	{"GEODIST", 100000, []string{"GEODIST", "geo", "p1", "p2", "km"}},
	{"GEOPOS", 100000, []string{"GEOPOS", "geo", "p1", "p2"}},
	{"PFADD", 100000, []string{"PFADD", "hll", "__rand_int__"}},
	{"PFCOUNT", 100000, []string{"PFCOUNT", "hll"}},
	{"PFCOUNT 2 keys", 20000, []string{"PFCOUNT", "hll", "hll2"}},
	{"PFMERGE", 20000, []string{"PFMERGE", "hll3", "hll", "hll2"}},
}

// TestPerfGeoHLL compares those commands between dpulab server and
// Debian's redis-server, side by side and alternating, at pipeline depths 1
// and 16, and prints one ratio per command (ours/redis-server, requests
// per second, medians). Run: go test -tags perf -run PerfGeoHLL -v ./server/
func TestPerfGeoHLL(t *testing.T) {
	redisBin := testpeer.Require(t, "redis-server")
	benchBin := testpeer.Require(t, "redis-benchmark")
	rounds := 3
	if s := os.Getenv("DPULAB_PERF_ROUNDS"); s != "" {
		rounds, _ = strconv.Atoi(s)
	}
	redisPort, ourPort := freePort(t), freePort(t)
	startProc(t, exec.Command(redisBin, "--port", strconv.Itoa(redisPort), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"), redisPort)
	ours := exec.Command(os.Args[0], "-test.run", "^TestPerfServerProcess$")
	ours.Env = append(os.Environ(), fmt.Sprintf("%s=%d", perfServeEnv, ourPort))
	startProc(t, ours, ourPort)
	r := rand.New(rand.NewPCG(29, 29))
	geoadd := []string{"GEOADD", "geo"}
	for i := 0; i < 2000; i++ {
		geoadd = append(geoadd, strconv.FormatFloat(7+r.Float64()*10, 'f', 6, 64),
			strconv.FormatFloat(40+r.Float64()*10, 'f', 6, 64), fmt.Sprint("p", i))
	}
	pfadd := func(key string, n int) []string {
		cmd := []string{"PFADD", key}
		for i := 0; i < n; i++ {
			cmd = append(cmd, fmt.Sprint(key, i))
		}
		return cmd
	}
	setup := [][]string{geoadd, pfadd("hll", 5000), pfadd("hll2", 5000)}
	for _, port := range []int{redisPort, ourPort} {
		for _, cmd := range setup {
			loadCommands(t, port, 1, func(int) []string { return cmd })
		}
		for _, b := range geoHLLBenchmarks {
			loadCommands(t, port, 1, func(int) []string { return b.cmd })
		}
	}
	for _, depth := range []int{1, 16} {
		for _, b := range geoHLLBenchmarks {
			var rs, os []float64
			for round := 0; round < rounds; round++ {
				for _, who := range []string{"redis", "ours"} {
					port := redisPort
					if who == "ours" {
						port = ourPort
					}
					for _, v := range runTypesBenchmark(t, benchBin, port, depth, b.n, b.cmd...) {
						if who == "ours" {
							os = append(os, v)
						} else {
							rs = append(rs, v)
						}
					}
				}
			}
			rm, om := median(rs), median(os)
			t.Logf("ratio P%d %-34s %.2f (ours %.0f/s vs redis-server %.0f/s, medians of %d)", depth, b.name, om/rm, om, rm, rounds)
		}
	}
}
