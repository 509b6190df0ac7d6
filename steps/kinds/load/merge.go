package load

import (
	"fmt"
	"strings"
	"time"

	"github.com/dpulab/dpulab/internal/benchhdr"
	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/steps/event"
	"github.com/dpulab/dpulab/steps/results"
)

// ClientMerge merges the bench streams of several client hosts running one
// load into one series. Each host's seconds are matched by their place in
// its run (its k-th sample of run r), not by clock: the hosts started
// together and every sample covers one interval of the host's own run. A
// merged second is made when every host has sent its sample for it, or
// has finished the run (or its bench ended): rates summed, latencies read
// from the merged histograms (benchhdr.MergeSamples). Runs are merged in
// order; a run is complete when every host has reported it, and is then
// given to OnRun with each host's own series beside the merged one.
//
// It is not safe for concurrent use: the caller serialises.
type ClientMerge struct {
	hosts []string
	// OnPoint gets each merged second (its server columns still empty),
	// the run's start as seen from this machine (the earliest host's) and
	// each client host's own share of that second (the dashboard's
	// per-host view) and each server instance's (the per-instance view,
	// when the benches printed per-target lines).
	OnPoint func(run int, p results.Point, since time.Time, hosts []event.HostSecond, targets []event.TargetSecond) results.Point
	// TargetHosts names each target's server host (TargetHosts).
	TargetHosts map[string]string
	// OnRun gets each complete run.
	OnRun func(r results.RunResult, since time.Time)
	// OnMergeErr is told once when a line could not be merged (an older
	// bench without histograms): its counts are kept, its latency left 0.
	OnMergeErr func(error)

	cur   int // the run being merged (1-based)
	runs  map[int]*runMerge
	ended []bool
	// dropped lists runs that some host never finished (its bench
	// failed): they are not published.
	dropped      []int
	mergeErrSaid bool
}

// runMerge is one run's lines from every host.
type runMerge struct {
	samples [][]*benchwire.Sample
	// targets[h][k] are host h's per-target samples of its k-th second.
	targets [][][]*benchwire.Sample
	series  [][]results.ClientPoint
	// start is each host's measured start as seen here: the arrival of
	// its first sample minus the sample's time into the run.
	start   []time.Time
	totals  []*benchwire.RunResult
	emitted int
	points  []results.Point
}

func NewClientMerge(hosts []string) *ClientMerge {
	return &ClientMerge{hosts: hosts, cur: 1, runs: map[int]*runMerge{}, ended: make([]bool, len(hosts))}
}

func (m *ClientMerge) run(n int) *runMerge {
	r := m.runs[n]
	if r == nil {
		k := len(m.hosts)
		r = &runMerge{samples: make([][]*benchwire.Sample, k), targets: make([][][]*benchwire.Sample, k), series: make([][]results.ClientPoint, k), start: make([]time.Time, k), totals: make([]*benchwire.RunResult, k)}
		m.runs[n] = r
	}
	return r
}

// sample takes host h's totals sample, which arrived at now, with the
// per-target samples of the same second (none without --target-samples).
func (m *ClientMerge) Sample(h int, s *benchwire.Sample, now time.Time, targets ...*benchwire.Sample) {
	if s.Run < m.cur {
		return // a run already given up
	}
	r := m.run(s.Run)
	if len(r.samples[h]) == 0 {
		r.start[h] = now.Add(-time.Duration(s.T * float64(time.Second)))
	}
	r.samples[h] = append(r.samples[h], s)
	r.targets[h] = append(r.targets[h], targets)
	r.series[h] = append(r.series[h], results.ClientPoint{T: s.T, OpsPerSec: s.OpsPerSec, LatencyMs: results.Latency(s.LatencyMs), Errors: s.Errors,
		ClientCPUPct: s.ClientCPUPct, ClientHostBusyPct: s.ClientHostBusyPct, LatencyHDR: s.LatencyHDR})
	m.advance()
}

// RunDone takes host h's summary of one run.
func (m *ClientMerge) RunDone(h int, rr *benchwire.RunResult) {
	if rr.Run < m.cur {
		return
	}
	m.run(rr.Run).totals[h] = rr
	m.advance()
}

// HostEnded says host h's bench ended: nothing more comes from it.
func (m *ClientMerge) HostEnded(h int) {
	m.ended[h] = true
	m.advance()
}

