package server

import "math"

// Sorted set commands (t_zset.c), replies and errors as in Redis 7.0.
// Scores are doubles: RESP3 replies them as doubles, RESP2 as bulk strings
// printed with "%.17g"; WITHSCORES pairs are nested [member, score] arrays
// in RESP3 and a flat array in RESP2.

func init() { registerGroup(registerZSetCommands) }

func registerZSetCommands(t *commandTable) {
	const w, r = flagWrite, flagReadonly
	t.add(
		&command{Name: "zadd", Fn: cmdZAdd, Arity: -4, Flags: w | flagDenyOOM | flagFast, FirstKey: 1, LastKey: 1, Group: "sorted-set", Summary: "Adds one or more members to a sorted set, or updates their scores. Creates the key if it doesn't exist.", Since: "1.2.0"},
		&command{Name: "zincrby", Fn: cmdZIncrBy, Arity: 4, Flags: w | flagDenyOOM | flagFast, FirstKey: 1, LastKey: 1, Group: "sorted-set", Summary: "Increments the score of a member in a sorted set.", Since: "1.2.0"},
		&command{Name: "zrem", Fn: cmdZRem, Arity: -3, Flags: w | flagFast, FirstKey: 1, LastKey: 1, Group: "sorted-set", Summary: "Removes one or more members from a sorted set. Deletes the sorted set if all members were removed.", Since: "1.2.0"},
		&command{Name: "zcard", Fn: cmdZCard, Arity: 2, Flags: r | flagFast, FirstKey: 1, LastKey: 1, Group: "sorted-set", Summary: "Returns the number of members in a sorted set.", Since: "1.2.0"},
		&command{Name: "zscore", Fn: cmdZScore, Arity: 3, Flags: r | flagFast, FirstKey: 1, LastKey: 1, Group: "sorted-set", Summary: "Returns the score of a member in a sorted set.", Since: "1.2.0"},
		&command{Name: "zrange", Fn: cmdZRange, Arity: -4, Flags: r, FirstKey: 1, LastKey: 1, Group: "sorted-set", Summary: "Returns members in a sorted set within a range of indexes.", Since: "1.2.0"},
		&command{Name: "zrangebyscore", Fn: cmdZRangeByScore, Arity: -4, Flags: r, FirstKey: 1, LastKey: 1, Group: "sorted-set", Summary: "Returns members in a sorted set within a range of scores.", Since: "1.0.5"},
		&command{Name: "zrevrangebyscore", Fn: cmdZRevRangeByScore, Arity: -4, Flags: r, FirstKey: 1, LastKey: 1, Group: "sorted-set", Summary: "Returns members in a sorted set within a range of scores in reverse order.", Since: "2.2.0"},
		&command{Name: "zrevrange", Fn: cmdZRevRange, Arity: -4, Flags: r, FirstKey: 1, LastKey: 1, Group: "sorted-set", Summary: "Returns members in a sorted set within a range of indexes in reverse order.", Since: "1.2.0"},
		&command{Name: "zrangebylex", Fn: cmdZRangeByLex, Arity: -4, Flags: r, FirstKey: 1, LastKey: 1, Group: "sorted-set", Summary: "Returns members in a sorted set within a lexicographical range.", Since: "2.8.9"},
		&command{Name: "zrevrangebylex", Fn: cmdZRevRangeByLex, Arity: -4, Flags: r, FirstKey: 1, LastKey: 1, Group: "sorted-set", Summary: "Returns members in a sorted set within a lexicographical range in reverse order.", Since: "2.8.9"},
		&command{Name: "zrank", Fn: cmdZRank, Arity: 3, Flags: r | flagFast, FirstKey: 1, LastKey: 1, Group: "sorted-set", Summary: "Returns the index of a member in a sorted set ordered by ascending scores.", Since: "2.0.0"},
		&command{Name: "zrevrank", Fn: cmdZRevRank, Arity: 3, Flags: r | flagFast, FirstKey: 1, LastKey: 1, Group: "sorted-set", Summary: "Returns the index of a member in a sorted set ordered by descending scores.", Since: "2.0.0"},
		&command{Name: "zcount", Fn: cmdZCount, Arity: 4, Flags: r | flagFast, FirstKey: 1, LastKey: 1, Group: "sorted-set", Summary: "Returns the count of members in a sorted set that have scores within a range.", Since: "2.0.0"},
		&command{Name: "zpopmin", Fn: cmdZPopMin, Arity: -2, Flags: w | flagFast, FirstKey: 1, LastKey: 1, Group: "sorted-set", Summary: "Returns the lowest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", Since: "5.0.0"},
		&command{Name: "zpopmax", Fn: cmdZPopMax, Arity: -2, Flags: w | flagFast, FirstKey: 1, LastKey: 1, Group: "sorted-set", Summary: "Returns the highest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", Since: "5.0.0"},
	)
}

