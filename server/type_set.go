package server

import (
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
)

// The ...Bytes methods take a command argument as is and only allocate a
// string when a member is actually stored: redis-benchmark's SADD, for one,
// adds the same member over and over.

// A set of up to set-max-intset-entries integers (Tuning) is kept as a
// sorted array of int64, so SMEMBERS returns it in ascending order exactly
// like Redis's intset encoding.

// Set is the value of a Redis set key. While every member is a canonical
// 64-bit integer and there are few of them it is a sorted []int64 (Redis's
// intset). Otherwise it is a dense slice of members plus a map from member to
// its index in the slice: the map answers SISMEMBER in O(1) and the slice lets
// SPOP and SRANDMEMBER pick uniformly at random in O(1), which a Go map
// alone cannot.
type Set struct {
	ints    []int64 // intset encoding, sorted; used while idx == nil
	members []string
	idx     map[string]int
	bytes   int     // sum of member lengths in the general encoding
	lim     *Tuning // the server's thresholds (nil: Redis's defaults)
}

func (s *Set) limits() *Tuning {
	if s.lim == nil {
		return &defaultTuning
	}
	return s.lim
}

// memUsage approximates the bytes the set holds.
func (s *Set) memUsage() int {
	if s.idx == nil {
		return 8*cap(s.ints) + 48
	}
	return s.bytes + 72*len(s.members) + 48
}

// parseSetInt reports whether m is an integer in the canonical form
// Redis's string2ll accepts (no sign on zero, no leading zeros, no spaces,
// fits in int64), which is what makes it eligible for the intset encoding.
func parseSetInt[T ~string | ~[]byte](m T) (int64, bool) { return parseRedisInt(m) }

// Len returns the number of members.
func (s *Set) Len() int {
	if s.idx != nil {
		return len(s.members)
	}
	return len(s.ints)
}

func (s *Set) intPos(v int64) (int, bool) {
	i := sort.Search(len(s.ints), func(i int) bool { return s.ints[i] >= v })
	return i, i < len(s.ints) && s.ints[i] == v
}

// toHash converts the intset encoding to the general one.
func (s *Set) toHash(extra int) {
	s.members = make([]string, 0, len(s.ints)+extra)
	s.idx = make(map[string]int, len(s.ints)+extra)
	for _, v := range s.ints {
		m := strconv.FormatInt(v, 10)
		s.idx[m] = len(s.members)
		s.members = append(s.members, m)
		s.bytes += len(m)
	}
	s.ints = nil
}

// Add inserts m and reports whether it was not there yet.
func (s *Set) Add(m string) bool {
	if s.idx == nil {
		if v, ok := parseSetInt(m); ok {
			i, found := s.intPos(v)
			if found {
				return false
			}
			if int64(len(s.ints)) < s.limits().SetMaxIntsetEntries {
				s.ints = append(s.ints, 0)
				copy(s.ints[i+1:], s.ints[i:])
				s.ints[i] = v
				return true
			}
		}
		s.toHash(1)
	}
	if _, ok := s.idx[m]; ok {
		return false
	}
	s.idx[m] = len(s.members)
	s.members = append(s.members, m)
	s.bytes += len(m)
	return true
}

// AddBytes is Add for an argument slice; it copies b only when storing it.
func (s *Set) AddBytes(b []byte) bool {
	if s.HasBytes(b) {
		return false
	}
	return s.Add(string(b))
}

// HasBytes is Has without converting b.
func (s *Set) HasBytes(b []byte) bool {
	if s.idx == nil {
		v, ok := parseSetInt(b)
		if !ok {
			return false
		}
		_, found := s.intPos(v)
		return found
	}
	_, ok := s.idx[string(b)]
	return ok
}

// RemoveBytes is Remove without converting b unless it is a member.
func (s *Set) RemoveBytes(b []byte) bool {
	if !s.HasBytes(b) {
		return false
	}
	return s.Remove(string(b))
}

// Has reports whether m is a member.
func (s *Set) Has(m string) bool {
	if s.idx == nil {
		v, ok := parseSetInt(m)
		if !ok {
			return false
		}
		_, found := s.intPos(v)
		return found
	}
	_, ok := s.idx[m]
	return ok
}

// Remove deletes m and reports whether it was a member.
func (s *Set) Remove(m string) bool {
	if s.idx == nil {
		v, ok := parseSetInt(m)
		if !ok {
			return false
		}
		i, found := s.intPos(v)
		if !found {
			return false
		}
		s.ints = append(s.ints[:i], s.ints[i+1:]...)
		return true
	}
	i, ok := s.idx[m]
	if !ok {
		return false
	}
	s.removeAt(i)
	return true
}

// removeAt deletes members[i] by moving the last member into its place.
func (s *Set) removeAt(i int) {
	last := len(s.members) - 1
	s.bytes -= len(s.members[i])
	delete(s.idx, s.members[i])
	if i != last {
		s.members[i] = s.members[last]
		s.idx[s.members[i]] = i
	}
	s.members[last] = ""
	s.members = s.members[:last]
}

// member returns the i-th member in the set's internal order.
func (s *Set) member(i int) string {
	if s.idx == nil {
		return strconv.FormatInt(s.ints[i], 10)
	}
	return s.members[i]
}

// Each calls fn for every member until fn returns false: ascending for an
// intset, unspecified otherwise.
func (s *Set) Each(fn func(m string) bool) {
	n := s.Len()
	for i := 0; i < n; i++ {
		if !fn(s.member(i)) {
			return
		}
	}
}

// Members returns all members (see Each for the order).
func (s *Set) Members() []string {
	out := make([]string, 0, s.Len())
	s.Each(func(m string) bool { out = append(out, m); return true })
	return out
}

// Random returns a uniformly chosen member; the set must not be empty.
func (s *Set) Random() string {
	return s.member(rand.IntN(s.Len()))
}

// Pop removes and returns a uniformly chosen member; the set must not be
// empty.
func (s *Set) Pop() string {
	i := rand.IntN(s.Len())
	if s.idx == nil {
		v := s.ints[i]
		s.ints = append(s.ints[:i], s.ints[i+1:]...)
		return strconv.FormatInt(v, 10)
	}
	m := s.members[i]
	s.removeAt(i)
	return m
}

// RandomDistinct returns min(count, Len()) distinct members chosen at random
// (SRANDMEMBER with a positive count).
func (s *Set) RandomDistinct(count int) []string {
	n := s.Len()
	if count >= n {
		return s.Members()
	}
	out := make([]string, 0, count)
	if count*4 < n {
		// Few of many: draw indexes and skip repeats, O(count).
		seen := make(map[int]struct{}, count)
		for len(out) < count {
			i := rand.IntN(n)
			if _, dup := seen[i]; dup {
				continue
			}
			seen[i] = struct{}{}
			out = append(out, s.member(i))
		}
		return out
	}
	// Many of few: partial Fisher-Yates over the indexes, O(n).
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	for i := 0; i < count; i++ {
		j := i + rand.IntN(n-i)
		perm[i], perm[j] = perm[j], perm[i]
		out = append(out, s.member(perm[i]))
	}
	return out
}

// clone returns an independent copy (COPY).
func (s *Set) clone() *Set {
	c := &Set{ints: slices.Clone(s.ints), members: slices.Clone(s.members), bytes: s.bytes, lim: s.lim}
	if s.idx != nil {
		c.idx = maps.Clone(s.idx)
	}
	return c
}