// finish gives up the runs still open (every bench has ended).
func (m *ClientMerge) Finish() {
	for i := range m.ended {
		m.ended[i] = true
	}
	m.advance()
}

// since is the run's start as seen from here: the earliest host's.
func (r *runMerge) since() time.Time {
	var t time.Time
	for _, s := range r.start {
		if !s.IsZero() && (t.IsZero() || s.Before(t)) {
			t = s
		}
	}
	return t
}

// advance makes every merged second and run that is complete.
func (m *ClientMerge) advance() {
	for {
		r := m.runs[m.cur]
		if r == nil {
			return
		}
		m.emitSeconds(r, false)
		complete, broken := true, false
		for h := range m.hosts {
			if r.totals[h] == nil {
				complete = false
				if m.ended[h] {
					broken = true
				}
			}
		}
		switch {
		case complete:
			m.emitSeconds(r, true)
			m.OnRun(m.merged(m.cur, r), r.since())
		case broken && m.allEndedOrReported(r):
			m.emitSeconds(r, true)
			m.dropped = append(m.dropped, m.cur)
		default:
			return
		}
		delete(m.runs, m.cur)
		m.cur++
	}
}

// allEndedOrReported: no host can add to r any more.
func (m *ClientMerge) allEndedOrReported(r *runMerge) bool {
	for h := range m.hosts {
		if r.totals[h] == nil && !m.ended[h] {
			return false
		}
	}
	return true
}

// emitSeconds merges the seconds every host has given (or, with all,
// every second any host gave).
func (m *ClientMerge) emitSeconds(r *runMerge, all bool) {
	for {
		k := r.emitted
		var at []*benchwire.Sample
		var hosts []event.HostSecond
		var tg [][]*benchwire.Sample
		ready := true
		for h := range m.hosts {
			switch {
			case len(r.samples[h]) > k:
				s := r.samples[h][k]
				at = append(at, s)
				tg = append(tg, r.targets[h][k])
				hosts = append(hosts, event.HostSecond{Host: m.hosts[h], OpsPerSec: s.OpsPerSec, P99Ms: s.LatencyMs.P99, Errors: s.Errors, BusyPct: s.ClientHostBusyPct})
			case all || r.totals[h] != nil || m.ended[h]:
			default:
				ready = false
			}
		}
		if !ready || len(at) == 0 {
			return
		}
		// One client host: its second is the whole second, as the bench
		// gave it, and there is no per-host view.
		ms := at[0]
		if len(m.hosts) > 1 {
			var err error
			if ms, err = benchhdr.MergeSamples(at); err != nil {
				m.mergeErr(err)
				if ms == nil {
					return
				}
			}
		} else {
			hosts = nil
		}
		p := SamplePoint(ms)
		if m.OnPoint != nil {
			p = m.OnPoint(at[0].Run, p, r.since(), hosts, m.mergeTargets(tg))
		}
		// Per-target lines are for the live view only: not kept for the
		// run (240 targets × 8 hosts × a minute would be 100 MB).
		for h := range r.targets {
			if len(r.targets[h]) > k {
				r.targets[h][k] = nil
			}
		}
		r.points = append(r.points, p)
		r.emitted++
	}
}

// mergeTargets is one second's per-instance view from every host's
// per-target samples of it: a target driven from several client hosts
// (the load split by connections) gets its ops and errors summed and its
// p50 and p99 read from the hosts' per-target histograms merged
// (benchhdr.MergeSamples), never averaged. A line without a histogram (an
// older bench) leaves that target's latency at what the merge could read:
// its counts still add up, and OnMergeErr says so once.
func (m *ClientMerge) mergeTargets(perHost [][]*benchwire.Sample) []event.TargetSecond {
	var order []string
	by := map[string][]*benchwire.Sample{}
	for _, ss := range perHost {
		for _, s := range ss {
			if _, ok := by[s.Target]; !ok {
				order = append(order, s.Target)
			}
			by[s.Target] = append(by[s.Target], s)
		}
	}
	if len(order) == 0 {
		return nil
	}
	merged := make([]*benchwire.Sample, 0, len(order))
	for _, t := range order {
		g := by[t]
		if len(g) == 1 {
			merged = append(merged, g[0])
			continue
		}
		ms, err := benchhdr.MergeSamples(g)
		if err != nil {
			m.mergeErr(err)
			if ms == nil {
				continue
			}
		}
		ms.Target = t
		merged = append(merged, ms)
	}
	return TargetSeconds(merged, m.TargetHosts)
}

