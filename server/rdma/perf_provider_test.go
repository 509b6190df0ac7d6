//go:build perf && rdma && rdmasim && cgo

package rdma

import (
	"context"
	"io"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestPerfCgoCPUPerRequest prints the CPU cost per request of our RDMA path
// through the cgo provider and its C layer (the simulated implementation)
// against our TCP path, side by side: CPU nanoseconds per request
// (getrusage of this process, which holds both ends) and heap allocations
// per request, for 16-deep pipelines of 32-byte requests and 16-byte
// replies. Rounds alternate so background load hits both alike; medians.
// No assertion on time: a simulation cannot tell RDMA's speed, and the
// machine is shared.
//
//	go test -tags perf,rdma,rdmasim -run Perf -v ./server/rdma/
//
// What it means: the protocol (Conn) plus the cgo provider (a cgo call per
// verb, the completion goroutine) plus the simulation's own work (every
// verb a frame over a Unix socket) against the kernel's TCP path. On an
// adapter the last part is done in hardware, so the RDMA figure bounds
// the software cost from above; it predicts nothing about RDMA's.
func TestPerfCgoCPUPerRequest(t *testing.T) {
	t.Setenv(SimDirEnv, t.TempDir())
	rounds := 5
	if v, err := strconv.Atoi(os.Getenv("PERF_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	const (
		depth    = 16
		reqSize  = 32
		repSize  = 16
		requests = 96_000
	)
	rc, rs := perfRDMAPair(t)
	tc, ts := perfTCPPair(t)
	measure := func(c, s net.Conn) (cpu, allocs float64) {
		done := make(chan error, 1)
		go func() {
			req := make([]byte, depth*reqSize)
			rep := make([]byte, depth*repSize)
			for range requests / depth {
				if _, err := io.ReadFull(s, req); err != nil {
					done <- err
					return
				}
				if _, err := s.Write(rep); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
		req := make([]byte, depth*reqSize)
		rep := make([]byte, depth*repSize)
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		c0 := rusage(t)
		for range requests / depth {
			if _, err := c.Write(req); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(c, rep); err != nil {
				t.Fatal(err)
			}
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		c1 := rusage(t)
		runtime.ReadMemStats(&m1)
		return float64(c1-c0) / requests, float64(m1.Mallocs-m0.Mallocs) / requests
	}
	var tcpCPU, rdmaCPU, tcpAllocs, rdmaAllocs []float64
	for r := range rounds {
		var a, b, aa, ba float64
		if r%2 == 0 {
			a, aa = measure(tc, ts)
			b, ba = measure(rc, rs)
		} else {
			b, ba = measure(rc, rs)
			a, aa = measure(tc, ts)
		}
		tcpCPU, rdmaCPU = append(tcpCPU, a), append(rdmaCPU, b)
		tcpAllocs, rdmaAllocs = append(tcpAllocs, aa), append(rdmaAllocs, ba)
		t.Logf("round %d: CPU ns per request: tcp %.0f, rdma %.0f; allocations per request: tcp %.3f, rdma %.3f", r+1, a, b, aa, ba)
	}
	med := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	t.Logf("SIMULATED RDMA (%s): median per request, both ends in this process, %d-deep pipelines of %d-byte requests, %d-byte replies", ProviderName, depth, reqSize, repSize)
	t.Logf("  %-28s %12s %12s", "", "tcp", "rdma (cgo)")
	t.Logf("  %-28s %12.0f %12.0f  (ratio %.2f)", "CPU ns per request", med(tcpCPU), med(rdmaCPU), med(rdmaCPU)/med(tcpCPU))
	t.Logf("  %-28s %12.3f %12.3f", "allocations per request", med(tcpAllocs), med(rdmaAllocs))
}

func rusage(t *testing.T) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func perfRDMAPair(t *testing.T) (client, server net.Conn) {
	ln, err := Listen("127.0.0.1:0", ProviderOptions{Type: RC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	acc := make(chan net.Conn, 1)
	go func() {
		if s, err := ln.Accept(); err == nil {
			acc <- s
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, ln.Addr().String(), ProviderOptions{Type: RC})
	if err != nil {
		t.Fatal(err)
	}
	s := <-acc
	t.Cleanup(func() { c.Close(); s.Close() })
	return c, s
}

func perfTCPPair(t *testing.T) (client, server net.Conn) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return c, s
}
