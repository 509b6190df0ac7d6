package server

// List is the value of a Redis list key: a growable ring buffer of strings.
// A ring buffer gives O(1) pushes and pops at both ends (LPUSH/RPOP queues,
// the benchmark's LPUSH/LPOP/RPOP tests) and O(1) LINDEX/LSET, with one
// allocation per growth instead of one per element as a linked list would.
type List struct {
	buf   []string
	head  int // index in buf of element 0
	n     int
	bytes int // sum of the elements' lengths, for memUsage
}

// memUsage approximates the bytes the list holds: element data plus one
// string header per slot of the ring buffer.
func (l *List) memUsage() int { return l.bytes + 16*len(l.buf) + 48 }

// Len returns the number of elements.
func (l *List) Len() int { return l.n }

// slot maps a logical index 0..n-1 to an index in buf.
func (l *List) slot(i int) int {
	j := l.head + i
	if j >= len(l.buf) {
		j -= len(l.buf)
	}
	return j
}

func (l *List) grow() {
	if l.n < len(l.buf) {
		return
	}
	size := 2 * len(l.buf)
	if size < 4 {
		size = 4
	}
	nb := make([]string, size)
	l.copyTo(nb)
	l.buf = nb
	l.head = 0
}

// copyTo copies the elements in order to dst, which must hold l.n strings.
func (l *List) copyTo(dst []string) {
	if l.n == 0 {
		return
	}
	end := l.head + l.n
	if end <= len(l.buf) {
		copy(dst, l.buf[l.head:end])
		return
	}
	k := copy(dst, l.buf[l.head:])
	copy(dst[k:], l.buf[:end-len(l.buf)])
}

// shrink releases memory after many pops so a drained queue does not keep
// its peak size forever.
func (l *List) shrink() {
	if len(l.buf) > 64 && l.n < len(l.buf)/4 {
		nb := make([]string, len(l.buf)/2)
		l.copyTo(nb)
		l.buf = nb
		l.head = 0
	}
}

// PushFront inserts v before element 0.
func (l *List) PushFront(v string) {
	l.grow()
	l.head--
	if l.head < 0 {
		l.head += len(l.buf)
	}
	l.buf[l.head] = v
	l.n++
	l.bytes += len(v)
}

// PushBack appends v after the last element.
func (l *List) PushBack(v string) {
	l.grow()
	l.buf[l.slot(l.n)] = v
	l.n++
	l.bytes += len(v)
}

// PopFront removes and returns element 0; ok is false when the list is empty.
func (l *List) PopFront() (v string, ok bool) {
	if l.n == 0 {
		return "", false
	}
	v = l.buf[l.head]
	l.bytes -= len(v)
	l.buf[l.head] = ""
	l.head = l.slot(1)
	l.n--
	if l.n == 0 {
		l.head = 0
	}
	l.shrink()
	return v, true
}

// PopBack removes and returns the last element; ok is false when empty.
func (l *List) PopBack() (v string, ok bool) {
	if l.n == 0 {
		return "", false
	}
	j := l.slot(l.n - 1)
	v = l.buf[j]
	l.bytes -= len(v)
	l.buf[j] = ""
	l.n--
	if l.n == 0 {
		l.head = 0
	}
	l.shrink()
	return v, true
}

// Index returns element i (0-based, 0 <= i < Len()).
func (l *List) Index(i int) string { return l.buf[l.slot(i)] }

// Set replaces element i (0 <= i < Len()).
func (l *List) Set(i int, v string) {
	j := l.slot(i)
	l.bytes += len(v) - len(l.buf[j])
	l.buf[j] = v
}

// Range calls fn for elements start..stop inclusive (already clamped to
// 0 <= start <= stop < Len()), in order.
func (l *List) Range(start, stop int, fn func(v string)) {
	for i := start; i <= stop; i++ {
		fn(l.buf[l.slot(i)])
	}
}

// RangeReverse calls fn for elements stop..start, from the tail towards the
// head (0 <= start <= stop < Len()).
func (l *List) RangeReverse(start, stop int, fn func(v string)) {
	for i := stop; i >= start; i-- {
		fn(l.buf[l.slot(i)])
	}
}

