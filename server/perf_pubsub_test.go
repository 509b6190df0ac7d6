//go:build perf

package server

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/server/resp"
)

// subscribe opens n connections subscribed to channel that read (and
// drop) everything they are sent until the test ends.
func subscribe(t *testing.T, port, n int, channel string) {
	t.Helper()
	for i := 0; i < n; i++ {
		conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		if _, err := conn.Write(resp.AppendCommand(nil, "SUBSCRIBE", channel)); err != nil {
			t.Fatal(err)
		}
		if v, err := resp.NewReader(conn).ReadReply(); err != nil || v.IsError() {
			t.Fatalf("SUBSCRIBE: %v %v", err, v)
		}
		go io.Copy(io.Discard, conn)
	}
}

// TestPerfPubSub compares PUBLISH (to nobody, and to 4 subscribers that
// read) and BRPOP served at once from a filled list, between dpulab server
// and Debian's redis-server, side by side, at pipeline depths 1 and 16,
// and prints ratios (ours/redis-server, medians of requests per second).
// Run: go test -tags perf -run PerfPubSub -v ./server/
func TestPerfPubSub(t *testing.T) {
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
	for _, port := range []int{redisPort, ourPort} {
		subscribe(t, port, 4, "busy")
	}
	tests := []struct {
		name string
		args []string
		fill bool // BRPOP: the list holds an element for every request
	}{
		{"PUBLISH, no subscriber", []string{"PUBLISH", "quiet", "__rand_int__"}, false},
		{"PUBLISH, 4 subscribers", []string{"PUBLISH", "busy", "__rand_int__"}, false},
		{"BRPOP, list not empty", []string{"BRPOP", "blist", "0"}, true},
	}
	for _, depth := range []int{1, 16} {
		for _, tt := range tests {
			rps := map[string][]float64{}
			for round := 0; round < rounds; round++ {
				for _, who := range []string{"redis", "ours"} {
					port := redisPort
					if who == "ours" {
						port = ourPort
					}
					if tt.fill {
						loadCommands(t, port, n, func(int) []string { return []string{"LPUSH", "blist", "v"} })
					}
					for _, v := range runTypesBenchmark(t, benchBin, port, depth, n, tt.args...) {
						rps[who] = append(rps[who], v)
					}
				}
			}
			r, o := median(rps["redis"]), median(rps["ours"])
			t.Logf("ratio P%d %-24s %.2f (ours %.0f/s vs redis-server %.0f/s, medians of %d)", depth, tt.name, o/r, o, r, rounds)
		}
	}
}
