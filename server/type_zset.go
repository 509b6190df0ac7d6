package server

import (
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
)

// Skiplist parameters from Redis (server.h): at most 32 levels, each level
// kept with probability 1/4.
const (
	zslMaxLevel = 32
	zslP        = 0.25
)

// ZSet is the value of a Redis sorted set key, in Redis's two encodings.
// While small (at most 128 members of at most 64 bytes, Redis's
// zset-max-listpack-*) it is one slice sorted by (score, member), scanned
// linearly like Redis's listpack: a fraction of the memory of the big form.
// Once big it is a map from member to skiplist node (ZSCORE and ZADD's
// existence test in O(1)) plus a skiplist ordered by (score, member) with
// spans, which gives O(log n) inserts, deletes, ranks and range starts, the
// structure Redis uses (t_zset.c). It never converts back, as in Redis.
type ZSet struct {
	small []ZMember // the small encoding, sorted
	// b is the big encoding, nil while small. The encoding also decides
	// the sign of a zero score (see normScore).
	b     *zsetBig
	bytes int     // sum of member lengths, for memUsage
	lim   *Tuning // the server's thresholds (nil: Redis's defaults)
}

// zsetBig is the big encoding, allocated on conversion so that small sets
// do not carry its header.
type zsetBig struct {
	dict map[string]*zslNode // member -> its node
	zsl  zskiplist
}

// isBig reports whether the set uses the skiplist encoding.
func (z *ZSet) isBig() bool { return z.b != nil }

// limits returns the server's thresholds (zset-max-listpack-entries and
// -value), or Redis's defaults for a set made without a server.
func (z *ZSet) limits() *Tuning {
	if z.lim == nil {
		return &defaultTuning
	}
	return z.lim
}

// memUsage approximates the bytes the sorted set holds: member data plus,
// per member, a slice element (small) or a skiplist node of about 1.33
// levels and a map slot (big).
func (z *ZSet) memUsage() int {
	if z.isBig() {
		return z.bytes + 120*len(z.b.dict) + 600
	}
	return z.bytes + 24*cap(z.small) + 64
}

type zslLevel struct {
	forward *zslNode
	span    int // number of elements skipped by following forward
}

type zslNode struct {
	member   string
	score    float64
	backward *zslNode
	level    []zslLevel
}

type zskiplist struct {
	header *zslNode
	tail   *zslNode
	length int
	level  int
}

// NewZSet returns an empty sorted set (small encoding).
func NewZSet() *ZSet { return &ZSet{} }

// toBig converts the small encoding to the skiplist and map.
func (z *ZSet) toBig() {
	z.b = &zsetBig{
		dict: make(map[string]*zslNode, len(z.small)+1),
		zsl:  zskiplist{header: &zslNode{level: make([]zslLevel, zslMaxLevel)}, level: 1},
	}
	for _, m := range z.small {
		z.b.dict[m.Member] = z.b.zsl.insert(m.Score, m.Member)
	}
	z.small = nil
}

// zslLess orders nodes by score, then member bytes, as Redis does.
func zslLess(s1 float64, m1 string, s2 float64, m2 string) bool {
	return s1 < s2 || (s1 == s2 && m1 < m2)
}

func zslRandomLevel() int {
	level := 1
	for level < zslMaxLevel && rand.Float64() < zslP {
		level++
	}
	return level
}

