//go:build unix

package load

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/steps/event"
	"github.com/dpulab/dpulab/steps/kinds/load/loadtest"
	"github.com/dpulab/dpulab/steps/results"
)

// TestOneBenchStream feeds the JSON lines of one `dpulab bench --json`
// (what the agent prints: a header, its start, a sample per second and a
// result per repetition, its summary) and one sampler's line through the
// path a bench's figures take in this package: each line parsed, the
// merge of one client host (the identity), the samplers' board for the
// servers' CPU. Each repetition is handed on once, when its result line
// arrives, with its seconds and the servers' CPU: what the run writes to
// the results after every repetition. (RunBench runs the bench and
// samplers' processes themselves: TestClientRunStream and the Measure
// tests.)
func TestOneBenchStream(t *testing.T) {
	var agent bytes.Buffer
	enc := func(ev benchwire.Event) {
		if err := benchwire.Encode(&agent, ev); err != nil {
			t.Fatal(err)
		}
	}
	_, hdr := loadtest.Hist(t, 200, 300, 400)
	enc(benchwire.StreamHeader())
	enc(&benchwire.Start{Config: benchwire.DefaultConfig(), Client: "c1", Targets: []string{"192.0.2.20:7000"}, Connections: 4})
	for run := 1; run <= 2; run++ {
		for s := 1; s <= 3; s++ {
			enc(&benchwire.Sample{Run: run, T: float64(s), OpsPerSec: float64(1000*run + 10*s), LatencyHDR: hdr,
				LatencyMs: benchwire.Latency{Avg: 0.3, P50: 0.3, P99: 0.4}})
		}
		enc(&benchwire.RunResult{Run: run, Totals: benchwire.Totals{Seconds: 3, Ops: int64(3000 * run), OpsPerSec: float64(1000 * run),
			LatencyMs: benchwire.Latency{Avg: 0.3, P50: 0.3, P99: 0.4}, LatencyHDR: hdr}})
	}
	enc(&benchwire.Summary{Runs: 2, OpsPerSec: 1500})

	board := NewSampleBoard()
	hs, ok := ParseHostSample([]byte(`{"t":"2026-12-03T19:00:00Z","host":"s1","cpu":{"idle":60,"iowait":0},"net":{},"power_watts":null}`))
	if !ok {
		t.Fatal("the sampler's line did not parse")
	}
	board.Put("s1", hs)
	board.SetCPUs("s1", 4)

	m := NewClientMerge([]string{"c1"})
	var seconds []results.Point
	m.OnPoint = func(_ int, p results.Point, since time.Time, hosts []event.HostSecond, _ []event.TargetSecond) results.Point {
		// The sampler's line of this second (the board drops a line
		// older than a few seconds).
		hs.At = time.Now()
		board.Put("s1", hs)
		p = board.Merge(p, time.Time{})
		seconds = append(seconds, p)
		if len(hosts) != 0 {
			t.Errorf("one client host has a per-host view: %v", hosts)
		}
		return p
	}
	var written []results.RunResult
	m.OnRun = func(r results.RunResult, _ time.Time) {
		r.SummarizeSeries(board.Cores())
		written = append(written, r)
	}
	m.OnMergeErr = func(err error) { t.Errorf("merge: %v", err) }
	other := 0
	for _, line := range strings.Split(strings.TrimSpace(agent.String()), "\n") {
		ev, err := benchwire.ParseLine([]byte(line))
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		switch ev := ev.(type) {
		case *benchwire.Sample:
			m.Sample(0, ev, time.Now())
		case *benchwire.RunResult:
			before := len(written)
			m.RunDone(0, ev)
			if len(written) != before+1 {
				t.Fatalf("run %d's result line handed on %d runs, want 1", ev.Run, len(written)-before)
			}
		default:
			other++
		}
	}
	m.HostEnded(0)
	m.Finish()
	if err := m.DroppedErr(); err != nil {
		t.Errorf("dropped: %v", err)
	}
	if other != 3 {
		t.Errorf("%d lines besides samples and results, want the header, start and summary", other)
	}
	if len(written) != 2 || len(seconds) != 6 {
		t.Fatalf("%d repetitions, %d seconds; want 2 and 6", len(written), len(seconds))
	}
	for i, r := range written {
		if r.Run != i+1 || r.OpsPerSec != float64(1000*(i+1)) || len(r.Series) != 3 {
			t.Errorf("repetition %d: run %d, %v ops/s, %d seconds", i+1, r.Run, r.OpsPerSec, len(r.Series))
		}
		if r.ServerCPU == nil || *r.ServerCPU != 40 {
			t.Errorf("repetition %d: server CPU %v, want the sampler's 40%%", i+1, r.ServerCPU)
		}
	}
	if seconds[4].OpsPerSec != 2020 || seconds[4].ServerCPU == nil || *seconds[4].ServerCPU != 40 {
		t.Errorf("run 2's second second: %+v", seconds[4])
	}
}
