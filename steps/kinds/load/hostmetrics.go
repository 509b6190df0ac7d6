package load

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/runner/vsphere"
	"github.com/dpulab/dpulab/steps/results"
)

// The host (ESXi) metrics of a bench job's server hosts (runner/vsphere),
// where the inventory has a vCenter: the engine opens the session and
// records where the figures come from (Probes.VSphere); here the points
// are joined to the bench's runs, second by second, as the host (ESXi)
// metrics of steps/results.

// DefaultHostMetricsTail bounds the wait, after a bench, for vSphere to
// publish the samples covering its last seconds: two real-time intervals
// (20 s each), as runner/vsphere's doc says.
const DefaultHostMetricsTail = 40 * time.Second

// startHostSampler starts the host (ESXi) metrics of job's server hosts:
// nil when the run has none for them. An error (a refused thumbprint, a
// failed login) stops the step.
func startHostSampler(ctx context.Context, r Measurer, job BenchJob) (*hostSampler, error) {
	src, err := r.VSphere(ctx, job.Step, job.Servers)
	if err != nil || src == nil {
		return nil, err
	}
	out := r.Output(job.Step)
	return newHostSampler(ctx, src, func(msg string) {
		out(runner.Line{Host: vsphere.Source, Stream: runner.Stderr, Text: msg, Time: time.Now()})
	}), nil
}