func (zsl *zskiplist) insert(score float64, member string) *zslNode {
	var update [zslMaxLevel]*zslNode
	var rank [zslMaxLevel]int
	x := zsl.header
	for i := zsl.level - 1; i >= 0; i-- {
		if i == zsl.level-1 {
			rank[i] = 0
		} else {
			rank[i] = rank[i+1]
		}
		for x.level[i].forward != nil && zslLess(x.level[i].forward.score, x.level[i].forward.member, score, member) {
			rank[i] += x.level[i].span
			x = x.level[i].forward
		}
		update[i] = x
	}
	level := zslRandomLevel()
	if level > zsl.level {
		for i := zsl.level; i < level; i++ {
			rank[i] = 0
			update[i] = zsl.header
			update[i].level[i].span = zsl.length
		}
		zsl.level = level
	}
	x = &zslNode{member: member, score: score, level: make([]zslLevel, level)}
	for i := 0; i < level; i++ {
		x.level[i].forward = update[i].level[i].forward
		update[i].level[i].forward = x
		x.level[i].span = update[i].level[i].span - (rank[0] - rank[i])
		update[i].level[i].span = (rank[0] - rank[i]) + 1
	}
	for i := level; i < zsl.level; i++ {
		update[i].level[i].span++
	}
	if update[0] != zsl.header {
		x.backward = update[0]
	}
	if x.level[0].forward != nil {
		x.level[0].forward.backward = x
	} else {
		zsl.tail = x
	}
	zsl.length++
	return x
}

func (zsl *zskiplist) deleteNode(x *zslNode, update *[zslMaxLevel]*zslNode) {
	for i := 0; i < zsl.level; i++ {
		if update[i].level[i].forward == x {
			update[i].level[i].span += x.level[i].span - 1
			update[i].level[i].forward = x.level[i].forward
		} else {
			update[i].level[i].span--
		}
	}
	if x.level[0].forward != nil {
		x.level[0].forward.backward = x.backward
	} else {
		zsl.tail = x.backward
	}
	for zsl.level > 1 && zsl.header.level[zsl.level-1].forward == nil {
		zsl.level--
	}
	zsl.length--
}

// delete removes the node with this exact score and member.
func (zsl *zskiplist) delete(score float64, member string) bool {
	var update [zslMaxLevel]*zslNode
	x := zsl.header
	for i := zsl.level - 1; i >= 0; i-- {
		for x.level[i].forward != nil && zslLess(x.level[i].forward.score, x.level[i].forward.member, score, member) {
			x = x.level[i].forward
		}
		update[i] = x
	}
	x = x.level[0].forward
	if x != nil && x.score == score && x.member == member {
		zsl.deleteNode(x, &update)
		return true
	}
	return false
}

// rank returns the 1-based rank of (score, member), or 0 if absent.
func (zsl *zskiplist) rank(score float64, member string) int {
	r := 0
	x := zsl.header
	for i := zsl.level - 1; i >= 0; i-- {
		for x.level[i].forward != nil && !zslLess(score, member, x.level[i].forward.score, x.level[i].forward.member) {
			r += x.level[i].span
			x = x.level[i].forward
		}
		if x != zsl.header && x.member == member {
			return r
		}
	}
	return 0
}

// byRank returns the node at 1-based rank r, or nil.
func (zsl *zskiplist) byRank(r int) *zslNode {
	traversed := 0
	x := zsl.header
	for i := zsl.level - 1; i >= 0; i-- {
		for x.level[i].forward != nil && traversed+x.level[i].span <= r {
			traversed += x.level[i].span
			x = x.level[i].forward
		}
		if traversed == r {
			return x
		}
	}
	return nil
}

// ScoreRange is a score interval as ZRANGEBYSCORE parses it: "(" makes a
// bound exclusive.
type ScoreRange struct {
	Min, Max     float64
	MinEx, MaxEx bool
}

func (r ScoreRange) aboveMin(v float64) bool {
	if r.MinEx {
		return v > r.Min
	}
	return v >= r.Min
}

func (r ScoreRange) belowMax(v float64) bool {
	if r.MaxEx {
		return v < r.Max
	}
	return v <= r.Max
}

// empty reports whether no score can be in the range.
func (r ScoreRange) empty() bool {
	return r.Min > r.Max || (r.Min == r.Max && (r.MinEx || r.MaxEx))
}

// firstInRange returns the first node with a score in r, or nil.
func (zsl *zskiplist) firstInRange(r ScoreRange) *zslNode {
	if r.empty() {
		return nil
	}
	x := zsl.header
	for i := zsl.level - 1; i >= 0; i-- {
		for x.level[i].forward != nil && !r.aboveMin(x.level[i].forward.score) {
			x = x.level[i].forward
		}
	}
	x = x.level[0].forward
	if x == nil || !r.belowMax(x.score) {
		return nil
	}
	return x
}

