package server

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// TestListAgainstSlice drives List and a plain slice with the same random
// operations and requires identical contents after each one.
func TestListAgainstSlice(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var l List
	var model []string
	for step := 0; step < 20000; step++ {
		v := strconv.Itoa(r.IntN(20))
		switch op := r.IntN(9); op {
		case 0, 1:
			l.PushFront(v)
			model = append([]string{v}, model...)
		case 2, 3:
			l.PushBack(v)
			model = append(model, v)
		case 4:
			got, ok := l.PopFront()
			if ok != (len(model) > 0) || (ok && got != model[0]) {
				t.Fatalf("step %d: PopFront = %q %v, model %v", step, got, ok, model)
			}
			if ok {
				model = model[1:]
			}
		case 5:
			got, ok := l.PopBack()
			if ok != (len(model) > 0) || (ok && got != model[len(model)-1]) {
				t.Fatalf("step %d: PopBack = %q %v, model %v", step, got, ok, model)
			}
			if ok {
				model = model[:len(model)-1]
			}
		case 6:
			count := r.IntN(5) - 2
			n := l.Remove(v, count)
			want := 0
			if count >= 0 {
				var out []string
				for _, e := range model {
					if e == v && (count == 0 || want < count) {
						want++
						continue
					}
					out = append(out, e)
				}
				model = out
			} else {
				for i := len(model) - 1; i >= 0 && want < -count; i-- {
					if model[i] == v {
						model = slices.Delete(model, i, i+1)
						want++
					}
				}
			}
			if n != want {
				t.Fatalf("step %d: Remove(%q,%d) = %d, want %d", step, v, count, n, want)
			}
		case 7:
			pivot := strconv.Itoa(r.IntN(20))
			before := r.IntN(2) == 0
			i := slices.Index(model, pivot)
			if got := l.Insert(pivot, v, before); got != (i >= 0) {
				t.Fatalf("step %d: Insert found=%v, want %v", step, got, i >= 0)
			}
			if i >= 0 {
				if !before {
					i++
				}
				model = slices.Insert(model, i, v)
			}
		case 8:
			if len(model) > 0 && r.IntN(10) == 0 {
				start, stop := r.IntN(len(model)), r.IntN(len(model))
				l.Trim(start, stop)
				if start > stop {
					model = nil
				} else {
					model = slices.Clone(model[start : stop+1])
				}
			} else if len(model) > 0 {
				i := r.IntN(len(model))
				l.Set(i, v)
				model[i] = v
			}
		}
		if l.Len() != len(model) {
			t.Fatalf("step %d: Len = %d, want %d", step, l.Len(), len(model))
		}
		if step%97 == 0 {
			if got := l.Values(); !slices.Equal(got, model) && !(len(got) == 0 && len(model) == 0) {
				t.Fatalf("step %d: values %v, want %v", step, got, model)
			}
			sum := 0
			for _, v := range model {
				sum += len(v)
			}
			if l.bytes != sum {
				t.Fatalf("step %d: tracked bytes %d, want %d", step, l.bytes, sum)
			}
			for i := range model {
				if l.Index(i) != model[i] {
					t.Fatalf("step %d: Index(%d) = %q, want %q", step, i, l.Index(i), model[i])
				}
			}
		}
	}
}

func TestListRangeReverse(t *testing.T) {
	var l List
	for i := 0; i < 10; i++ {
		l.PushFront(strconv.Itoa(i)) // 9 8 7 ... 0, head wrapped around
	}
	var fwd, rev []string
	l.Range(2, 5, func(v string) { fwd = append(fwd, v) })
	l.RangeReverse(2, 5, func(v string) { rev = append(rev, v) })
	if !slices.Equal(fwd, []string{"7", "6", "5", "4"}) || !slices.Equal(rev, []string{"4", "5", "6", "7"}) {
		t.Fatalf("Range = %v, RangeReverse = %v", fwd, rev)
	}
}