// Trim keeps only elements start..stop inclusive; start > stop or an empty
// range empties the list.
func (l *List) Trim(start, stop int) {
	if start > stop || start >= l.n || stop < 0 {
		l.Clear()
		return
	}
	if start < 0 {
		start = 0
	}
	if stop >= l.n {
		stop = l.n - 1
	}
	keep := stop - start + 1
	nb := make([]string, keep)
	for i := 0; i < keep; i++ {
		nb[i] = l.buf[l.slot(start+i)]
	}
	l.rebuild(nb)
}

// Clear removes every element.
func (l *List) Clear() { l.buf, l.head, l.n, l.bytes = nil, 0, 0, 0 }

// rebuild replaces the contents with vals (used by the O(n) editing
// operations, which are rare next to pushes and pops).
func (l *List) rebuild(vals []string) {
	l.buf, l.head, l.n = vals, 0, len(vals)
	l.bytes = 0
	for _, v := range vals {
		l.bytes += len(v)
	}
	if len(l.buf) == 0 {
		l.buf = nil
	}
}

// Remove deletes occurrences of v like LREM: count > 0 removes the first
// count from the head, count < 0 the first |count| from the tail, 0 all.
// It returns how many were removed.
func (l *List) Remove(v string, count int) int {
	vals := make([]string, l.n)
	l.copyTo(vals)
	removed := 0
	if count >= 0 {
		out := vals[:0]
		for _, e := range vals {
			if e == v && (count == 0 || removed < count) {
				removed++
				continue
			}
			out = append(out, e)
		}
		vals = out
	} else {
		limit := -count
		keep := make([]bool, len(vals))
		for i := len(vals) - 1; i >= 0; i-- {
			if vals[i] == v && removed < limit {
				removed++
				continue
			}
			keep[i] = true
		}
		out := vals[:0]
		for i, e := range vals {
			if keep[i] {
				out = append(out, e)
			}
		}
		vals = out
	}
	if removed > 0 {
		clear(vals[len(vals):cap(vals)])
		l.rebuild(vals)
	}
	return removed
}

// Insert puts v before (or after) the first element equal to pivot, like
// LINSERT. It reports false when pivot is not in the list.
func (l *List) Insert(pivot, v string, before bool) bool {
	at := -1
	for i := 0; i < l.n; i++ {
		if l.buf[l.slot(i)] == pivot {
			at = i
			break
		}
	}
	if at < 0 {
		return false
	}
	if !before {
		at++
	}
	vals := make([]string, l.n+1, l.n+1+l.n/4)
	l.copyTo(vals)
	copy(vals[at+1:], vals[at:l.n])
	vals[at] = v
	l.rebuild(vals[:cap(vals)][:l.n+1])
	// rebuild took len; keep the spare capacity usable by later pushes.
	l.buf = l.buf[:cap(l.buf)]
	return true
}

// Values returns a copy of all elements in order (tests and debugging).
func (l *List) Values() []string {
	vals := make([]string, l.n)
	l.copyTo(vals)
	return vals
}

// clone returns an independent copy (COPY).
func (l *List) clone() *List {
	c := &List{}
	c.rebuild(l.Values())
	return c
}

// Pop removes and returns the element at the left (head) or right end;
// ok is false when the list is empty.
func (l *List) Pop(left bool) (string, bool) {
	if left {
		return l.PopFront()
	}
	return l.PopBack()
}

// Push adds v at the left (head) or right end.
func (l *List) Push(v string, left bool) {
	if left {
		l.PushFront(v)
	} else {
		l.PushBack(v)
	}
}

// PopN removes and returns up to count elements from one end, in the
// order they were popped (LPOP/RPOP/LMPOP COUNT).
func (l *List) PopN(count int, left bool) []string {
	out := make([]string, 0, min(count, l.Len()))
	for len(out) < count {
		v, ok := l.Pop(left)
		if !ok {
			break
		}
		out = append(out, v)
	}
	return out
}

// listMove pops one element from src's end and pushes it onto dst's (LMOVE,
// RPOPLPUSH, and BLMOVE once unblocked); src and dst may be the same list
// (a rotation). It reports false when src is empty.
func listMove(src, dst *List, fromLeft, toLeft bool) (string, bool) {
	v, ok := src.Pop(fromLeft)
	if ok {
		dst.Push(v, toLeft)
	}
	return v, ok
}
