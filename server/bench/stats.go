package bench

import (
	"math"
	"sort"
	"strconv"
	"sync/atomic"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Commands the generator sends, as indexes into per-command arrays.
const (
	cmdSet = iota
	cmdGet
	nCmd
)

var cmdNames = [nCmd]string{"set", "get"}

// Histograms record microseconds from 1 µs to a minute at 3 significant
// digits (about 0.1% error), what redis-benchmark and memtier report.
const (
	histMin     = 1
	histMax     = 60_000_000
	histSigFigs = 3
)

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(histMin, histMax, histSigFigs) }

// latencyOf summarises a histogram in milliseconds.
func latencyOf(h *hdrhistogram.Histogram) Latency {
	if h == nil || h.TotalCount() == 0 {
		return Latency{}
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return Latency{
		Avg:  h.Mean() / 1000,
		P50:  ms(h.ValueAtQuantile(50)),
		P90:  ms(h.ValueAtQuantile(90)),
		P99:  ms(h.ValueAtQuantile(99)),
		P999: ms(h.ValueAtQuantile(99.9)),
		Max:  ms(h.Max()),
	}
}

// percentilesOf reads the --print-percentiles from h, in milliseconds,
// keyed as the percentile is written ("50", "99.9").
func percentilesOf(h *hdrhistogram.Histogram, ps []float64) map[string]float64 {
	if len(ps) == 0 || h == nil || h.TotalCount() == 0 {
		return nil
	}
	m := make(map[string]float64, len(ps))
	for _, p := range ps {
		m[strconv.FormatFloat(p, 'g', -1, 64)] = float64(h.ValueAtQuantile(p)) / 1000
	}
	return m
}

// counts are the countable outcomes of requests.
type counts struct {
	// ops counts replies per command, error replies included.
	ops [nCmd]int64
	// errReplies counts error replies (a subset of ops); failed counts
	// requests sent that never got a reply (the connection broke).
	errReplies int64
	failed     int64
	// hits and misses count GET replies with a value and nil.
	hits, misses int64
	// errKinds is nil until the first error: no map on the clean path.
	errKinds map[string]int64
}

func (c *counts) total() int64 {
	var n int64
	for _, v := range c.ops {
		n += v
	}
	return n
}

func (c *counts) errors() int64 { return c.errReplies + c.failed }

func (c *counts) addKind(kind string, n int64) {
	if c.errKinds == nil {
		c.errKinds = make(map[string]int64)
	}
	c.errKinds[kind] += n
}

func (c *counts) add(o *counts) {
	for i := range c.ops {
		c.ops[i] += o.ops[i]
	}
	c.errReplies += o.errReplies
	c.failed += o.failed
	c.hits += o.hits
	c.misses += o.misses
	for k, v := range o.errKinds {
		c.addKind(k, v)
	}
}

func (c *counts) reset() {
	kinds := c.errKinds
	clear(kinds)
	*c = counts{errKinds: kinds}
}

func (c *counts) kindsCopy() map[string]int64 {
	if len(c.errKinds) == 0 {
		return nil
	}
	m := make(map[string]int64, len(c.errKinds))
	for k, v := range c.errKinds {
		if v != 0 {
			m[k] = v
		}
	}
	return m
}

// accum is what one worker measured since the collector last looked: counts
// and raw latencies in microseconds, per command. The collector swaps it for
// an empty one under the worker's own mutex, so the hot path never shares a
// lock with other workers.
type accum struct {
	counts
	lat [nCmd][]int64
}

func (a *accum) reset() {
	a.counts.reset()
	for i := range a.lat {
		a.lat[i] = a.lat[i][:0]
	}
}

// ioCounters count bytes on the wire for one target. Written by that
// target's connections (one atomic add per syscall) and read by the
// collector.
type ioCounters struct {
	sent atomic.Int64
	recv atomic.Int64
	_    [48]byte // keep targets' counters on separate cache lines
}

// meanStd returns the mean and the sample standard deviation (n-1) of xs.
func meanStd(xs []float64) (mean, std float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1))
}

func minMax(xs []float64) (lo, hi float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	lo, hi = xs[0], xs[0]
	for _, x := range xs[1:] {
		lo = math.Min(lo, x)
		hi = math.Max(hi, x)
	}
	return lo, hi
}

// sortedKinds lists error kinds by count, most first, for display.
func sortedKinds(m map[string]int64) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		if m[ks[i]] != m[ks[j]] {
			return m[ks[i]] > m[ks[j]]
		}
		return ks[i] < ks[j]
	})
	return ks
}
