package bench

import (
	"math/rand/v2"
)

// keyGen picks key numbers in [KeyMinimum, KeyMaximum] for one worker and
// one side (SETs or GETs) of the key pattern: memtier keeps a sequential
// iterator per side too.
type keyGen struct {
	pattern  byte // R, S, G or P
	min, max int64
	rng      *rand.Rand
	// S and P: the walk [lo, hi] and the next key.
	lo, hi, cur int64
	// G: centre and spread.
	median, sd float64
}

// partition returns connection w's slice of [0, n) when n keys are split
// over conns connections: the slices are contiguous and cover every key
// exactly once (some are empty when there are more connections than keys).
// Slice sizes are quota(n, conns, w), so that --requests-total N with the P
// pattern over N keys writes every key exactly once.
func partition(n int64, w, conns int) (lo, hi int64) {
	q, r := n/int64(conns), n%int64(conns)
	lo = int64(w)*q + min(int64(w), r)
	return lo, lo + quota(n, conns, w)
}

// newKeyGen builds the generator of connection w of the conns connections
// of one target: under P the key range is split over a target's
// connections, so that every target gets every key.
func newKeyGen(cfg *Config, side int, rng *rand.Rand, w, conns int) *keyGen {
	g := &keyGen{pattern: keySide(cfg.KeyPattern, side), min: cfg.KeyMinimum, max: cfg.KeyMaximum, rng: rng}
	g.lo, g.hi = g.min, g.max
	g.cur = g.lo
	if g.pattern == 'P' {
		lo, hi := partition(keyCount(cfg), w, conns)
		if hi > lo {
			g.lo, g.hi = g.min+lo, g.min+hi-1
			g.cur = g.lo
		} else {
			// More connections than keys: walk the whole range from a
			// staggered start.
			g.cur = g.min + int64(w)%keyCount(cfg)
		}
	}
	g.median = float64(g.min) + float64(g.max-g.min)/2
	g.sd = float64(g.max-g.min) / 6
	return g
}

func (g *keyGen) next() int64 {
	switch g.pattern {
	case 'S', 'P':
		k := g.cur
		g.cur++
		if g.cur > g.hi {
			g.cur = g.lo
		}
		return k
	case 'G':
		k := int64(g.rng.NormFloat64()*g.sd + g.median + 0.5)
		if k < g.min {
			k = g.min
		} else if k > g.max {
			k = g.max
		}
		return k
	default:
		return g.min + g.rng.Int64N(g.max-g.min+1)
	}
}

// sizePicker draws value sizes: fixed, a weighted list, or a range (random,
// or growing with the key under the S pattern).
type sizePicker struct {
	fixed int
	cum   []int // cumulative weights
	sizes []int
	// Range: [lo, hi]; byKey under --data-size-pattern S.
	lo, hi      int
	byKey       bool
	kmin, kspan int64
	rng         *rand.Rand
}

func newSizePicker(cfg *Config, rng *rand.Rand) *sizePicker {
	p := &sizePicker{fixed: cfg.DataSize, rng: rng}
	total := 0
	for _, sw := range cfg.DataSizeList {
		total += sw.Weight
		p.cum = append(p.cum, total)
		p.sizes = append(p.sizes, sw.Size)
	}
	if !cfg.DataSizeRange.IsZero() && len(p.sizes) == 0 {
		p.lo, p.hi = cfg.DataSizeRange.Min, cfg.DataSizeRange.Max
		p.byKey = cfg.DataSizePattern == "S"
		p.kmin, p.kspan = cfg.KeyMinimum, cfg.KeyMaximum-cfg.KeyMinimum
	}
	return p
}

// next is the size of a SET of key number key.
func (p *sizePicker) next(key int64) int {
	switch {
	case p.hi > 0 && p.byKey:
		if p.kspan == 0 {
			return p.lo
		}
		return p.lo + int(float64(p.hi-p.lo)*float64(key-p.kmin)/float64(p.kspan))
	case p.hi > 0:
		return p.lo + p.rng.IntN(p.hi-p.lo+1)
	case len(p.sizes) == 0:
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

func maxValueSize(cfg *Config) int {
	if !cfg.DataSizeRange.IsZero() && len(cfg.DataSizeList) == 0 {
		return cfg.DataSizeRange.Max
	}
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
