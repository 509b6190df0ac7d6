package server

import (
	"math"
	"math/rand/v2"
	"strings"
)

// Skiplist parameters from Redis (server.h): at most 32 levels, each level
// kept with probability 1/4.
const (
	zslMaxLevel = 32
	zslP        = 0.25
)

// ZSet is the value of a Redis sorted set key: a map from member to score
// (ZSCORE, ZADD's existence test in O(1)) plus a skiplist ordered by
// (score, member) with spans, which gives O(log n) inserts, deletes, rank
// queries (ZRANK) and range starts (ZRANGE by rank or score), the same
// structure Redis uses (t_zset.c).
type ZSet struct {
	dict  map[string]*zslNode // member -> its node (score and canonical string)
	zsl   zskiplist
	bytes int // sum of member lengths, for memUsage
	// big is set once the set outgrows Redis's listpack thresholds; only
	// the sign of a zero score depends on it (see Set).
	big bool
}

// Redis's zset-max-listpack-entries and zset-max-listpack-value.
const (
	zsetMaxSmallEntries = 128
	zsetMaxSmallValue   = 64
)

// memUsage approximates the bytes the sorted set holds: member data, a
// skiplist node (about 1.33 levels on average) and a map slot per member.
func (z *ZSet) memUsage() int { return z.bytes + 120*len(z.dict) + 96 }

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

// NewZSet returns an empty sorted set.
func NewZSet() *ZSet {
	return &ZSet{
		dict: make(map[string]*zslNode),
		zsl:  zskiplist{header: &zslNode{level: make([]zslLevel, zslMaxLevel)}, level: 1},
	}
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
func (z *ZSet) Len() int { return len(z.dict) }

// Score returns the score of member.
func (z *ZSet) Score(member string) (float64, bool) { return zsetScore(z, member) }

// ScoreBytes is Score for an argument slice, without allocating.
func (z *ZSet) ScoreBytes(member []byte) (float64, bool) { return zsetScore(z, member) }

func zsetScore[T ~string | ~[]byte](z *ZSet, member T) (float64, bool) {
	n, ok := z.dict[string(member)]
	if !ok {
		return 0, false
	}
	return n.score, true
}

// normScore applies Redis's encoding-dependent sign of zero (see Set).
func (z *ZSet) normScore(score float64) float64 {
	if score == 0 && !z.big {
		// Redis's listpack encoding stores scores as text, where -0
		// becomes "0"; its skiplist keeps the double's sign.
		return 0
	}
	return score
}

// Set adds member with score or moves it to score; it reports whether the
// member is new. score must not be NaN.
func (z *ZSet) Set(member string, score float64) bool {
	if n, ok := z.dict[member]; ok {
		z.update(n, z.normScore(score))
		return false
	}
	if !z.big && (len(z.dict)+1 > zsetMaxSmallEntries || len(member) > zsetMaxSmallValue) {
		z.big = true
	}
	z.dict[member] = z.zsl.insert(z.normScore(score), member)
	z.bytes += len(member)
	return true
}

// SetBytes is Set for an argument slice: it allocates the member only when
// adding it (redis-benchmark's ZADD re-adds one member).
func (z *ZSet) SetBytes(member []byte, score float64) bool {
	if n, ok := z.dict[string(member)]; ok {
		z.update(n, z.normScore(score))
		return false
	}
	return z.Set(string(member), score)
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
	z.zsl.delete(n.score, n.member)
	z.dict[n.member] = z.zsl.insert(score, n.member)
}

// Remove deletes member and reports whether it was there.
func (z *ZSet) Remove(member string) bool { return zsetRemove(z, member) }

// RemoveBytes is Remove for an argument slice, without allocating.
func (z *ZSet) RemoveBytes(member []byte) bool { return zsetRemove(z, member) }

func zsetRemove[T ~string | ~[]byte](z *ZSet, member T) bool {
	n, ok := z.dict[string(member)]
	if !ok {
		return false
	}
	delete(z.dict, n.member)
	z.zsl.delete(n.score, n.member)
	z.bytes -= len(n.member)
	return true
}

// Rank returns the 0-based rank of member in ascending order.
func (z *ZSet) Rank(member string) (int, bool) { return zsetRank(z, member) }

// RankBytes is Rank for an argument slice, without allocating.
func (z *ZSet) RankBytes(member []byte) (int, bool) { return zsetRank(z, member) }

func zsetRank[T ~string | ~[]byte](z *ZSet, member T) (int, bool) {
	n, ok := z.dict[string(member)]
	if !ok {
		return 0, false
	}
	return z.zsl.rank(n.score, n.member) - 1, true
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
	var x *zslNode
	if rev {
		x = z.zsl.byRank(z.zsl.length - start)
	} else {
		x = z.zsl.byRank(start + 1)
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

// RangeByScore returns members whose score is in r, skipping offset and
// returning at most limit (limit < 0: all), from the highest when rev.
func (z *ZSet) RangeByScore(r ScoreRange, rev bool, offset, limit int) []ZMember {
	var x *zslNode
	if rev {
		x = z.zsl.lastInRange(r)
	} else {
		x = z.zsl.firstInRange(r)
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
	if r.empty() || z.zsl.length == 0 {
		return nil
	}
	first, last := z.zsl.header.level[0].forward, z.zsl.tail
	if !r.aboveMin(last.member) || !r.belowMax(first.member) {
		return nil
	}
	var x *zslNode
	switch {
	case z.big && rev:
		x = z.zsl.lastInLex(r)
	case z.big:
		x = z.zsl.firstInLex(r)
	case rev:
		for x = last; x != nil && !r.belowMax(x.member); x = x.backward {
		}
		if x != nil && !r.aboveMin(x.member) {
			x = nil
		}
	default:
		for x = first; x != nil && !r.aboveMin(x.member); x = x.level[0].forward {
		}
		if x != nil && !r.belowMax(x.member) {
			x = nil
		}
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
	first := z.zsl.firstInRange(r)
	if first == nil {
		return 0
	}
	last := z.zsl.lastInRange(r)
	return z.zsl.rank(last.score, last.member) - z.zsl.rank(first.score, first.member) + 1
}

// Pop removes and returns up to count members with the lowest scores
// (the highest when max).
func (z *ZSet) Pop(count int, max bool) []ZMember {
	var out []ZMember
	for ; count > 0 && z.zsl.length > 0; count-- {
		var x *zslNode
		if max {
			x = z.zsl.tail
		} else {
			x = z.zsl.header.level[0].forward
		}
		out = append(out, ZMember{x.member, x.score})
		z.Remove(x.member)
	}
	return out
}

// isValidScore reports whether v can be stored as a score (Redis rejects
// NaN; infinities are allowed).
func isValidScore(v float64) bool { return !math.IsNaN(v) }