// lastInRange returns the last node with a score in r, or nil.
func (zsl *zskiplist) lastInRange(r ScoreRange) *zslNode {
	if r.empty() {
		return nil
	}
	x := zsl.header
	for i := zsl.level - 1; i >= 0; i-- {
		for x.level[i].forward != nil && r.belowMax(x.level[i].forward.score) {
			x = x.level[i].forward
		}
	}
	if x == zsl.header || !r.aboveMin(x.score) {
		return nil
	}
	return x
}

// LexRange is a member interval as ZRANGE BYLEX parses it: "[" inclusive,
// "(" exclusive, and "-" / "+" the smallest and largest possible strings
// (Inf -1 / +1; either end may be either, as in Redis).
type LexRange struct {
	Min, Max       string
	MinInf, MaxInf int // -1: "-", +1: "+", 0: the string
	MinEx, MaxEx   bool
}

// empty reports whether no string can be in the range, comparing the
// bounds as Redis's sdscmplex does ("-" below and "+" above everything).
func (r LexRange) empty() bool {
	var cmp int
	switch {
	case r.MinInf != 0 && r.MinInf == r.MaxInf:
		cmp = 0
	case r.MinInf == -1 || r.MaxInf == 1:
		cmp = -1
	case r.MinInf == 1 || r.MaxInf == -1:
		cmp = 1
	default:
		cmp = strings.Compare(r.Min, r.Max)
	}
	return cmp > 0 || cmp == 0 && (r.MinEx || r.MaxEx)
}

func (r LexRange) aboveMin(m string) bool {
	switch r.MinInf {
	case -1:
		return true
	case 1:
		return false
	}
	if r.MinEx {
		return m > r.Min
	}
	return m >= r.Min
}

func (r LexRange) belowMax(m string) bool {
	switch r.MaxInf {
	case 1:
		return true
	case -1:
		return false
	}
	if r.MaxEx {
		return m < r.Max
	}
	return m <= r.Max
}

func (zsl *zskiplist) firstInLex(r LexRange) *zslNode {
	x := zsl.header
	for i := zsl.level - 1; i >= 0; i-- {
		for x.level[i].forward != nil && !r.aboveMin(x.level[i].forward.member) {
			x = x.level[i].forward
		}
	}
	x = x.level[0].forward
	if x == nil || !r.belowMax(x.member) {
		return nil
	}
	return x
}

func (zsl *zskiplist) lastInLex(r LexRange) *zslNode {
	x := zsl.header
	for i := zsl.level - 1; i >= 0; i-- {
		for x.level[i].forward != nil && r.belowMax(x.level[i].forward.member) {
			x = x.level[i].forward
		}
	}
	if x == zsl.header || !r.aboveMin(x.member) {
		return nil
	}
	return x
}

// Len returns the number of members.
func (z *ZSet) Len() int {
	if z.isBig() {
		return len(z.b.dict)
	}
	return len(z.small)
}

// smallFind returns the index of member in the small encoding, or -1.
func smallFind[T ~string | ~[]byte](z *ZSet, member T) int {
	for i := range z.small {
		if z.small[i].Member == string(member) {
			return i
		}
	}
	return -1
}

// smallInsertAt returns where (score, member) goes in the small encoding.
func (z *ZSet) smallInsertAt(score float64, member string) int {
	return sort.Search(len(z.small), func(i int) bool {
		return !zslLess(z.small[i].Score, z.small[i].Member, score, member)
	})
}

func (z *ZSet) smallInsert(m ZMember) {
	i := z.smallInsertAt(m.Score, m.Member)
	if len(z.small) == cap(z.small) {
		// Grow by an eighth, not double: small sets are many and stay
		// small (Redis's listpack grows by exactly what it needs).
		ns := make([]ZMember, len(z.small), len(z.small)+1+len(z.small)/8)
		copy(ns, z.small)
		z.small = ns
	}
	z.small = slices.Insert(z.small, i, m)
}

