//go:build unix

package load

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/event"
	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/kinds/load/loadtest"
	"github.com/dpulab/dpulab/steps/results"
)

// TestClientRunStream feeds one client host's bench stream, as a fake
// agent prints it with --target-samples (a header, its start, per second
// the totals line then one line per target, a result per repetition, its
// summary; a stderr line; a line that is no JSON), line by line through
// ClientRun.Line into the merge: each second reaches the merge once, with
// its targets named by their server host; a second whose second target
// line never came is closed by the run's result line; each repetition is
// handed on once; the start line is kept; the stderr and bad lines are
// shown, the bad one's error kept.
func TestClientRunStream(t *testing.T) {
	const a, b = "192.0.2.20:7000", "192.0.2.21:7000"
	_, hdr := loadtest.Hist(t, 200, 300, 400)
	var agent bytes.Buffer
	enc := func(ev benchwire.Event) {
		if err := benchwire.Encode(&agent, ev); err != nil {
			t.Fatal(err)
		}
	}
	enc(benchwire.StreamHeader())
	late := 0.7
	enc(&benchwire.Start{Config: benchwire.DefaultConfig(), Client: "c1", Targets: []string{a, b}, Connections: 4, StartLateMs: &late})
	for run := 1; run <= 2; run++ {
		for s := 1; s <= 3; s++ {
			lat := benchwire.Latency{Avg: 0.3, P50: 0.3, P99: 0.4}
			enc(&benchwire.Sample{Run: run, T: float64(s), OpsPerSec: float64(1000*run + 10*s), LatencyHDR: hdr, LatencyMs: lat})
			enc(&benchwire.Sample{Run: run, T: float64(s), Target: a, OpsPerSec: float64(600*run + 10*s), LatencyHDR: hdr, LatencyMs: lat})
			if !(run == 2 && s == 3) { // the last second's b line is lost
				enc(&benchwire.Sample{Run: run, T: float64(s), Target: b, OpsPerSec: float64(400 * run), LatencyHDR: hdr, LatencyMs: lat})
			}
		}
		enc(&benchwire.RunResult{Run: run, Totals: benchwire.Totals{Seconds: 3, Ops: int64(3000 * run), OpsPerSec: float64(1000 * run),
			LatencyMs: benchwire.Latency{Avg: 0.3, P50: 0.3, P99: 0.4}, LatencyHDR: hdr}})
	}
	enc(&benchwire.Summary{Runs: 2, OpsPerSec: 1500})

	m := NewClientMerge([]string{"c1"})
	m.TargetHosts = map[string]string{a: "s1", b: "s2"}
	type second struct {
		run     int
		p       results.Point
		targets []event.TargetSecond
	}
	var seconds []second
	m.OnPoint = func(run int, p results.Point, _ time.Time, _ []event.HostSecond, targets []event.TargetSecond) results.Point {
		seconds = append(seconds, second{run, p, targets})
		return p
	}
	var written []results.RunResult
	m.OnRun = func(r results.RunResult, _ time.Time) { written = append(written, r) }
	m.OnMergeErr = func(err error) { t.Errorf("merge: %v", err) }

	cr := &ClientRun{Share: ClientShare{Host: kind.Host{Name: "c1"}}}
	cr.Seconds.Want = 2
	var shown []string
	show := func(l runner.Line) { shown = append(shown, l.Text) }
	var mu sync.Mutex
	lines := strings.Split(strings.TrimSpace(agent.String()), "\n")
	lines = slices.Insert(lines, 3, "not json from a broken agent")
	for _, l := range lines {
		cr.Line(show, m, &mu, 0, runner.Line{Host: "c1", Stream: runner.Stdout, Text: l})
	}
	cr.Line(show, m, &mu, 0, runner.Line{Host: "c1", Stream: runner.Stderr, Text: "bench: done"})
	cr.Ended(m, 0)
	m.HostEnded(0)
	m.Finish()
	if err := m.DroppedErr(); err != nil {
		t.Errorf("dropped: %v", err)
	}

	if cr.Started == nil || cr.Started.StartLateMs == nil || *cr.Started.StartLateMs != 0.7 {
		t.Errorf("the start line was not kept: %+v", cr.Started)
	}
	if !slices.Equal(shown, []string{"not json from a broken agent", "bench: done"}) {
		t.Errorf("shown %q, want the bad line and the stderr line", shown)
	}
	if cr.Out.Err() == nil || !slices.Equal(cr.Out.LastLines(), []string{"bench: done"}) {
		t.Errorf("kept: err %v, tail %q", cr.Out.Err(), cr.Out.LastLines())
	}
	if cr.Failed() {
		t.Error("a bench that exited 0 without an error is said failed")
	}
	if len(written) != 2 || len(seconds) != 6 {
		t.Fatalf("%d repetitions, %d seconds; want 2 and 6", len(written), len(seconds))
	}
	for i, r := range written {
		if r.Run != i+1 || r.OpsPerSec != float64(1000*(i+1)) || len(r.Series) != 3 {
			t.Errorf("repetition %d: run %d, %v ops/s, %d seconds", i+1, r.Run, r.OpsPerSec, len(r.Series))
		}
	}
	for i, s := range seconds {
		run, n := i/3+1, i%3+1
		if s.run != run || s.p.OpsPerSec != float64(1000*run+10*n) {
			t.Errorf("second %d: run %d, %v ops/s; want run %d, %d", i, s.run, s.p.OpsPerSec, run, 1000*run+10*n)
		}
		want := 2
		if run == 2 && n == 3 {
			want = 1 // b's line lost: closed by the result line
		}
		if len(s.targets) != want {
			t.Errorf("second %d has %d targets, want %d: %+v", i, len(s.targets), want, s.targets)
			continue
		}
		if s.targets[0].Host != "s1" || s.targets[0].OpsPerSec != float64(600*run+10*n) {
			t.Errorf("second %d's first target: %+v", i, s.targets[0])
		}
	}
	failed := &ClientRun{Res: runner.Result{ExitCode: 1}}
	if !failed.Failed() {
		t.Error("a bench that exited 1 is not said failed")
	}
}

// TestStartedNote: the note after a common start names the latest host,
// and says "every" only when every host reported the instant it was given.
func TestStartedNote(t *testing.T) {
	late := func(at int64, ms float64) *benchwire.Start {
		st := &benchwire.Start{StartLateMs: &ms}
		st.Config.StartAtUnixMs = at
		return st
	}
	run := func(name string, st *benchwire.Start) *ClientRun {
		return &ClientRun{Share: ClientShare{Host: kind.Host{Name: name}}, Started: st}
	}
	perHost := []int64{1000, 1001, 1002}
	all := StartedNote([]*ClientRun{run("c1", late(1000, 1.2)), run("c2", late(1001, 3.4)), run("c3", late(1002, 0.5))}, perHost)
	if !strings.HasPrefix(all, "every client host began within 3.4 ms") || !strings.Contains(all, "latest: c2") {
		t.Errorf("all hosts reported: %q", all)
	}
	some := StartedNote([]*ClientRun{run("c1", late(1000, 1.2)), run("c2", nil), run("c3", late(9, 0.5))}, perHost)
	for _, want := range []string{"the other client hosts began within 1.2 ms", "latest: c1", "no start reported by c2", "a different --start-at reached c3 (asked 1002, got 9)"} {
		if !strings.Contains(some, want) {
			t.Errorf("one silent, one wrong: %q lacks %q", some, want)
		}
	}
	if strings.Contains(some, "every") {
		t.Errorf("one silent, one wrong: %q says every", some)
	}
}
