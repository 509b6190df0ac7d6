//go:build unix

package load

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/steps/event"
	"github.com/dpulab/dpulab/steps/kinds/load/loadtest"
	"github.com/dpulab/dpulab/steps/results"
)

// TestClientMerge feeds three hosts' streams in an awkward order: a second
// is merged only once every host sent it, its rate is the sum and its
// percentiles those of the union of the latencies; a host's extra partial
// second still counts; the run carries each host's series.

func TestClientMerge(t *testing.T) {
	m := NewClientMerge([]string{"c1", "c2", "c3"})
	var points []results.Point
	var runs []results.RunResult
	m.OnPoint = func(run int, p results.Point, since time.Time, hosts []event.HostSecond, _ []event.TargetSecond) results.Point {
		points = append(points, p)
		// Each host's share of the second, for the dashboard: the shares
		// add up to the merged TPS.
		var sum float64
		for _, h := range hosts {
			sum += h.OpsPerSec
		}
		if len(hosts) == 0 || sum != p.OpsPerSec {
			t.Errorf("second %v: host shares %+v sum to %v, want %v", p.T, hosts, sum, p.OpsPerSec)
		}
		return p
	}
	m.OnRun = func(r results.RunResult, since time.Time) { runs = append(runs, r) }
	m.OnMergeErr = func(err error) { t.Errorf("merge error: %v", err) }
	// Host h's second k has latencies (h+1)*100*(k+1) .. and a tail.
	vals := func(h, k int) []int64 {
		base := int64((h + 1) * 100 * (k + 1))
		return []int64{base, base + 1, base + 2, base * 20}
	}
	union := map[int]*hdrhistogram.Histogram{}
	now := time.Now()
	send := func(h, k int, tt float64) {
		hh, enc := loadtest.Hist(t, vals(h, k)...)
		if union[k] == nil {
			union[k] = hdrhistogram.New(1, 60_000_000, 3)
		}
		union[k].Merge(hh)
		m.Sample(h, &benchwire.Sample{Run: 1, T: tt, OpsPerSec: float64(1000 * (h + 1)), LatencyHDR: enc, Errors: int64(h)}, now)
	}
	send(0, 0, 1)
	send(1, 0, 1.01)
	if len(points) != 0 {
		t.Fatalf("a second merged before every host sent it: %+v", points)
	}
	send(0, 1, 2)
	send(2, 0, 1.02)
	if len(points) != 1 {
		t.Fatalf("%d seconds merged after every host sent the first, want 1", len(points))
	}
	send(1, 1, 2.01)
	send(2, 1, 2.02)
	send(2, 2, 2.5) // a partial last second on one host only
	for h := range 3 {
		_, enc := loadtest.Hist(t, 5)
		busy := float64(50 + 20*h)
		m.RunDone(h, &benchwire.RunResult{Run: 1, Totals: benchwire.Totals{Ops: 10, OpsPerSec: float64(1000 * (h + 1)), LatencyHDR: enc}, ClientHostBusyPct: &busy, ClientBound: busy >= 90})
	}
	if len(points) != 3 || len(runs) != 1 {
		t.Fatalf("%d seconds, %d runs; want 3, 1", len(points), len(runs))
	}
	wantOps := []float64{6000, 6000, 3000}
	for k, p := range points {
		if p.OpsPerSec != wantOps[k] {
			t.Errorf("second %d: %g ops/s, want the sum %g", k, p.OpsPerSec, wantOps[k])
		}
		if want := loadtest.LatencyMs(union[k]); p.LatencyMs != want {
			t.Errorf("second %d: latency %+v, want the union's %+v", k, p.LatencyMs, want)
		}
	}
	r := runs[0]
	if r.OpsPerSec != 6000 || !r.ClientBound || r.ClientHostBusyPct == nil || *r.ClientHostBusyPct != 90 {
		t.Errorf("run: %g ops/s, client bound %v (%v); want 6000, the busiest host's 90%%", r.OpsPerSec, r.ClientBound, r.ClientHostBusyPct)
	}
	if len(r.Clients) != 3 || r.Clients[2].Host != "c3" || len(r.Clients[2].Series) != 3 || len(r.Clients[0].Series) != 2 || !r.Clients[2].ClientBound || r.Clients[0].ClientBound {
		t.Errorf("per-host series: %+v", r.Clients)
	}
	if len(r.Series) != 3 {
		t.Errorf("run series has %d seconds, want 3", len(r.Series))
	}
}

// TestClientMergeDropsUnfinishedRun: a run that one host never finished
// (its bench failed) is not published as if it were the whole
func TestClientMergeDropsUnfinishedRun(t *testing.T) {
	m := NewClientMerge([]string{"c1", "c2"})
	var runs []results.RunResult
	m.OnRun = func(r results.RunResult, since time.Time) { runs = append(runs, r) }
	_, enc := loadtest.Hist(t, 100)
	for h := range 2 {
		m.Sample(h, &benchwire.Sample{Run: 1, T: 1, OpsPerSec: 10, LatencyHDR: enc}, time.Now())
		m.RunDone(h, &benchwire.RunResult{Run: 1, Totals: benchwire.Totals{Ops: 10, OpsPerSec: 10, LatencyHDR: enc}})
	}
	m.Sample(0, &benchwire.Sample{Run: 2, T: 1, OpsPerSec: 10, LatencyHDR: enc}, time.Now())
	m.HostEnded(1)
	m.RunDone(0, &benchwire.RunResult{Run: 2, Totals: benchwire.Totals{Ops: 10, OpsPerSec: 10, LatencyHDR: enc}})
	m.Finish()
	if len(runs) != 1 || runs[0].Run != 1 {
		t.Fatalf("published runs %+v, want run 1 only", runs)
	}
	if err := m.DroppedErr(); err == nil || !strings.Contains(err.Error(), "[2]") {
		t.Errorf("dropped: %v", err)
	}
}

