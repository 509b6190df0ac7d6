package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/benchhdr"
	"github.com/dpulab/dpulab/server/sample"
)

// TestRealLinesCarryHistograms: two benches run at once against the bundled
// server (two client hosts, on one machine), their lines through JSON: every
// sample's histogram holds that interval's replies, the run's holds the
// run's, and merging each second's pair sums TPS and counts.
func TestRealLinesCarryHistograms(t *testing.T) {
	addr := startOurs(t)
	var wg sync.WaitGroup
	got := make([]*collected, 2)
	errs := make([]error, 2)
	for i := range got {
		cfg := testConfig(addr)
		cfg.Duration, cfg.Clients, cfg.Rate, cfg.Seed = 2*time.Second, 2, 1000, int64(i+1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = runCollect(t, context.Background(), cfg)
		}()
	}
	wg.Wait()
	for i, c := range got {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		var prevT float64
		var sum int64
		for _, s := range c.samples {
			s = viaJSON(t, s)
			h, err := benchhdr.SampleHistogram(s)
			if err != nil {
				t.Fatal(err)
			}
			n := int64(math.Round(s.OpsPerSec * (s.T - prevT)))
			if h.TotalCount() != n {
				t.Errorf("bench %d, t=%g: histogram holds %d latencies, the sample counted %d replies", i, s.T, h.TotalCount(), n)
			}
			if s.LatencyMs != latencyOf(h) {
				t.Errorf("bench %d, t=%g: latency_ms %+v is not the histogram's %+v", i, s.T, s.LatencyMs, latencyOf(h))
			}
			if s.ClientCPUPct == nil || *s.ClientCPUPct <= 0 {
				t.Errorf("bench %d, t=%g: client_cpu_pct %v, want the process's CPU", i, s.T, s.ClientCPUPct)
			}
			if b := s.ClientHostBusyPct; b == nil || *b < 0 || *b > 100 {
				t.Errorf("bench %d, t=%g: client_host_busy_pct %v, want 0..100", i, s.T, b)
			}
			sum += h.TotalCount()
			prevT = s.T
		}
		r := c.runs[0]
		rh, err := benchhdr.TotalsHistogram(&r.Totals)
		if err != nil || rh.TotalCount() != r.Ops || sum != r.Ops {
			t.Errorf("bench %d: run histogram %v (%v), samples' %d, want %d replies", i, rh.TotalCount(), err, sum, r.Ops)
		}
		if r.ClientHostBusyPct == nil || r.ClientBound != (*r.ClientHostBusyPct >= ClientBoundPct) {
			t.Errorf("bench %d: client_host_busy_pct %v but client_bound %v", i, r.ClientHostBusyPct, r.ClientBound)
		}
	}
	// The first whole second of both.
	a, b := got[0].samples[0], got[1].samples[0]
	m, err := benchhdr.MergeSamples([]*Sample{viaJSON(t, a), viaJSON(t, b)})
	if err != nil {
		t.Fatal(err)
	}
	ha, _ := benchhdr.SampleHistogram(a)
	hb, _ := benchhdr.SampleHistogram(b)
	union := newHist()
	union.Merge(ha)
	union.Merge(hb)
	if m.OpsPerSec != a.OpsPerSec+b.OpsPerSec || m.LatencyMs != latencyOf(union) {
		t.Errorf("merged second: %.0f ops/s %+v; want %.0f + %.0f", m.OpsPerSec, m.LatencyMs, a.OpsPerSec, b.OpsPerSec)
	}
	t.Logf("a real second at %.0f ops/s: latency_hdr_us is %d bytes", a.OpsPerSec, len(a.LatencyHDR))
}

func viaJSON(t *testing.T, s *Sample) *Sample {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := ParseLine(b)
	if err != nil {
		t.Fatal(err)
	}
	return ev.(*Sample)
}

// fakeHost stands in a host whose CPUs are busy busyPct of the time, for
// the length of the test.
func fakeHost(t *testing.T, busyPct uint64) {
	var mu sync.Mutex
	var n uint64
	old := hostCPUTimes
	hostCPUTimes = func() (sample.CPUTimes, error) {
		mu.Lock()
		defer mu.Unlock()
		n++
		return sample.CPUTimes{User: n * busyPct, Idle: n * (100 - busyPct)}, nil
	}
	t.Cleanup(func() { hostCPUTimes = old })
}

