package bench

import (
	"math/rand/v2"
)

// keyGen picks key numbers in [0, max) for one worker.
type keyGen struct {
	pattern KeyPattern
	max     int64
	rng     *rand.Rand
	// Sequential: this worker's slice [lo, hi) and the next key.
	lo, hi, cur int64
	// Gaussian: centre and spread.
	median, sd float64
}

// partition returns worker w's slice of [0, max) when the key space is split
// over n workers: the slices are contiguous and cover every key exactly
// once (some are empty when there are more workers than keys). Slice sizes
// are quota(max, n, w), so that --requests KEY-MAXIMUM with the sequential
// pattern writes every key exactly once.
func partition(max int64, w, n int) (lo, hi int64) {
	q, r := max/int64(n), max%int64(n)
	lo = int64(w)*q + min(int64(w), r)
	return lo, lo + quota(max, n, w)
}

func newKeyGen(cfg *Config, rng *rand.Rand, w, n int) *keyGen {
	g := &keyGen{pattern: cfg.KeyPattern, max: cfg.KeyMaximum, rng: rng}
	g.lo, g.hi = partition(cfg.KeyMaximum, w, n)
	if g.hi <= g.lo {
		// More workers than keys: walk the whole space from a staggered start.
		g.lo, g.hi = 0, cfg.KeyMaximum
		g.cur = int64(w) % cfg.KeyMaximum
	} else {
		g.cur = g.lo
	}
	g.median = float64(cfg.KeyMaximum-1) / 2
	g.sd = float64(cfg.KeyMaximum) / 6
	return g
}

func (g *keyGen) next() int64 {
	switch g.pattern {
	case KeySequential:
		k := g.cur
		g.cur++
		if g.cur >= g.hi {
			g.cur = g.lo
		}
		return k
	case KeyGaussian:
		k := int64(g.rng.NormFloat64()*g.sd + g.median + 0.5)
		if k < 0 {
			k = 0
		} else if k >= g.max {
			k = g.max - 1
		}
		return k
	default:
		return g.rng.Int64N(g.max)
	}
}

// sizePicker draws value sizes from the configured mix.
type sizePicker struct {
	fixed int
	cum   []int // cumulative weights
	sizes []int
	rng   *rand.Rand
}

func newSizePicker(cfg *Config, rng *rand.Rand) *sizePicker {
	p := &sizePicker{fixed: cfg.DataSize, rng: rng}
	total := 0
	for _, sw := range cfg.DataSizeList {
		total += sw.Weight
		p.cum = append(p.cum, total)
		p.sizes = append(p.sizes, sw.Size)
	}
	return p
}

func (p *sizePicker) next() int {
	if len(p.sizes) == 0 {
		return p.fixed
	}
	x := p.rng.IntN(p.cum[len(p.cum)-1])
	for i, c := range p.cum {
		if x < c {
			return p.sizes[i]
		}
	}
	return p.sizes[len(p.sizes)-1]
}

func (cfg *Config) maxValueSize() int {
	if len(cfg.DataSizeList) == 0 {
		return cfg.DataSize
	}
	m := 0
	for _, sw := range cfg.DataSizeList {
		m = max(m, sw.Size)
	}
	return m
}

// valueBytes is the shared payload every SET slices its value from. Values
// are never written to, so all workers share one.
func valueBytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'x'
	}
	return b
}

// quota splits n requests over w workers; worker i gets quota(n, w, i).
func quota(n int64, w, i int) int64 {
	q := n / int64(w)
	if int64(i) < n%int64(w) {
		q++
	}
	return q
}

// setsFor is how many of n requests one worker issues as SETs under
// ratio r: each worker repeats r.Set SETs then r.Get GETs.
func setsFor(n int64, r Ratio) int64 {
	cycle := int64(r.Set + r.Get)
	return n/cycle*int64(r.Set) + min(n%cycle, int64(r.Set))
}
