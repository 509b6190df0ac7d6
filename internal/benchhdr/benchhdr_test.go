package benchhdr

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
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
		out[i] = max(int64(v), MinValue)
	}
	return out
}

func histOf(vals ...[]int64) *hdrhistogram.Histogram {
	h := NewHistogram()
	for _, vs := range vals {
		for _, v := range vs {
			_ = h.RecordValue(min(max(v, MinValue), MaxValue))
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
			enc := Encode(h)
			if !strings.HasPrefix(enc, "HISTF") {
				t.Fatalf("encoding %.20q… is not HdrHistogram's V2 compressed base64 (HISTF…)", enc)
			}
			got, err := DecodeHistogram(enc)
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
	if h, err := DecodeHistogram(""); err != nil || h.TotalCount() != 0 {
		t.Errorf(`DecodeHistogram("") = %v, %v; want an empty histogram`, h, err)
	}
	if _, err := DecodeHistogram("HISTFAAAAnot-base64!"); err == nil {
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
	var lines []*benchwire.Sample
	for i, vs := range raw {
		h := histOf(vs)
		s := &benchwire.Sample{
			Run: 1, T: 3, OpsPerSec: float64(len(vs)), OpsPerSecByCmd: map[string]float64{"get": float64(len(vs))},
			LatencyMs: LatencyOf(h), LatencyHDR: Encode(h), Errors: int64(i), BytesSentPerSec: 100,
		}
		if i == 1 {
			s.ErrorsByKind = map[string]int64{"timeout": 1}
		}
		// Through the wire and back, as the engine gets them.
		var buf bytes.Buffer
		if err := benchwire.Encode(&buf, s); err != nil {
			t.Fatal(err)
		}
		ev, err := benchwire.ParseLine(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, ev.(*benchwire.Sample))
	}
	got, err := MergeSamples(lines)
	if err != nil {
		t.Fatal(err)
	}
	union := histOf(raw...)
	if want := LatencyOf(union); got.LatencyMs != want {
		t.Errorf("merged latency %+v\nwant (union of raw latencies) %+v", got.LatencyMs, want)
	}
	mh, err := SampleHistogram(got)
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
	var ts []benchwire.Totals
	for _, vs := range raw {
		h := histOf(vs)
		ts = append(ts, benchwire.Totals{Seconds: 10, Ops: int64(len(vs)), OpsPerSec: float64(len(vs)) / 10, LatencyHDR: Encode(h),
			LatencyMsPercentiles: PercentilesOf(h, []float64{50, 99.9})})
	}
	tot, err := MergeTotals(ts)
	if err != nil {
		t.Fatal(err)
	}
	if want := PercentilesOf(union, []float64{50, 99.9}); tot.Ops != 47_000 || tot.OpsPerSec != 4_700 || tot.LatencyMs != LatencyOf(union) ||
		tot.LatencyMsPercentiles["50"] != want["50"] || tot.LatencyMsPercentiles["99.9"] != want["99.9"] {
		t.Errorf("merged totals %+v\nwant ops 47000, 4700/s, latency %+v, percentiles %v", tot, LatencyOf(union), want)
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
	var ss []*benchwire.Sample
	for _, l := range old {
		ev, err := benchwire.ParseLine([]byte(l))
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		s := ev.(*benchwire.Sample)
		if s.T != 1 || s.LatencyHDR != "" || s.ClientCPUPct != nil || s.ClientHostBusyPct != nil {
			t.Errorf("old line read as %+v", s)
		}
		if _, err := SampleHistogram(s); !errors.Is(err, ErrNoHistogram) {
			t.Errorf("Histogram() of an old line: %v, want ErrNoHistogram", err)
		}
		ss = append(ss, s)
	}
	got, err := MergeSamples(ss)
	if !errors.Is(err, ErrNoHistogram) {
		t.Errorf("merge of old lines: %v, want ErrNoHistogram", err)
	}
	if got == nil || got.OpsPerSec != 1500 || got.LatencyMs != (benchwire.Latency{}) {
		t.Errorf("merge of old lines = %+v; want 1500 ops/s and no latency", got)
	}
	ev, err := benchwire.ParseLine([]byte(`{"type":"run","run":1,"duration_seconds":2,"ops":10,"ops_by_cmd":{},"ops_per_sec":5,"ops_per_sec_by_cmd":{},"latency_ms":{"avg":0,"p50":0,"p90":0,"p99":0,"p999":0,"max":0},"errors":0,"hits":0,"misses":0,"bytes_sent":0,"bytes_recv":0,"bytes_sent_per_sec":0,"bytes_recv_per_sec":0,"targets":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	if r := ev.(*benchwire.RunResult); r.ClientBound || r.ClientHostBusyPct != nil || r.LatencyHDR != "" {
		t.Errorf("old run line read as %+v", r)
	}
}

// BenchmarkEncodeHist: the cost of one interval's encoding (once per
// interval for the totals, and per target with --target-samples).
func BenchmarkEncodeHist(b *testing.B) {
	h := histOf(latencies(rand.New(rand.NewPCG(5, 6)), 20_000, 150, 0.01))
	b.ReportAllocs()
	for b.Loop() {
		if Encode(h) == "" {
			b.Fatal("empty")
		}
	}
}

// TestMergeProbes: one probe run by two client hosts at their shares is
// judged on the union of their latencies, not on their percentiles
// averaged: host a (fast) and host b (slow) each meet or miss the cap on
// their own, the merged probe's p50 is the union's.
func TestMergeProbes(t *testing.T) {
	spec, err := benchwire.ParseCapacity("p50<=2ms")
	if err != nil {
		t.Fatal(err)
	}
	probe := func(rate float64, us int64, n int64) *benchwire.CapacityProbe {
		h := NewHistogram()
		if err := h.RecordValues(us, n); err != nil {
			t.Fatal(err)
		}
		return &benchwire.CapacityProbe{Probe: 1, RateOpsPerSec: rate, OpsPerSec: float64(n) / 4, DurationSeconds: 4, Ops: n,
			LatencyMs: LatencyOf(h), LatencyHDR: Encode(h), Pass: us <= 2000}
	}
	union := func(ps ...*benchwire.CapacityProbe) float64 {
		all := NewHistogram()
		for _, p := range ps {
			h, err := DecodeHistogram(p.LatencyHDR)
			if err != nil {
				t.Fatal(err)
			}
			all.Merge(h)
		}
		return float64(all.ValueAtQuantile(50)) / 1000
	}
	for _, tc := range []struct {
		name       string
		a, b       *benchwire.CapacityProbe
		pass       bool
		unsentFrom bool
	}{
		// 3000 fast replies and 1000 slow: the union's median is fast
		// (the hosts' medians averaged, 4.75 ms, would miss the cap).
		{"mostly fast", probe(750, 500, 3000), probe(250, 9000, 1000), true, false},
		// 1000 fast and 3000 slow: the union's median is slow.
		{"mostly slow", probe(250, 500, 1000), probe(750, 9000, 3000), false, false},
		{"one host behind", probe(500, 500, 2000), func() *benchwire.CapacityProbe { p := probe(500, 500, 2000); p.Unsent = 7; return p }(), false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := MergeProbes(spec, 3, 1000, []*benchwire.CapacityProbe{tc.a, tc.b})
			if err != nil {
				t.Fatal(err)
			}
			if m.Probe != 3 || m.RateOpsPerSec != 1000 || m.Ops != tc.a.Ops+tc.b.Ops || m.OpsPerSec != tc.a.OpsPerSec+tc.b.OpsPerSec {
				t.Errorf("merged probe %+v: want probe 3 at 1000 ops/s asked with the hosts' replies summed", m)
			}
			if want := union(tc.a, tc.b); m.PercentileMs != want {
				t.Errorf("merged p50 %.3f ms, the union's %.3f ms", m.PercentileMs, want)
			}
			if m.Pass != tc.pass || (tc.unsentFrom && (m.Unsent != 7 || m.Reason == "")) {
				t.Errorf("merged verdict pass=%v (%s), unsent %d; want pass=%v", m.Pass, m.Reason, m.Unsent, tc.pass)
			}
			if m.LatencyHDR == "" {
				t.Error("the merged probe carries no histogram")
			}
		})
	}
	old := probe(500, 500, 2000)
	old.LatencyHDR = ""
	if _, err := MergeProbes(spec, 1, 1000, []*benchwire.CapacityProbe{probe(500, 500, 2000), old}); !errors.Is(err, ErrNoHistogram) {
		t.Errorf("a host's probe without a histogram: %v, want ErrNoHistogram", err)
	}
}