const errNaNScore = "ERR resulting score is not a number (NaN)"

// ZADD's input flags.
const (
	zaddNX = 1 << iota
	zaddXX
	zaddGT
	zaddLT
	zaddIncr
	zaddCH
)

func cmdZAdd(c *Client, args [][]byte)    { zaddGeneric(c, args, 0) }
func cmdZIncrBy(c *Client, args [][]byte) { zaddGeneric(c, args, zaddIncr) }

// zaddGeneric is ZADD and ZINCRBY, which Redis implements as ZADD INCR
// (options are parsed for ZINCRBY too).
func zaddGeneric(c *Client, args [][]byte, flags int) {
	i := 2
	for ; i < len(args); i++ {
		a := args[i]
		switch {
		case equalFold(a, "nx"):
			flags |= zaddNX
		case equalFold(a, "xx"):
			flags |= zaddXX
		case equalFold(a, "ch"):
			flags |= zaddCH
		case equalFold(a, "incr"):
			flags |= zaddIncr
		case equalFold(a, "gt"):
			flags |= zaddGT
		case equalFold(a, "lt"):
			flags |= zaddLT
		default:
			goto parsed
		}
	}
parsed:
	elements := len(args) - i
	if elements%2 == 1 || elements == 0 {
		c.writeError(errSyntax)
		return
	}
	elements /= 2
	nx, xx, gt, lt, incr := flags&zaddNX != 0, flags&zaddXX != 0, flags&zaddGT != 0, flags&zaddLT != 0, flags&zaddIncr != 0
	if nx && xx {
		c.writeError("ERR XX and NX options at the same time are not compatible")
		return
	}
	if gt && nx || lt && nx || gt && lt {
		c.writeError("ERR GT, LT, and/or NX options at the same time are not compatible")
		return
	}
	if incr && elements > 1 {
		c.writeError("ERR INCR option supports a single increment-element pair")
		return
	}
	// Parse every score first: the command runs fully or not at all.
	scores := make([]float64, elements)
	for j := range scores {
		v, ok := parseRedisDouble(args[i+2*j])
		if !ok {
			c.writeError(errNotFloat)
			return
		}
		scores[j] = v
	}
	z, found, err := getObject[*ZSet](c, args[1], kindZSet)
	if err != nil {
		c.writeErr(err)
		return
	}
	added, updated, processed := 0, 0, 0
	var score float64
	if !found && xx {
		goto reply
	}
	if !found {
		z, _ = getOrCreateObject(c, args[1], kindZSet, NewZSet)
		z.lim = c.tuning()
	}
	for j := 0; j < elements; j++ {
		member := args[i+2*j+1]
		score = scores[j]
		cur, exists := z.ScoreBytes(member)
		switch {
		case exists:
			if nx {
				continue
			}
			if incr {
				score += cur
				if math.IsNaN(score) {
					if z.Len() == 0 {
						c.deleteKey(args[1])
					}
					c.writeError(errNaNScore)
					return
				}
			}
			if lt && score >= cur || gt && score <= cur {
				continue
			}
			if score != cur {
				z.SetBytes(member, score)
				updated++
			}
			processed++
		case !xx:
			z.SetBytes(member, score)
			added++
			processed++
		}
	}
	if added+updated > 0 {
		c.signalModified(args[1])
	}
reply:
	if incr {
		if processed > 0 {
			c.writeDouble(score)
		} else {
			c.writeNull()
		}
		return
	}
	if flags&zaddCH != 0 {
		c.writeInt(int64(added + updated))
	} else {
		c.writeInt(int64(added))
	}
}

func cmdZRem(c *Client, args [][]byte) {
	z, found, err := getObject[*ZSet](c, args[1], kindZSet)
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found {
		c.writeInt(0)
		return
	}
	removed := 0
	for _, m := range args[2:] {
		if z.RemoveBytes(m) {
			removed++
			if z.Len() == 0 {
				c.deleteKey(args[1])
				break
			}
		}
	}
	if removed > 0 {
		c.signalModified(args[1])
	}
	c.writeInt(int64(removed))
}

func cmdZCard(c *Client, args [][]byte) {
	z, found, err := getObject[*ZSet](c, args[1], kindZSet)
	switch {
	case err != nil:
		c.writeErr(err)
	case !found:
		c.writeInt(0)
	default:
		c.writeInt(int64(z.Len()))
	}
}

