//go:build perf && rdmasim

package bench

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dpulab/dpulab/server/transport"
)

// TestPerfRDMACPUPerRequest prints the CPU cost per request of our RDMA
// path against our TCP path, both through `dpulab server` of an rdmasim
// build (the simulated provider): CPU nanoseconds per request of the load
// generator (this process) and of the server (its /proc stat), not
// wall-clock throughput, which a simulation cannot tell. The two alternate
// round by round so background load hits both alike; medians compared.
//
//	go test -tags perf,rdmasim -run PerfRDMA -v ./server/bench/
//
// What the ratio means: the protocol's own cost (control messages,
// re-registration, the Conn's goroutine hand-offs) plus the simulated
// provider's (every verb a frame over a Unix socket, its own goroutines),
// against TCP's kernel path. A real adapter does the provider's part in
// hardware, so this bounds the protocol's cost from above; it does not
// predict RDMA's figures.
func TestPerfRDMACPUPerRequest(t *testing.T) {
	bin := simDpulab(t)
	tcp, rdma, pid := simServer(t, bin, "reliable-connected")
	rounds := 5
	if v, err := strconv.Atoi(os.Getenv("PERF_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	t.Logf("%d rounds; load average at start: %s", rounds, loadavg())
	const requests = 200_000
	type cost struct{ client, server float64 }
	measure := func(ep transport.Endpoint) cost {
		cfg := DefaultConfig()
		cfg.Endpoints, cfg.Clients, cfg.Pipeline, cfg.Requests, cfg.KeyMaximum = []transport.Endpoint{ep}, 8, 16, requests, 9999
		c0, s0 := selfCPU(t), procCPU(t, pid)
		sum, err := Run(context.Background(), cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		c1, s1 := selfCPU(t), procCPU(t, pid)
		if sum.Ops != requests || sum.Errors != 0 {
			t.Fatalf("%s: %d replies, %d errors", ep, sum.Ops, sum.Errors)
		}
		return cost{float64(c1-c0) / requests, float64(s1-s0) / requests}
	}
	var tc, tr, sc, sr []float64
	for r := range rounds {
		var a, b cost
		if r%2 == 0 {
			a, b = measure(tcp), measure(rdma)
		} else {
			b, a = measure(rdma), measure(tcp)
		}
		tc, sc = append(tc, a.client), append(sc, a.server)
		tr, sr = append(tr, b.client), append(sr, b.server)
		t.Logf("round %d: CPU ns per request: client tcp %.0f rdma %.0f | server tcp %.0f rdma %.0f", r+1, a.client, b.client, a.server, b.server)
	}
	mtc, mtr, msc, msr := medianOf(tc), medianOf(tr), medianOf(sc), medianOf(sr)
	t.Logf("SIMULATED RDMA (rdmasim): median CPU ns per request, 8 clients × pipeline 16, 32-byte values, SET:GET 1:10")
	t.Logf("  load generator: tcp %.0f, rdma %.0f (ratio %.2f)", mtc, mtr, mtr/mtc)
	t.Logf("  server:         tcp %.0f, rdma %.0f (ratio %.2f)", msc, msr, msr/msc)
	t.Logf("load average at end: %s", loadavg())
}

// selfCPU is this process's user+system CPU time in ns.
func selfCPU(t *testing.T) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// procCPU is process pid's user+system CPU time in ns (clock ticks of
// 10 ms: runs are long enough for that to be fine).
func procCPU(t *testing.T, pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command name (which may hold spaces) in parens.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	const tick = int64(10 * time.Millisecond) // USER_HZ 100
	return (ut + st) * tick
}
