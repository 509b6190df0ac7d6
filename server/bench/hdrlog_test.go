package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dpulab/dpulab/internal/benchhdr"
	"github.com/dpulab/dpulab/server/sample"
)

// latencies draws n latencies in µs: a log-normal body around median µs
// with a tail of tailShare of them 10..50 times slower.
func latencies(rng *rand.Rand, n int, median float64, tailShare float64) []int64 {
	out := make([]int64, n)
	for i := range out {
		v := median * math.Exp(0.4*rng.NormFloat64())
		if rng.Float64() < tailShare {
			v *= 10 + 40*rng.Float64()
		}
		out[i] = max(int64(v), benchhdr.MinValue)
	}
	return out
}

func histOf(vals ...[]int64) *hdrhistogram.Histogram {
	h := newHist()
	for _, vs := range vals {
		for _, v := range vs {
			record(h, v)
		}
	}
	return h
}

// TestHistogramEncodingRoundTrip: the encoding is HdrHistogram's own V2
// compressed one: the library's Decode and its interval-log reader read back
// exactly the histogram that was written. Logs the size per interval.
func TestHistogramEncodingRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 1_000, 20_000, 200_000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			h := histOf(latencies(rng, n, 150, 0.01))
			enc := benchhdr.Encode(h)
			if !strings.HasPrefix(enc, "HISTF") {
				t.Fatalf("encoding %.20q… is not HdrHistogram's V2 compressed base64 (HISTF…)", enc)
			}
			got, err := benchhdr.DecodeHistogram(enc)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equals(h) {
				t.Fatalf("decoded histogram differs: count %d max %d, want %d %d", got.TotalCount(), got.Max(), h.TotalCount(), h.Max())
			}
			// The same string as a line of an HdrHistogram interval log.
			log := "#[StartTime: 0.000 (seconds since epoch)]\n\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n" +
				fmt.Sprintf("0.000,1.000,%.3f,%s\n", float64(h.Max())/1000, enc)
			lh, err := hdrhistogram.NewHistogramLogReader(strings.NewReader(log)).NextIntervalHistogram()
			if err != nil || lh == nil {
				t.Fatalf("interval log reader: %v", err)
			}
			if lh.TotalCount() != h.TotalCount() || lh.ValueAtQuantile(99) != h.ValueAtQuantile(99) || lh.Max() != h.Max() {
				t.Fatalf("interval log reader: count %d p99 %d max %d, want %d %d %d", lh.TotalCount(), lh.ValueAtQuantile(99), lh.Max(), h.TotalCount(), h.ValueAtQuantile(99), h.Max())
			}
			t.Logf("%d latencies (log-normal around 150 µs, 1%% tail ×10..50): latency_hdr_us is %d bytes", n, len(enc))
		})
	}
	if h, err := benchhdr.DecodeHistogram(""); err != nil || h.TotalCount() != 0 {
		t.Errorf(`benchhdr.DecodeHistogram("") = %v, %v; want an empty histogram`, h, err)
	}
	if _, err := benchhdr.DecodeHistogram("HISTFAAAAnot-base64!"); err == nil {
		t.Error("a broken encoding decoded without error")
	}
}

