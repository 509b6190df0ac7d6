package bench

import (
	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dpulab/dpulab/internal/benchhdr"

	"github.com/dpulab/dpulab/server/transport"
)

// targetAgg accumulates one target's numbers.
type targetAgg struct {
	name string
	io   *ioCounters
	// Byte counters as last read, for deltas.
	lastSent, lastRecv int64
	// This run.
	run              counts
	runSent, runRecv int64
	runHist          *hdrhistogram.Histogram
	// This interval (only with TargetSamples).
	iv             counts
	ivSent, ivRecv int64
	ivHist         *hdrhistogram.Histogram
}

// collector merges the workers' accums: each interval for the samples, and
// over the run for the run result. It runs on one goroutine only.
type collector struct {
	cfg     *Config
	workers []*worker
	spares  []*accum
	targets []*targetAgg

	ivCounts       counts
	ivSent, ivRecv int64
	ivHist         *hdrhistogram.Histogram

	runCounts         counts
	runCmdHist        [nCmd]*hdrhistogram.Histogram
	runSent, runRecv  int64
	last              int64 // latest reply seen (nanotime)
	allHist           *hdrhistogram.Histogram
	perTargetInterval bool

	// With --json-out-file or --hdr-file-prefix: per-command interval
	// histograms for memtier's Time-Serie, and every run kept whole.
	keep      bool
	ivCmdHist [nCmd]*hdrhistogram.Histogram
	series    []second
	records   []*runRecord

	// CPU readings at the start of the measured run and of the interval.
	cpuRun, cpuIv cpuReading
}

func newCollector(cfg *Config, workers []*worker, eps []transport.Endpoint, ios []*ioCounters) *collector {
	c := &collector{cfg: cfg, workers: workers, ivHist: newHist(), allHist: newHist(), perTargetInterval: cfg.TargetSamples}
	for range workers {
		c.spares = append(c.spares, &accum{})
	}
	for i, ep := range eps {
		t := &targetAgg{name: ep.Label(), io: ios[i], runHist: newHist()}
		if c.perTargetInterval {
			t.ivHist = newHist()
		}
		c.targets = append(c.targets, t)
	}
	for i := range c.runCmdHist {
		c.runCmdHist[i] = newHist()
	}
	if cfg.JSONOutFile != "" || cfg.HDRFilePrefix != "" {
		c.keep = true
		for i := range c.ivCmdHist {
			c.ivCmdHist[i] = newHist()
		}
	}
	return c
}

// startRun clears the run's numbers. Call it while no worker runs: what
// prefill or an earlier run left in the workers' accums is dropped.
func (c *collector) startRun() {
	c.gather(false)
	c.resetInterval()
	c.runCounts.reset()
	c.runSent, c.runRecv = 0, 0
	c.last = 0
	c.series = nil
	for _, h := range c.runCmdHist {
		h.Reset()
	}
	for _, t := range c.targets {
		t.run.reset()
		t.runSent, t.runRecv = 0, 0
		t.runHist.Reset()
	}
}

// baselineBytes starts counting bytes and CPU from now (the end of warmup).
func (c *collector) baselineBytes() {
	c.cpuRun = readCPU()
	c.cpuIv = c.cpuRun
	for _, t := range c.targets {
		t.lastSent, t.lastRecv = t.io.sent.Load(), t.io.recv.Load()
	}
}

func (c *collector) resetInterval() {
	c.ivCounts.reset()
	c.ivSent, c.ivRecv = 0, 0
	c.ivHist.Reset()
	for _, h := range c.ivCmdHist {
		if h != nil {
			h.Reset()
		}
	}
	for _, t := range c.targets {
		t.iv.reset()
		t.ivSent, t.ivRecv = 0, 0
		if t.ivHist != nil {
			t.ivHist.Reset()
		}
	}
}

func record(h *hdrhistogram.Histogram, us int64) {
	if us > benchhdr.MaxValue {
		us = benchhdr.MaxValue
	}
	_ = h.RecordValue(us) // in range by construction
}

// gather takes every worker's accum and folds it into the interval and the
// run (when keep is false, only the byte baselines move).
func (c *collector) gather(keep bool) {
	for i, w := range c.workers {
		a, last := w.swap(c.spares[i])
		c.spares[i] = a
		if !keep {
			a.reset()
			continue
		}
		if last > c.last {
			c.last = last
		}
		t := c.targets[w.target]
		c.ivCounts.add(&a.counts)
		c.runCounts.add(&a.counts)
		t.run.add(&a.counts)
		if c.perTargetInterval {
			t.iv.add(&a.counts)
		}
		// With one target its histogram is the run's: merged at the end
		// instead of recorded twice.
		perTarget := len(c.targets) > 1
		for cmd := range a.lat {
			if c.keep {
				for _, us := range a.lat[cmd] {
					record(c.ivCmdHist[cmd], us)
				}
			}
			for _, us := range a.lat[cmd] {
				record(c.ivHist, us)
				record(c.runCmdHist[cmd], us)
				if perTarget {
					record(t.runHist, us)
				}
				if t.ivHist != nil {
					record(t.ivHist, us)
				}
			}
		}
		a.reset()
	}
	for _, t := range c.targets {
		s, r := t.io.sent.Load(), t.io.recv.Load()
		ds, dr := s-t.lastSent, r-t.lastRecv
		t.lastSent, t.lastRecv = s, r
		if !keep {
			continue
		}
		t.runSent += ds
		t.runRecv += dr
		t.ivSent += ds
		t.ivRecv += dr
		c.runSent += ds
		c.runRecv += dr
		c.ivSent += ds
		c.ivRecv += dr
	}
}