func (z *ZSet) smallDelete(i int) {
	z.small = slices.Delete(z.small, i, i+1)
}

// Score returns the score of member.
func (z *ZSet) Score(member string) (float64, bool) { return zsetScore(z, member) }

// ScoreBytes is Score for an argument slice, without allocating.
func (z *ZSet) ScoreBytes(member []byte) (float64, bool) { return zsetScore(z, member) }

func zsetScore[T ~string | ~[]byte](z *ZSet, member T) (float64, bool) {
	if !z.isBig() {
		if i := smallFind(z, member); i >= 0 {
			return z.small[i].Score, true
		}
		return 0, false
	}
	n, ok := z.b.dict[string(member)]
	if !ok {
		return 0, false
	}
	return n.score, true
}

// normScore applies Redis's encoding-dependent sign of zero.
func (z *ZSet) normScore(score float64) float64 {
	if score == 0 && !z.isBig() {
		// Redis's listpack encoding stores scores as text, where -0
		// becomes "0"; its skiplist keeps the double's sign.
		return 0
	}
	return score
}

// Set adds member with score or moves it to score; it reports whether the
// member is new. score must not be NaN.
func (z *ZSet) Set(member string, score float64) bool {
	if setExisting(z, member, score) {
		return false
	}
	if lim := z.limits(); !z.isBig() && (int64(len(z.small)+1) > lim.ZSetMaxListpackEntries || int64(len(member)) > lim.ZSetMaxListpackValue) {
		// Like Redis, convert before inserting the element that does
		// not fit, so its score keeps the skiplist's sign of zero.
		z.toBig()
	}
	score = z.normScore(score)
	if z.isBig() {
		z.b.dict[member] = z.b.zsl.insert(score, member)
	} else {
		z.smallInsert(ZMember{member, score})
	}
	z.bytes += len(member)
	return true
}

// SetBytes is Set for an argument slice: it allocates the member only when
// adding it (redis-benchmark's ZADD re-adds one member).
func (z *ZSet) SetBytes(member []byte, score float64) bool {
	if setExisting(z, member, score) {
		return false
	}
	return z.Set(string(member), score)
}

// setExisting moves an existing member to score and reports whether the
// member existed.
func setExisting[T ~string | ~[]byte](z *ZSet, member T, score float64) bool {
	if !z.isBig() {
		i := smallFind(z, member)
		if i < 0 {
			return false
		}
		score = z.normScore(score)
		if m := z.small[i]; m.Score != score {
			z.smallDelete(i)
			z.smallInsert(ZMember{m.Member, score})
		}
		return true
	}
	n, ok := z.b.dict[string(member)]
	if ok {
		z.update(n, score)
	}
	return ok
}

// update moves node n to score, in place when its neighbours still bracket
// the new score (Redis's zslUpdateScore), else by re-inserting it.
func (z *ZSet) update(n *zslNode, score float64) {
	if n.score == score {
		return
	}
	if (n.backward == nil || n.backward.score < score) && (n.level[0].forward == nil || n.level[0].forward.score > score) {
		n.score = score
		return
	}
	z.b.zsl.delete(n.score, n.member)
	z.b.dict[n.member] = z.b.zsl.insert(score, n.member)
}

// Remove deletes member and reports whether it was there.
func (z *ZSet) Remove(member string) bool { return zsetRemove(z, member) }

// RemoveBytes is Remove for an argument slice, without allocating.
func (z *ZSet) RemoveBytes(member []byte) bool { return zsetRemove(z, member) }

func zsetRemove[T ~string | ~[]byte](z *ZSet, member T) bool {
	if !z.isBig() {
		i := smallFind(z, member)
		if i < 0 {
			return false
		}
		z.bytes -= len(z.small[i].Member)
		z.smallDelete(i)
		return true
	}
	n, ok := z.b.dict[string(member)]
	if !ok {
		return false
	}
	delete(z.b.dict, n.member)
	z.b.zsl.delete(n.score, n.member)
	z.bytes -= len(n.member)
	return true
}

// Rank returns the 0-based rank of member in ascending order.
func (z *ZSet) Rank(member string) (int, bool) { return zsetRank(z, member) }