func (m *ClientMerge) mergeErr(err error) {
	if !m.mergeErrSaid && m.OnMergeErr != nil {
		m.OnMergeErr(err)
	}
	m.mergeErrSaid = true
}

// merged is run n from every host's summary: rates summed, latencies from
// the merged histograms, each host's own numbers kept in Clients.
// With one client host the run is that host's summary as it stands.
func (m *ClientMerge) merged(n int, r *runMerge) results.RunResult {
	if len(m.hosts) == 1 {
		rr := r.totals[0]
		return results.RunResult{Run: n, OpsPerSec: rr.OpsPerSec, LatencyMs: results.Latency(rr.LatencyMs), Errors: rr.Errors, Series: r.points, Err: rr.Err,
			ClientBound: rr.ClientBound, ClientHostBusyPct: rr.ClientHostBusyPct}
	}
	ts := make([]benchwire.Totals, len(m.hosts))
	out := results.RunResult{Run: n, Series: r.points}
	var errs []string
	for h, host := range m.hosts {
		rr := r.totals[h]
		ts[h] = rr.Totals
		cs := results.ClientSeries{Host: host, OpsPerSec: rr.OpsPerSec, LatencyMs: results.Latency(rr.LatencyMs), Errors: rr.Errors,
			ClientCPUPct: rr.ClientCPUPct, ClientHostBusyPct: rr.ClientHostBusyPct, ClientBound: rr.ClientBound,
			LatencyHDR: rr.LatencyHDR, Series: r.series[h], Err: rr.Err}
		if cs.Series == nil {
			cs.Series = []results.ClientPoint{}
		}
		out.Clients = append(out.Clients, cs)
		out.ClientBound = out.ClientBound || rr.ClientBound
		if b := rr.ClientHostBusyPct; b != nil && (out.ClientHostBusyPct == nil || *b > *out.ClientHostBusyPct) {
			v := *b
			out.ClientHostBusyPct = &v
		}
		if rr.Err != "" {
			errs = append(errs, host+": "+rr.Err)
		}
	}
	tot, err := benchhdr.MergeTotals(ts)
	if err != nil {
		m.mergeErr(err)
	}
	out.OpsPerSec, out.LatencyMs, out.Errors = tot.OpsPerSec, results.Latency(tot.LatencyMs), tot.Errors
	out.Err = strings.Join(errs, "; ")
	var lo, hi time.Time
	for _, s := range r.start {
		if s.IsZero() {
			continue
		}
		if lo.IsZero() || s.Before(lo) {
			lo = s
		}
		if hi.IsZero() || s.After(hi) {
			hi = s
		}
	}
	if !lo.IsZero() {
		out.StartSkewMs = MillisPtr(hi.Sub(lo))
	}
	return out
}

// DroppedErr says which runs were not merged because a host never
// finished them (nil when none).
func (m *ClientMerge) DroppedErr() error {
	if len(m.dropped) == 0 {
		return nil
	}
	return fmt.Errorf("run %v did not finish on every client host, so it was not merged", m.dropped)
}

// SamplePoint is a bench's totals sample as a point of the series (the
// servers' columns empty: the samplers' merge fills them).
func SamplePoint(s *benchwire.Sample) results.Point {
	return results.Point{T: s.T, OpsPerSec: s.OpsPerSec, LatencyMs: results.Latency(s.LatencyMs), Errors: s.Errors}
}

// TargetSeconds turns per-target samples into the Sample's per-instance
// view, each named with its server host (hosts: TargetHosts).
func TargetSeconds(ss []*benchwire.Sample, hosts map[string]string) []event.TargetSecond {
	if len(ss) == 0 {
		return nil
	}
	out := make([]event.TargetSecond, len(ss))
	for i, s := range ss {
		out[i] = event.TargetSecond{Target: s.Target, Host: hosts[s.Target], OpsPerSec: s.OpsPerSec, P50Ms: s.LatencyMs.P50, P99Ms: s.LatencyMs.P99, Errors: s.Errors}
	}
	return out
}