// samples turns the interval into its sample(s) and starts the next one.
// dt is the interval's length in seconds, t its end since the run's t0.
func (c *collector) samples(run int, t, dt float64) []*Sample {
	if c.keep {
		c.series = append(c.series, c.second(t))
	}
	out := []*Sample{c.sample(run, t, dt, "", &c.ivCounts, c.ivHist, c.ivSent, c.ivRecv)}
	now := readCPU()
	out[0].ClientCPUPct, out[0].ClientHostBusyPct = cpuBetween(c.cpuIv, now)
	c.cpuIv = now
	if c.perTargetInterval {
		for _, tg := range c.targets {
			out = append(out, c.sample(run, t, dt, tg.name, &tg.iv, tg.ivHist, tg.ivSent, tg.ivRecv))
		}
	}
	c.resetInterval()
	return out
}

func (c *collector) sample(run int, t, dt float64, target string, k *counts, h *hdrhistogram.Histogram, sent, recv int64) *Sample {
	s := &Sample{
		Run: run, T: t, Target: target,
		OpsPerSecByCmd:  map[string]float64{},
		LatencyMs:       latencyOf(h),
		LatencyHDR:      benchhdr.Encode(h),
		Errors:          k.errors(),
		ErrorsByKind:    k.kindsCopy(),
		BytesSentPerSec: perSec(sent, dt),
		BytesRecvPerSec: perSec(recv, dt),
	}
	s.OpsPerSec = perSec(k.total(), dt)
	for cmd, name := range cmdNames {
		if c.cmdUsed(cmd) {
			s.OpsPerSecByCmd[name] = perSec(k.ops[cmd], dt)
		}
	}
	return s
}

// cmdUsed reports whether the ratio sends cmd at all, so that results name
// only the commands that ran.
func (c *collector) cmdUsed(cmd int) bool {
	if cmd == cmdSet {
		return c.cfg.Ratio.Set > 0
	}
	return c.cfg.Ratio.Get > 0
}

func perSec(n int64, dt float64) float64 {
	if dt <= 0 {
		return 0
	}
	return float64(n) / dt
}

func (c *collector) totals(k *counts, seconds float64, h *hdrhistogram.Histogram, sent, recv int64) Totals {
	t := Totals{
		Seconds:         seconds,
		Ops:             k.total(),
		OpsByCmd:        map[string]int64{},
		OpsPerSecByCmd:  map[string]float64{},
		LatencyMs:       latencyOf(h),
		LatencyHDR:      benchhdr.Encode(h),
		Errors:          k.errors(),
		ErrorsByKind:    k.kindsCopy(),
		Hits:            k.hits,
		Misses:          k.misses,
		BytesSent:       sent,
		BytesRecv:       recv,
		BytesSentPerSec: perSec(sent, seconds),
		BytesRecvPerSec: perSec(recv, seconds),
	}
	t.OpsPerSec = perSec(t.Ops, seconds)
	t.LatencyMsPercentiles = percentilesOf(h, c.cfg.Percentiles)
	for cmd, name := range cmdNames {
		if c.cmdUsed(cmd) {
			t.OpsByCmd[name] = k.ops[cmd]
			t.OpsPerSecByCmd[name] = perSec(k.ops[cmd], seconds)
		}
	}
	return t
}

// runResult summarises the run; the run's histograms are folded into the
// all-runs histogram.
func (c *collector) runResult(run int, seconds float64) *RunResult {
	all := newHist()
	byCmd := map[string]Latency{}
	for cmd, h := range c.runCmdHist {
		all.Merge(h)
		if c.cmdUsed(cmd) {
			byCmd[cmdNames[cmd]] = latencyOf(h)
		}
	}
	c.allHist.Merge(all)
	r := &RunResult{Run: run, Totals: c.totals(&c.runCounts, seconds, all, c.runSent, c.runRecv)}
	r.LatencyMsByCmd = byCmd
	r.ClientCPUPct, r.ClientHostBusyPct = cpuBetween(c.cpuRun, readCPU())
	r.ClientBound = clientBound(r.ClientHostBusyPct)
	if c.keep {
		rec := &runRecord{run: run, res: r, all: all, series: c.series, sent: c.runSent, recv: c.runRecv}
		for i, h := range c.runCmdHist {
			rec.cmd[i] = hdrhistogram.Import(h.Export())
		}
		c.records = append(c.records, rec)
	}
	for _, t := range c.targets {
		h := t.runHist
		if len(c.targets) == 1 {
			h = all
		}
		r.Targets = append(r.Targets, TargetResult{Target: t.name, Totals: c.totals(&t.run, seconds, h, t.runSent, t.runRecv)})
	}
	return r
}