func cmdZScore(c *Client, args [][]byte) {
	z, found, err := getObject[*ZSet](c, args[1], kindZSet)
	if err != nil {
		c.writeErr(err)
		return
	}
	if found {
		if s, ok := z.ScoreBytes(args[2]); ok {
			c.writeDouble(s)
			return
		}
	}
	c.writeNull()
}

func cmdZRank(c *Client, args [][]byte)    { zrankGeneric(c, args, false) }
func cmdZRevRank(c *Client, args [][]byte) { zrankGeneric(c, args, true) }

func zrankGeneric(c *Client, args [][]byte, rev bool) {
	z, found, err := getObject[*ZSet](c, args[1], kindZSet)
	if err != nil {
		c.writeErr(err)
		return
	}
	if found {
		if r, ok := z.RankBytes(args[2]); ok {
			if rev {
				r = z.Len() - 1 - r
			}
			c.writeInt(int64(r))
			return
		}
	}
	c.writeNull()
}

// parseScoreRange parses min and max as zslParseRange does.
func parseScoreRange(min, max []byte) (ScoreRange, bool) {
	var r ScoreRange
	var ok1, ok2 bool
	r.Min, r.MinEx, ok1 = parseScoreBound(min)
	r.Max, r.MaxEx, ok2 = parseScoreBound(max)
	return r, ok1 && ok2
}

const errMinMaxFloat = "ERR min or max is not a float"

func cmdZCount(c *Client, args [][]byte) {
	r, ok := parseScoreRange(args[2], args[3])
	if !ok {
		c.writeError(errMinMaxFloat)
		return
	}
	z, found, err := getObject[*ZSet](c, args[1], kindZSet)
	switch {
	case err != nil:
		c.writeErr(err)
	case !found:
		c.writeInt(0)
	default:
		c.writeInt(int64(z.CountInRange(r)))
	}
}

// parseLexBound parses a BYLEX bound as zslParseLexRangeItem does.
func parseLexBound(b []byte) (s string, inf int, ex bool, ok bool) {
	if len(b) == 0 {
		return "", 0, false, false
	}
	switch b[0] {
	case '+':
		return "", 1, true, len(b) == 1
	case '-':
		return "", -1, true, len(b) == 1
	case '(':
		return string(b[1:]), 0, true, true
	case '[':
		return string(b[1:]), 0, false, true
	}
	return "", 0, false, false
}

// writeScoredMembers replies ms: members only, or with scores as a flat
// array (RESP2) or [member, score] pairs (RESP3).
func writeScoredMembers(c *Client, ms []ZMember, withScores bool) {
	switch {
	case !withScores:
		c.writeArray(len(ms))
		for _, m := range ms {
			c.writeBulkString(m.Member)
		}
	case c.resp == 3:
		c.writeArray(len(ms))
		for _, m := range ms {
			c.writeArray(2)
			c.writeBulkString(m.Member)
			c.writeDouble(m.Score)
		}
	default:
		c.writeArray(2 * len(ms))
		for _, m := range ms {
			c.writeBulkString(m.Member)
			c.writeDouble(m.Score)
		}
	}
}

// zrange kinds and directions, as zrangeGenericCommand tracks them.
const (
	zrangeAuto = iota
	zrangeRank
	zrangeScore
	zrangeLex
)

func cmdZRange(c *Client, args [][]byte) { zrangeGeneric(c, args, zrangeAuto, 0) }
func cmdZRangeByScore(c *Client, args [][]byte) {
	zrangeGeneric(c, args, zrangeScore, 1)
}
func cmdZRevRangeByScore(c *Client, args [][]byte) {
	zrangeGeneric(c, args, zrangeScore, -1)
}
func cmdZRevRange(c *Client, args [][]byte) { zrangeGeneric(c, args, zrangeRank, -1) }
func cmdZRangeByLex(c *Client, args [][]byte) {
	zrangeGeneric(c, args, zrangeLex, 1)
}
func cmdZRevRangeByLex(c *Client, args [][]byte) {
	zrangeGeneric(c, args, zrangeLex, -1)
}

// zrangeGeneric is ZRANGE and its older forms. dir is 0 (not fixed: REV
// allowed), 1 forward or -1 reverse; kind is zrangeAuto unless the command
// fixes it (then BYSCORE/BYLEX are syntax errors, as in Redis).
func zrangeGeneric(c *Client, args [][]byte, kind, dir int) { zrangeInto(c, args, kind, dir, nil) }