// TestMergeEqualsUnion: three client hosts' samples of one second, each
// with a different latency profile, merged: the latency summary equals the
// one of a histogram built from all the raw latencies, and is not what
// averaging the hosts' percentiles would give.
func TestMergeEqualsUnion(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	raw := [][]int64{
		latencies(rng, 30_000, 100, 0.001),
		latencies(rng, 12_000, 400, 0.02),
		latencies(rng, 5_000, 900, 0.05),
	}
	var lines []*Sample
	for i, vs := range raw {
		h := histOf(vs)
		s := &Sample{
			Run: 1, T: 3, OpsPerSec: float64(len(vs)), OpsPerSecByCmd: map[string]float64{"get": float64(len(vs))},
			LatencyMs: latencyOf(h), LatencyHDR: benchhdr.Encode(h), Errors: int64(i), BytesSentPerSec: 100,
		}
		if i == 1 {
			s.ErrorsByKind = map[string]int64{"timeout": 1}
		}
		// Through the wire and back, as the engine gets them.
		var buf bytes.Buffer
		if err := Encode(&buf, s); err != nil {
			t.Fatal(err)
		}
		ev, err := ParseLine(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, ev.(*Sample))
	}
	got, err := benchhdr.MergeSamples(lines)
	if err != nil {
		t.Fatal(err)
	}
	union := histOf(raw...)
	if want := latencyOf(union); got.LatencyMs != want {
		t.Errorf("merged latency %+v\nwant (union of raw latencies) %+v", got.LatencyMs, want)
	}
	mh, err := benchhdr.SampleHistogram(got)
	if err != nil || !mh.Equals(union) {
		t.Errorf("merged histogram differs from the union's (err %v)", err)
	}
	if got.OpsPerSec != 47_000 || got.OpsPerSecByCmd["get"] != 47_000 || got.Errors != 3 || got.ErrorsByKind["timeout"] != 1 || got.BytesSentPerSec != 300 || got.T != 3 {
		t.Errorf("merged counts: %+v", got)
	}
	avgP99 := (lines[0].LatencyMs.P99 + lines[1].LatencyMs.P99 + lines[2].LatencyMs.P99) / 3
	if math.Abs(avgP99-got.LatencyMs.P99) < 0.05*got.LatencyMs.P99 {
		t.Errorf("fixture too tame: the averaged p99 %.3f is close to the union's %.3f", avgP99, got.LatencyMs.P99)
	}
	t.Logf("p99: union %.3f ms, merged %.3f ms, averaged per-host p99s %.3f ms (wrong)", float64(union.ValueAtQuantile(99))/1000, got.LatencyMs.P99, avgP99)

	// The same for run totals, with the --print-percentiles keys.
	var ts []Totals
	for _, vs := range raw {
		h := histOf(vs)
		ts = append(ts, Totals{Seconds: 10, Ops: int64(len(vs)), OpsPerSec: float64(len(vs)) / 10, LatencyHDR: benchhdr.Encode(h),
			LatencyMsPercentiles: percentilesOf(h, []float64{50, 99.9})})
	}
	tot, err := benchhdr.MergeTotals(ts)
	if err != nil {
		t.Fatal(err)
	}
	if want := percentilesOf(union, []float64{50, 99.9}); tot.Ops != 47_000 || tot.OpsPerSec != 4_700 || tot.LatencyMs != latencyOf(union) ||
		tot.LatencyMsPercentiles["50"] != want["50"] || tot.LatencyMsPercentiles["99.9"] != want["99.9"] {
		t.Errorf("merged totals %+v\nwant ops 47000, 4700/s, latency %+v, percentiles %v", tot, latencyOf(union), want)
	}
}

// TestOldLinesStillParse: sample and run lines written before the histogram
// and the client CPU fields parse; merging them keeps the counts and says
// why there is no latency instead of averaging.
func TestOldLinesStillParse(t *testing.T) {
	old := []string{
		`{"type":"sample","run":1,"t_seconds":1,"ops_per_sec":1000,"ops_per_sec_by_cmd":{"get":1000},"latency_ms":{"avg":0.1,"p50":0.1,"p90":0.2,"p99":0.3,"p999":0.4,"max":0.5},"errors":0,"bytes_sent_per_sec":1,"bytes_recv_per_sec":2}`,
		`{"type":"sample","run":1,"t":1,"ops_per_sec":500,"ops_per_sec_by_cmd":{"get":500},"latency_ms":{"avg":0.1,"p50":0.1,"p90":0.2,"p99":0.3,"p999":0.4,"max":0.5},"errors":0,"bytes_sent_per_sec":1,"bytes_recv_per_sec":2}`,
	}
	var ss []*Sample
	for _, l := range old {
		ev, err := ParseLine([]byte(l))
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		s := ev.(*Sample)
		if s.T != 1 || s.LatencyHDR != "" || s.ClientCPUPct != nil || s.ClientHostBusyPct != nil {
			t.Errorf("old line read as %+v", s)
		}
		if _, err := benchhdr.SampleHistogram(s); !errors.Is(err, ErrNoHistogram) {
			t.Errorf("Histogram() of an old line: %v, want ErrNoHistogram", err)
		}
		ss = append(ss, s)
	}
	got, err := benchhdr.MergeSamples(ss)
	if !errors.Is(err, ErrNoHistogram) {
		t.Errorf("merge of old lines: %v, want ErrNoHistogram", err)
	}
	if got == nil || got.OpsPerSec != 1500 || got.LatencyMs != (Latency{}) {
		t.Errorf("merge of old lines = %+v; want 1500 ops/s and no latency", got)
	}
	ev, err := ParseLine([]byte(`{"type":"run","run":1,"duration_seconds":2,"ops":10,"ops_by_cmd":{},"ops_per_sec":5,"ops_per_sec_by_cmd":{},"latency_ms":{"avg":0,"p50":0,"p90":0,"p99":0,"p999":0,"max":0},"errors":0,"hits":0,"misses":0,"bytes_sent":0,"bytes_recv":0,"bytes_sent_per_sec":0,"bytes_recv_per_sec":0,"targets":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	if r := ev.(*RunResult); r.ClientBound || r.ClientHostBusyPct != nil || r.LatencyHDR != "" {
		t.Errorf("old run line read as %+v", r)
	}
}

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

// BenchmarkEncodeHist: the cost of one interval's encoding (once per
// interval for the totals, and per target with --target-samples).
func BenchmarkEncodeHist(b *testing.B) {
	h := histOf(latencies(rand.New(rand.NewPCG(5, 6)), 20_000, 150, 0.01))
	b.ReportAllocs()
	for b.Loop() {
		if benchhdr.Encode(h) == "" {
			b.Fatal("empty")
		}
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