// RankBytes is Rank for an argument slice, without allocating.
func (z *ZSet) RankBytes(member []byte) (int, bool) { return zsetRank(z, member) }

func zsetRank[T ~string | ~[]byte](z *ZSet, member T) (int, bool) {
	if !z.isBig() {
		i := smallFind(z, member)
		return i, i >= 0
	}
	n, ok := z.b.dict[string(member)]
	if !ok {
		return 0, false
	}
	return z.b.zsl.rank(n.score, n.member) - 1, true
}

// ZMember is a member with its score, as ranges return them.
type ZMember struct {
	Member string
	Score  float64
}

// RangeByRank returns members with 0-based ranks start..stop inclusive
// (already clamped to the set), in descending order when rev (ranks then
// count from the highest score).
func (z *ZSet) RangeByRank(start, stop int, rev bool) []ZMember {
	if start > stop || start >= z.Len() {
		return nil
	}
	out := make([]ZMember, 0, stop-start+1)
	if !z.isBig() {
		n := len(z.small)
		for i := start; i <= stop && i < n; i++ {
			if rev {
				out = append(out, z.small[n-1-i])
			} else {
				out = append(out, z.small[i])
			}
		}
		return out
	}
	var x *zslNode
	if rev {
		x = z.b.zsl.byRank(z.b.zsl.length - start)
	} else {
		x = z.b.zsl.byRank(start + 1)
	}
	for n := stop - start + 1; n > 0 && x != nil; n-- {
		out = append(out, ZMember{x.member, x.score})
		if rev {
			x = x.backward
		} else {
			x = x.level[0].forward
		}
	}
	return out
}

// collectSmall walks the small encoding from index i (forward, or
// backward when rev), skipping offset members and returning at most limit
// (limit < 0: all) while in reports true.
func (z *ZSet) collectSmall(i int, rev bool, offset, limit int, in func(ZMember) bool) []ZMember {
	step := 1
	if rev {
		step = -1
	}
	if i < 0 {
		return nil
	}
	i += step * offset
	var out []ZMember
	for ; i >= 0 && i < len(z.small) && limit != 0 && in(z.small[i]); i += step {
		out = append(out, z.small[i])
		if limit > 0 {
			limit--
		}
	}
	return out
}

// RangeByScore returns members whose score is in r, skipping offset and
// returning at most limit (limit < 0: all), from the highest when rev.
func (z *ZSet) RangeByScore(r ScoreRange, rev bool, offset, limit int) []ZMember {
	if !z.isBig() {
		if r.empty() {
			return nil
		}
		n := len(z.small)
		if rev {
			// The last member not above max, if it is not below min.
			i := sort.Search(n, func(i int) bool { return !r.belowMax(z.small[i].Score) }) - 1
			if i < 0 || !r.aboveMin(z.small[i].Score) {
				return nil
			}
			return z.collectSmall(i, true, offset, limit, func(m ZMember) bool { return r.aboveMin(m.Score) })
		}
		i := sort.Search(n, func(i int) bool { return r.aboveMin(z.small[i].Score) })
		if i == n || !r.belowMax(z.small[i].Score) {
			return nil
		}
		return z.collectSmall(i, false, offset, limit, func(m ZMember) bool { return r.belowMax(m.Score) })
	}
	var x *zslNode
	if rev {
		x = z.b.zsl.lastInRange(r)
	} else {
		x = z.b.zsl.firstInRange(r)
	}
	return z.collect(x, rev, offset, limit, func(n *zslNode) bool {
		if rev {
			return r.aboveMin(n.score)
		}
		return r.belowMax(n.score)
	})
}