func TestParseEpoch(t *testing.T) {
	for in, want := range map[string]time.Time{
		"1733250000.123456789": time.Unix(1733250000, 123456789),
		"1733250000.5":         time.Unix(1733250000, 500000000),
		"1733250000":           time.Unix(1733250000, 0),
	} {
		got, err := parseEpoch(in)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseEpoch(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"1733250000.N", "", "x.1", "1.1234567890"} {
		if _, err := parseEpoch(in); err == nil {
			t.Errorf("parseEpoch(%q) accepted", in)
		}
	}
}

func TestClockVerdict(t *testing.T) {
	ok := []ClockReading{{Host: "a", Offset: 3 * time.Millisecond}, {Host: "b", Offset: -20 * time.Millisecond}}
	if spread, w, good := ClockVerdict(ok); !good || w != "" || spread != 23*time.Millisecond {
		t.Errorf("23 ms apart: %v %q %v", spread, w, good)
	}
	bad := append(ok, ClockReading{Host: "c", Offset: 90 * time.Millisecond})
	spread, w, good := ClockVerdict(bad)
	if !good || spread != 110*time.Millisecond || !strings.Contains(w, "c is +90.0 ms") || !strings.Contains(w, "b -20.0 ms") || !strings.Contains(w, "chrony") {
		t.Errorf("110 ms apart: %v %q %v", spread, w, good)
	}
	noisy := []ClockReading{{Host: "a", Offset: 100 * time.Millisecond, Uncertainty: 40 * time.Millisecond}, {Host: "b", Offset: -10 * time.Millisecond, Uncertainty: 40 * time.Millisecond}}
	if _, w, good := ClockVerdict(noisy); !good || w != "" {
		t.Errorf("110 ms apart read to ± 40 ms each (30 ms beyond): warned %q", w)
	}
	if _, _, good := ClockVerdict([]ClockReading{{Host: "a"}, {Host: "b", Err: errors.New("boom")}}); good {
		t.Error("one readable clock was called a verdict")
	}
}

// TestClientMergeOneHost: one client host is the case n = 1 of the merge,
// and merging one host's figures is the identity: each second is the
// bench's own sample (its latencies as it gave them, not read again from
// its histogram), with no per-host view, and the run is its summary, with
// no per-host series and no start skew.
func TestClientMergeOneHost(t *testing.T) {
	m := NewClientMerge([]string{"c1"})
	var points []results.Point
	var runs []results.RunResult
	m.OnPoint = func(run int, p results.Point, since time.Time, hosts []event.HostSecond, _ []event.TargetSecond) results.Point {
		if hosts != nil {
			t.Errorf("second %v: a per-host view %+v from one client host", p.T, hosts)
		}
		points = append(points, p)
		return p
	}
	m.OnRun = func(r results.RunResult, since time.Time) { runs = append(runs, r) }
	m.OnMergeErr = func(err error) { t.Errorf("merge error: %v", err) }
	_, enc := loadtest.Hist(t, 100, 200, 300)
	now := time.Now()
	var sent []results.Point
	for k := range 3 {
		// Latencies that the histogram does not hold: kept as given.
		s := &benchwire.Sample{Run: 1, T: float64(k + 1), OpsPerSec: float64(1000 + k), LatencyMs: benchwire.Latency{Avg: 1.5, P50: 1, P99: 7.25}, LatencyHDR: enc, Errors: int64(k)}
		sent = append(sent, SamplePoint(s))
		m.Sample(0, s, now)
		if len(points) != k+1 {
			t.Fatalf("after sample %d: %d seconds merged, want %d (one host: at once)", k+1, len(points), k+1)
		}
	}
	busy := 42.0
	m.RunDone(0, &benchwire.RunResult{Run: 1, Totals: benchwire.Totals{Ops: 3003, OpsPerSec: 1001, LatencyMs: benchwire.Latency{Avg: 1.5, P99: 7.25}, LatencyHDR: enc}, ClientHostBusyPct: &busy})
	m.Finish()
	if !reflect.DeepEqual(points, sent) {
		t.Errorf("seconds %+v, want the bench's own %+v", points, sent)
	}
	if len(runs) != 1 {
		t.Fatalf("%d runs, want 1", len(runs))
	}
	want := results.RunResult{Run: 1, OpsPerSec: 1001, LatencyMs: results.Latency{Avg: 1.5, P99: 7.25}, Series: sent, ClientHostBusyPct: &busy}
	if !reflect.DeepEqual(runs[0], want) {
		t.Errorf("run %+v, want the bench's summary %+v", runs[0], want)
	}
	if err := m.DroppedErr(); err != nil {
		t.Error(err)
	}
}
