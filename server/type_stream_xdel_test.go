package server

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestStreamDeleteAgainstModel runs random XADD, XDEL, exact trims and
// ranges on a Stream and on a sorted slice of IDs, checking that both agree
// on the length, on every range (both directions, with counts) and on the
// i-th entry, across node boundaries and through removed nodes.
func TestStreamDeleteAgainstModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	s := &Stream{}
	var model []StreamID
	next := uint64(1)
	id := func(ms uint64) StreamID { return StreamID{Ms: ms, Seq: 1} }
	for step := 0; step < 20000; step++ {
		switch op := rng.IntN(100); {
		case op < 55:
			s.Add(id(next), []string{"f", "v"})
			model = append(model, id(next))
			next++
		case op < 85 && len(model) > 0:
			// Delete a present ID, or one that is not there.
			var victim StreamID
			if rng.IntN(4) == 0 {
				victim = id(uint64(rng.Int64N(int64(next + 5))))
			} else {
				victim = model[rng.IntN(len(model))]
			}
			i, found := slices.BinarySearchFunc(model, victim, func(a, b StreamID) int {
				switch {
				case a.Less(b):
					return -1
				case b.Less(a):
					return 1
				}
				return 0
			})
			if got := s.Delete(victim); got != found {
				t.Fatalf("step %d: Delete(%v) = %v, want %v", step, victim, got, found)
			}
			if found {
				model = slices.Delete(model, i, i+1)
			}
		case op < 88 && len(model) > 0:
			keep := rng.IntN(len(model) + 1)
			if got := s.Trim(StreamTrim{MaxLen: int64(keep)}); got != int64(len(model)-keep) {
				t.Fatalf("step %d: Trim to %d removed %d, want %d", step, keep, got, len(model)-keep)
			}
			model = model[len(model)-keep:]
		case op < 90 && len(model) > 0:
			min := model[rng.IntN(len(model))]
			s.Trim(StreamTrim{ByMinID: true, MinID: min})
			i := 0
			for i < len(model) && model[i].Less(min) {
				i++
			}
			model = model[i:]
		}
		if s.Len() != len(model) {
			t.Fatalf("step %d: Len %d, model %d", step, s.Len(), len(model))
		}
		if step%97 != 0 || len(model) == 0 {
			continue
		}
		lo, hi := id(uint64(rng.Int64N(int64(next+1)))), id(uint64(rng.Int64N(int64(next+1))))
		if hi.Less(lo) {
			lo, hi = hi, lo
		}
		var want []StreamID
		for _, m := range model {
			if !m.Less(lo) && !hi.Less(m) {
				want = append(want, m)
			}
		}
		count := rng.IntN(10) - 1 // -1: all
		for _, rev := range []bool{false, true} {
			w := slices.Clone(want)
			if rev {
				slices.Reverse(w)
			}
			if count >= 0 && count < len(w) {
				w = w[:count]
			}
			got := s.Range(lo, hi, count, rev)
			if len(got) != len(w) && !(count == 0 && len(got) == 0) {
				t.Fatalf("step %d: Range(%v, %v, %d, rev %v) has %d entries, want %d", step, lo, hi, count, rev, len(got), len(w))
			}
			for k := range got {
				if got[k].ID != w[k] {
					t.Fatalf("step %d: Range(%v, %v, %d, rev %v)[%d] = %v, want %v", step, lo, hi, count, rev, k, got[k].ID, w[k])
				}
			}
		}
		i := rng.IntN(len(model))
		if got := s.idAt(i); got != model[i] {
			t.Fatalf("step %d: idAt(%d) = %v, want %v", step, i, got, model[i])
		}
	}
}