// zrangeInto is zrangeGeneric, or with store (ZRANGESTORE dst src ...) the
// same range stored at store: the arguments then start one later and
// WITHSCORES is not an option.
func zrangeInto(c *Client, args [][]byte, kind, dir int, store []byte) {
	keyIdx := 1
	if store != nil {
		keyIdx = 2
	}
	minIdx, maxIdx := keyIdx+1, keyIdx+2
	withScores := false
	var offset, limit int64 = 0, -1
	for j := keyIdx + 3; j < len(args); j++ {
		left := len(args) - j - 1
		a := args[j]
		switch {
		case store == nil && equalFold(a, "withscores"):
			withScores = true
		case equalFold(a, "limit") && left >= 2:
			o, ok1 := parseInt(args[j+1])
			l, ok2 := parseInt(args[j+2])
			if !ok1 || !ok2 {
				c.writeError(errNotInt)
				return
			}
			offset, limit = o, l
			j += 2
		case dir == 0 && equalFold(a, "rev"):
			dir = -1
		case kind == zrangeAuto && equalFold(a, "bylex"):
			kind = zrangeLex
		case kind == zrangeAuto && equalFold(a, "byscore"):
			kind = zrangeScore
		default:
			c.writeError(errSyntax)
			return
		}
	}
	if dir == 0 {
		dir = 1
	}
	if kind == zrangeAuto {
		kind = zrangeRank
	}
	if limit != -1 && kind == zrangeRank {
		c.writeError("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
		return
	}
	if withScores && kind == zrangeLex {
		c.writeError("ERR syntax error, WITHSCORES not supported in combination with BYLEX")
		return
	}
	rev := dir < 0
	if rev && kind != zrangeRank {
		minIdx, maxIdx = maxIdx, minIdx
	}
	var start, end int64
	var sr ScoreRange
	var lr LexRange
	switch kind {
	case zrangeRank:
		var ok bool
		if start, end, ok = parseIndexPair(c, args[minIdx], args[maxIdx]); !ok {
			return
		}
	case zrangeScore:
		var ok bool
		if sr, ok = parseScoreRange(args[minIdx], args[maxIdx]); !ok {
			c.writeError(errMinMaxFloat)
			return
		}
	case zrangeLex:
		var ok1, ok2 bool
		lr.Min, lr.MinInf, lr.MinEx, ok1 = parseLexBound(args[minIdx])
		lr.Max, lr.MaxInf, lr.MaxEx, ok2 = parseLexBound(args[maxIdx])
		if !ok1 || !ok2 {
			c.writeError("ERR min or max not valid string range item")
			return
		}
	}
	z, found, err := getObject[*ZSet](c, args[keyIdx], kindZSet)
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found {
		if store != nil {
			storeZSet(c, store, &ZSet{lim: c.tuning()})
		} else {
			c.writeArray(0)
		}
		return
	}
	var ms []ZMember
	switch kind {
	case zrangeRank:
		if from, to, ok := clampRange(start, end, z.Len()); ok {
			ms = z.RangeByRank(from, to, rev)
		}
	case zrangeScore, zrangeLex:
		// A negative offset skips everything in Redis (its skip loop
		// counts down past zero until the list ends).
		if offset < 0 || offset > 0 && offset >= int64(z.Len()) {
			break
		}
		lim := -1
		if limit >= 0 {
			lim = int(min(limit, int64(z.Len())))
		}
		if kind == zrangeScore {
			ms = z.RangeByScore(sr, rev, int(offset), lim)
		} else {
			ms = z.RangeByLex(lr, rev, int(offset), lim)
		}
	}
	if store != nil {
		res := &ZSet{lim: c.tuning()}
		for _, m := range ms {
			res.Set(m.Member, m.Score)
		}
		storeZSet(c, store, res)
		return
	}
	writeScoredMembers(c, ms, withScores)
}

func cmdZPopMin(c *Client, args [][]byte) { zpopGeneric(c, args, false) }
func cmdZPopMax(c *Client, args [][]byte) { zpopGeneric(c, args, true) }

func zpopGeneric(c *Client, args [][]byte, max bool) {
	if len(args) > 3 {
		c.writeError(errSyntax)
		return
	}
	hasCount := len(args) == 3
	count := int64(1)
	if hasCount {
		var ok bool
		if count, ok = parsePositiveCount(c, args[2]); !ok {
			return
		}
	}
	z, found, err := getObject[*ZSet](c, args[1], kindZSet)
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found || count == 0 {
		c.writeArray(0)
		return
	}
	ms := z.Pop(int(min(count, int64(z.Len()))), max)
	if z.Len() == 0 {
		c.deleteKey(args[1])
	}
	c.signalModified(args[1])
	// Without a count the reply is one flat [member, score] pair even in
	// RESP3; with a count RESP3 nests the pairs.
	if hasCount {
		writeScoredMembers(c, ms, true)
		return
	}
	c.writeArray(2 * len(ms))
	for _, m := range ms {
		c.writeBulkString(m.Member)
		c.writeDouble(m.Score)
	}
}