// newHostSampler starts src's sampling until stop (or drain); note says
// what went wrong on the way.
func newHostSampler(ctx context.Context, src *HostMetrics, note func(string)) *hostSampler {
	hs := &hostSampler{hosts: src.Hosts, vms: src.VMs, tail: src.Tail, note: note, done: make(chan struct{}),
		pts: map[string]map[int64]vsphere.Point{}, vmPts: map[string]map[int64]vsphere.Point{}, upTo: map[string]time.Time{}, changed: make(chan struct{}, 1)}
	if hs.tail <= 0 {
		hs.tail = DefaultHostMetricsTail
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	hs.cancel = cancel
	go func() {
		defer close(hs.done)
		if err := src.Sample(sctx, hs.put, note); err != nil {
			note("host (ESXi) metrics stopped: " + err.Error())
		}
		hs.mu.Lock()
		hs.ended = true
		hs.mu.Unlock()
		hs.signal()
	}()
	return hs
}

// hostSampler samples the ESXi hosts of one bench job. Finished runs are
// held until vSphere has published the seconds they cover (hold), so that
// each run reaches the results once, with its host (ESXi) figures.
type hostSampler struct {
	hosts []string
	note  func(string)
	// vms are the server VMs whose network use is read (their seconds
	// are not waited for: a second without all of them has no VM figure).
	vms  []string
	tail time.Duration

	cancel context.CancelFunc
	done   chan struct{}

	mu sync.Mutex
	// pts holds each host's points by Unix second, vmPts each VM's.
	pts, vmPts map[string]map[int64]vsphere.Point
	// upTo is the second after each host's newest point.
	upTo    map[string]time.Time
	ended   bool
	pending []heldRun
	// changed is signalled (non-blocking) when points arrive or the
	// sampler ends.
	changed chan struct{}
}

type heldRun struct {
	r          results.RunResult
	start, end time.Time
}

func (hs *hostSampler) signal() {
	select {
	case hs.changed <- struct{}{}:
	default:
	}
}

// put takes one point of the sampler: a host's, or a server VM's.
func (hs *hostSampler) put(p vsphere.Point) {
	hs.mu.Lock()
	if p.VM != "" {
		m := hs.vmPts[p.VM]
		if m == nil {
			m = map[int64]vsphere.Point{}
			hs.vmPts[p.VM] = m
		}
		m[p.T.Unix()] = p
		hs.mu.Unlock()
		return
	}
	m := hs.pts[p.Host]
	if m == nil {
		m = map[int64]vsphere.Point{}
		hs.pts[p.Host] = m
	}
	m[p.T.Unix()] = p
	if next := p.T.Add(time.Second); next.After(hs.upTo[p.Host]) {
		hs.upTo[p.Host] = next
	}
	hs.mu.Unlock()
	hs.signal()
}

// coveredLocked reports whether every host's points reach t (or the
// sampler ended: nothing more will come).
func (hs *hostSampler) coveredLocked(t time.Time) bool {
	if hs.ended {
		return true
	}
	for _, h := range hs.hosts {
		if hs.upTo[h].Before(t) {
			return false
		}
	}
	return true
}

// hold takes a finished run that started (its measured part) at start and
// returns the held runs, in order, whose seconds vSphere has covered, each
// with its host (ESXi) metrics merged and its summary redone.
func (hs *hostSampler) hold(r results.RunResult, start time.Time, cores float64) []results.RunResult {
	end := start
	if n := len(r.Series); n > 0 {
		end = start.Add(time.Duration(r.Series[n-1].T * float64(time.Second)))
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.pending = append(hs.pending, heldRun{r: r, start: start, end: end})
	return hs.releaseLocked(false, cores)
}

func (hs *hostSampler) releaseLocked(all bool, cores float64) []results.RunResult {
	var out []results.RunResult
	for len(hs.pending) > 0 && (all || hs.coveredLocked(hs.pending[0].end)) {
		h := hs.pending[0]
		hs.pending = hs.pending[1:]
		out = append(out, hs.mergeLocked(h, cores))
	}
	return out
}

// drain waits until vSphere has covered the held runs (at most the tail,
// or until ctx ends), stops the sampler and returns them merged.
func (hs *hostSampler) drain(ctx context.Context, cores float64) []results.RunResult {
	deadline := time.NewTimer(hs.tail)
	defer deadline.Stop()
	for {
		hs.mu.Lock()
		n := len(hs.pending)
		ok := n == 0 || hs.coveredLocked(hs.pending[n-1].end)
		hs.mu.Unlock()
		if ok {
			break
		}
		select {
		case <-hs.changed:
			continue
		case <-deadline.C:
			hs.note(fmt.Sprintf("host (ESXi) metrics: vCenter had not published the bench's last seconds %v after it ended; they are left unknown", hs.tail))
		case <-ctx.Done():
		}
		break
	}
	hs.stop()
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.releaseLocked(true, cores)
}

// stop ends the sampler and waits for it (idempotent).
func (hs *hostSampler) stop() {
	if hs == nil {
		return
	}
	hs.cancel()
	<-hs.done
}

// mergeLocked fills each second of the run with the ESXi hosts' figures of
// that second, when every host has one: CPU use as the mean over hosts,
// cores used, power and network traffic summed over hosts, the per-million-
// TPS figures from that second's TPS.
func (hs *hostSampler) mergeLocked(h heldRun, cores float64) results.RunResult {
	r := h.r
	series := make([]results.Point, len(r.Series))
	for i, p := range r.Series {
		// A bench second T covers (start+T-1s, start+T]: take vSphere's
		// point of the second it mostly lies in.
		at := h.start.Add(time.Duration(p.T*float64(time.Second)) - 500*time.Millisecond).Truncate(time.Second).Unix()
		if m := hs.metricsAt(at, p.OpsPerSec); len(m) > 0 {
			merged := make(map[string]float64, len(p.Metrics)+len(m))
			for k, v := range p.Metrics {
				merged[k] = v
			}
			for k, v := range m {
				merged[k] = v
			}
			p.Metrics = merged
		}
		series[i] = p
	}
	r.Series = series
	r.SummarizeSeries(cores)
	return r
}

// metricsAt is the host (ESXi) metrics of one second, nil when a host has
// no point for it.
func (hs *hostSampler) metricsAt(sec int64, ops float64) map[string]float64 {
	var cpu, used, ready, watts, kbps float64
	nCPU, nUsed, nReady, nWatts, nNet := 0, 0, 0, 0, 0
	for _, h := range hs.hosts {
		p, ok := hs.pts[h][sec]
		if !ok {
			return nil
		}
		if p.CPUUsagePct != nil {
			cpu += *p.CPUUsagePct
			nCPU++
		}
		if p.CPUReadyPct != nil {
			ready += *p.CPUReadyPct
			nReady++
		}
		if p.CPUUsedCores != nil {
			used += *p.CPUUsedCores
			nUsed++
		}
		if p.PowerWatts != nil {
			watts += *p.PowerWatts
			nWatts++
		}
		if len(p.NetKBps) > 0 {
			nNet++
		}
		nics := make([]string, 0, len(p.NetKBps))
		for n := range p.NetKBps {
			nics = append(nics, n)
		}
		sort.Strings(nics) // a fixed order of addition
		for _, n := range nics {
			kbps += p.NetKBps[n]
		}
	}
	all := len(hs.hosts)
	out := map[string]float64{}
	if nCPU == all {
		out[results.MetricESXiCPU] = cpu / float64(all)
	}
	mops := ops / 1e6
	if nUsed == all && mops > 0 {
		out[results.MetricESXiCoresPerMOps] = used / mops
	}
	if nWatts == all && mops > 0 {
		out[results.MetricESXiWattsPerMOps] = watts / mops
	}
	if nReady == all {
		out[results.MetricESXiCPUReady] = ready / float64(all)
	}
	if nNet == all {
		// net.usage.average is in KBps (vSphere's kilobytes: 1,024 bytes).
		out[results.MetricESXiNetGbps] = kbps * 1024 * 8 / 1e9
	}
	if len(hs.vms) > 0 {
		var vmKBps float64
		n := 0
		for _, v := range hs.vms {
			if p, ok := hs.vmPts[v][sec]; ok && p.VMNetKBps != nil {
				vmKBps += *p.VMNetKBps
				n++
			}
		}
		if n == len(hs.vms) {
			out[results.MetricESXiVMNetGbps] = vmKBps * 1024 * 8 / 1e9
		}
	}
	return out
}
