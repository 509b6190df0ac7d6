package bench

import (
	"math"
	"sync/atomic"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dpulab/dpulab/internal/benchhdr"
)

// Commands the generator sends, as indexes into per-command arrays.
const (
	cmdSet = iota
	cmdGet
	nCmd
)

var cmdNames = [nCmd]string{"set", "get"}

// The histograms' shape and summaries are benchhdr's, shared with the
// engine's merges.
func newHist() *hdrhistogram.Histogram { return benchhdr.NewHistogram() }

func latencyOf(h *hdrhistogram.Histogram) Latency { return benchhdr.LatencyOf(h) }

func percentilesOf(h *hdrhistogram.Histogram, ps []float64) map[string]float64 {
	return benchhdr.PercentilesOf(h, ps)
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
