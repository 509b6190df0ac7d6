// Package chart is the TUI's side of the charts: it draws internal/plot's
// charts (the one asciigraph wrapper, shared with report.md) in the TUI's
// lipgloss colours, and keeps the live series in fixed-size ring buffers,
// so a bench of any length uses bounded memory and a plot costs the same at
// second 10 and second 10,000.
package chart

import "math"

// Ring is a fixed-capacity series of float64; pushing past capacity drops
// the oldest value. NaN marks an unknown value and draws as a gap.
type Ring struct {
	buf   []float64
	start int
	n     int
}

// NewRing returns an empty ring holding at most capacity values.
func NewRing(capacity int) *Ring {
	if capacity < 1 {
		capacity = 1
	}
	return &Ring{buf: make([]float64, capacity)}
}

// Push appends v, dropping the oldest value when full.
func (r *Ring) Push(v float64) {
	if r.n < len(r.buf) {
		r.buf[(r.start+r.n)%len(r.buf)] = v
		r.n++
		return
	}
	r.buf[r.start] = v
	r.start = (r.start + 1) % len(r.buf)
}

// Len is the number of values held.
func (r *Ring) Len() int { return r.n }

// Reset empties the ring.
func (r *Ring) Reset() { r.start, r.n = 0, 0 }

// Last returns the newest value, NaN when empty.
func (r *Ring) Last() float64 {
	if r.n == 0 {
		return math.NaN()
	}
	return r.buf[(r.start+r.n-1)%len(r.buf)]
}

// Tail returns a copy of the newest max values, oldest first (all of them
// when max <= 0 or more than held).
func (r *Ring) Tail(max int) []float64 {
	k := r.n
	if max > 0 && max < k {
		k = max
	}
	out := make([]float64, k)
	first := r.n - k
	for i := 0; i < k; i++ {
		out[i] = r.buf[(r.start+first+i)%len(r.buf)]
	}
	return out
}