// RangeByLex returns members in r (meaningful when all scores are equal),
// with offset and limit as RangeByScore.
//
// Redis does not define the result when scores differ, but it is
// deterministic for small sets (a linear scan of the listpack after
// checking both ends), and clients see it, so it is reproduced: the same
// end checks, then a linear scan while the set is small and the skiplist
// descent (Redis's skiplist encoding) once it is big.
func (z *ZSet) RangeByLex(r LexRange, rev bool, offset, limit int) []ZMember {
	if r.empty() || z.Len() == 0 {
		return nil
	}
	if !z.isBig() {
		n := len(z.small)
		if !r.aboveMin(z.small[n-1].Member) || !r.belowMax(z.small[0].Member) {
			return nil
		}
		if rev {
			i := n - 1
			for i >= 0 && !r.belowMax(z.small[i].Member) {
				i--
			}
			if i < 0 || !r.aboveMin(z.small[i].Member) {
				return nil
			}
			return z.collectSmall(i, true, offset, limit, func(m ZMember) bool { return r.aboveMin(m.Member) })
		}
		i := 0
		for i < n && !r.aboveMin(z.small[i].Member) {
			i++
		}
		if i == n || !r.belowMax(z.small[i].Member) {
			return nil
		}
		return z.collectSmall(i, false, offset, limit, func(m ZMember) bool { return r.belowMax(m.Member) })
	}
	first, last := z.b.zsl.header.level[0].forward, z.b.zsl.tail
	if !r.aboveMin(last.member) || !r.belowMax(first.member) {
		return nil
	}
	var x *zslNode
	if rev {
		x = z.b.zsl.lastInLex(r)
	} else {
		x = z.b.zsl.firstInLex(r)
	}
	return z.collect(x, rev, offset, limit, func(n *zslNode) bool {
		if rev {
			return r.aboveMin(n.member)
		}
		return r.belowMax(n.member)
	})
}

func (z *ZSet) collect(x *zslNode, rev bool, offset, limit int, in func(*zslNode) bool) []ZMember {
	next := func(n *zslNode) *zslNode {
		if rev {
			return n.backward
		}
		return n.level[0].forward
	}
	for ; x != nil && offset > 0; offset-- {
		x = next(x)
	}
	var out []ZMember
	for ; x != nil && limit != 0 && in(x); x = next(x) {
		out = append(out, ZMember{x.member, x.score})
		if limit > 0 {
			limit--
		}
	}
	return out
}

// CountInRange returns how many scores are in r, in O(log n) via ranks.
func (z *ZSet) CountInRange(r ScoreRange) int {
	if !z.isBig() {
		n := 0
		for _, m := range z.small {
			if r.aboveMin(m.Score) && r.belowMax(m.Score) {
				n++
			}
		}
		return n
	}
	first := z.b.zsl.firstInRange(r)
	if first == nil {
		return 0
	}
	last := z.b.zsl.lastInRange(r)
	return z.b.zsl.rank(last.score, last.member) - z.b.zsl.rank(first.score, first.member) + 1
}

// Pop removes and returns up to count members with the lowest scores
// (the highest when max).
func (z *ZSet) Pop(count int, max bool) []ZMember {
	var out []ZMember
	if !z.isBig() {
		for ; count > 0 && len(z.small) > 0; count-- {
			i := 0
			if max {
				i = len(z.small) - 1
			}
			out = append(out, z.small[i])
			z.bytes -= len(z.small[i].Member)
			z.smallDelete(i)
		}
		return out
	}
	for ; count > 0 && z.b.zsl.length > 0; count-- {
		var x *zslNode
		if max {
			x = z.b.zsl.tail
		} else {
			x = z.b.zsl.header.level[0].forward
		}
		out = append(out, ZMember{x.member, x.score})
		z.Remove(x.member)
	}
	return out
}

// clone returns an independent copy (COPY), in the same encoding.
func (z *ZSet) clone() *ZSet {
	c := &ZSet{small: slices.Clone(z.small), bytes: z.bytes, lim: z.lim}
	if z.isBig() {
		c.b = &zsetBig{
			dict: make(map[string]*zslNode, len(z.b.dict)),
			zsl:  zskiplist{header: &zslNode{level: make([]zslLevel, zslMaxLevel)}, level: 1},
		}
		for x := z.b.zsl.header.level[0].forward; x != nil; x = x.level[0].forward {
			c.b.dict[x.member] = c.b.zsl.insert(x.score, x.member)
		}
	}
	return c
}