// TestClientBound: a run on a client host 95% busy is marked client_bound
// with the figure, in the run, the summary and the table; one at 50% is
// not.
func TestClientBound(t *testing.T) {
	addr := startOurs(t)
	for _, tc := range []struct {
		busy uint64
		want bool
	}{{95, true}, {50, false}} {
		t.Run(fmt.Sprint(tc.busy), func(t *testing.T) {
			fakeHost(t, tc.busy)
			cfg := testConfig(addr)
			cfg.Requests, cfg.Clients = 2000, 2
			var out bytes.Buffer
			hp := &HumanPrinter{Out: &out}
			var c collected
			_, err := Run(context.Background(), cfg, func(ev Event) {
				hp.Event(ev)
				switch e := ev.(type) {
				case *RunResult:
					c.runs = append(c.runs, e)
				case *Summary:
					c.summary = e
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			r := c.runs[0]
			if r.ClientBound != tc.want || r.ClientHostBusyPct == nil || *r.ClientHostBusyPct != float64(tc.busy) {
				t.Errorf("client_bound %v at %v%% busy, want %v at %d%%", r.ClientBound, r.ClientHostBusyPct, tc.want, tc.busy)
			}
			if c.summary.ClientBound != tc.want || *c.summary.ClientHostBusyPctMax != float64(tc.busy) {
				t.Errorf("summary: client_bound %v, max %v", c.summary.ClientBound, *c.summary.ClientHostBusyPctMax)
			}
			if strings.Contains(out.String(), "CLIENT-BOUND") != tc.want {
				t.Errorf("table says CLIENT-BOUND: %v, want %v:\n%s", !tc.want, tc.want, out.String())
			}
		})
	}
}

// TestClientBoundOnABusyHost: the real /proc/stat, with every CPU of this
// host kept busy by spinning shell processes while the bench runs: the run
// is marked client_bound. Processes, not goroutines: spinning goroutines
// share this process's scheduler with the bench and its server, and left a
// CPU idle 13% of the time on a 2-core machine (host 87% busy) where two
// spinning processes keep it at 100%. (Where a CPU quota keeps the spinners
// from filling the host's CPUs, the host is not saturated and the test
// says so.)
func TestClientBoundOnABusyHost(t *testing.T) {
	if _, err := hostCPUTimes(); err != nil {
		t.Skipf("no host CPU counters here: %v", err)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skipf("no sh to spin with: %v", err)
	}
	addr := startOurs(t)
	var spinners []*exec.Cmd
	defer func() {
		for _, c := range spinners {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}()
	for i := 0; i < runtime.NumCPU(); i++ {
		c := exec.Command(sh, "-c", "while :; do :; done")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		spinners = append(spinners, c)
	}
	time.Sleep(100 * time.Millisecond) // the spinners are running
	cfg := testConfig(addr)
	cfg.Rate, cfg.Duration, cfg.Clients = 500, time.Second, 2
	got, err := runCollect(t, context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := got.runs[0]
	if r.ClientHostBusyPct == nil || r.ClientCPUPct == nil {
		t.Fatalf("no client CPU figures: %+v", r)
	}
	t.Logf("spinning %d shell processes: host %.1f%% busy, the bench's process %.0f%% of a core", runtime.NumCPU(), *r.ClientHostBusyPct, *r.ClientCPUPct)
	if *r.ClientHostBusyPct < ClientBoundPct {
		if q, err := os.ReadFile("/sys/fs/cgroup/cpu.max"); err == nil && !strings.HasPrefix(string(q), "max") {
			t.Skipf("a CPU quota (cpu.max %q) keeps the spinners from filling the host: %.1f%% busy", strings.TrimSpace(string(q)), *r.ClientHostBusyPct)
		}
		t.Errorf("host %.1f%% busy with every CPU spinning, want ≥ %.0f%%", *r.ClientHostBusyPct, ClientBoundPct)
	}
	if !r.ClientBound || !got.summary.ClientBound {
		t.Errorf("run client_bound %v, summary %v at %.1f%% busy", r.ClientBound, got.summary.ClientBound, *r.ClientHostBusyPct)
	}
}
