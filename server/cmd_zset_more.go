package server

import (
	"math"
	"sort"
)

// The rest of Redis 7.0's sorted-set commands (t_zset.c): ZRANGESTORE,
// ZUNION/ZINTER/ZDIFF and their STORE forms, ZINTERCARD, ZRANDMEMBER,
// ZMSCORE, ZLEXCOUNT, ZREMRANGEBY*, ZMPOP. zmpopKeys is the key-level pop
// the blocking variants can run once a key is ready.

func init() { registerGroup(registerZSetMoreCommands) }

func registerZSetMoreCommands(t *commandTable) {
	const g = "sorted-set"
	w, r := flagWrite, flagReadonly
	t.add(
		&command{Name: "zrangestore", Fn: cmdZRangeStore, Arity: -5, Flags: w | flagDenyOOM, FirstKey: 1, LastKey: 2, Group: g, Summary: "Store a range of members from sorted set into another key", Since: "6.2.0"},
		&command{Name: "zunion", Fn: cmdZUnion, Arity: -3, Flags: r, Group: g, Summary: "Add multiple sorted sets", Since: "6.2.0"},
		&command{Name: "zinter", Fn: cmdZInter, Arity: -3, Flags: r, Group: g, Summary: "Intersect multiple sorted sets", Since: "6.2.0"},
		&command{Name: "zdiff", Fn: cmdZDiff, Arity: -3, Flags: r, Group: g, Summary: "Subtract multiple sorted sets", Since: "6.2.0"},
		&command{Name: "zunionstore", Fn: cmdZUnionStore, Arity: -4, Flags: w | flagDenyOOM, FirstKey: 1, LastKey: 1, Group: g, Summary: "Add multiple sorted sets and store the resulting sorted set in a new key", Since: "2.0.0"},
		&command{Name: "zinterstore", Fn: cmdZInterStore, Arity: -4, Flags: w | flagDenyOOM, FirstKey: 1, LastKey: 1, Group: g, Summary: "Intersect multiple sorted sets and store the resulting sorted set in a new key", Since: "2.0.0"},
		&command{Name: "zdiffstore", Fn: cmdZDiffStore, Arity: -4, Flags: w | flagDenyOOM, FirstKey: 1, LastKey: 1, Group: g, Summary: "Subtract multiple sorted sets and store the resulting sorted set in a new key", Since: "6.2.0"},
		&command{Name: "zintercard", Fn: cmdZInterCard, Arity: -3, Flags: r, Group: g, Summary: "Intersect multiple sorted sets and return the cardinality of the result", Since: "7.0.0"},
		&command{Name: "zrandmember", Fn: cmdZRandMember, Arity: -2, Flags: r, FirstKey: 1, LastKey: 1, Group: g, Summary: "Get one or multiple random elements from a sorted set", Since: "6.2.0"},
		&command{Name: "zmscore", Fn: cmdZMScore, Arity: -3, Flags: r | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Get the score associated with the given members in a sorted set", Since: "6.2.0"},
		&command{Name: "zlexcount", Fn: cmdZLexCount, Arity: 4, Flags: r | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Count the number of members in a sorted set between a given lexicographical range", Since: "2.8.9"},
		&command{Name: "zremrangebyrank", Fn: cmdZRemRangeByRank, Arity: 4, Flags: w, FirstKey: 1, LastKey: 1, Group: g, Summary: "Remove all members in a sorted set within the given indexes", Since: "2.0.0"},
		&command{Name: "zremrangebyscore", Fn: cmdZRemRangeByScore, Arity: 4, Flags: w, FirstKey: 1, LastKey: 1, Group: g, Summary: "Remove all members in a sorted set within the given scores", Since: "1.2.0"},
		&command{Name: "zremrangebylex", Fn: cmdZRemRangeByLex, Arity: 4, Flags: w, FirstKey: 1, LastKey: 1, Group: g, Summary: "Remove all members in a sorted set between the given lexicographical range", Since: "2.8.9"},
		&command{Name: "zmpop", Fn: cmdZMPop, Arity: -4, Flags: w, Group: g, Summary: "Remove and return members with scores in a sorted set", Since: "7.0.0"},
	)
}

// storeZSet replaces dst with res (deleting dst when res is empty, its TTL
// going either way) and replies res's size, as the STORE forms do.
func storeZSet(c *Client, dst []byte, res *ZSet) {
	if res.Len() == 0 {
		c.deleteKey(dst)
		c.writeInt(0)
		return
	}
	b := &objBox{o: res}
	if c.db.put(dst, objectEntry(b, kindZSet, c.srv.newClock)) == "" {
		delete(c.db.expires, string(dst))
	}
	c.touched = append(c.touched, b)
	c.srv.stats.dirty++
	c.writeInt(int64(res.Len()))
}

func cmdZRangeStore(c *Client, args [][]byte) {
	zrangeInto(c, args, zrangeAuto, 0, args[1])
}

// Set operations of zunionInterDiffGenericCommand.
const (
	zopUnion = iota
	zopInter
	zopDiff
)

// zopSource is one input: a sorted set, a plain set (every score 1), or
// nothing (a missing key).
type zopSource struct {
	z      *ZSet
	s      *Set
	weight float64
}

func (src zopSource) len() int {
	switch {
	case src.z != nil:
		return src.z.Len()
	case src.s != nil:
		return src.s.Len()
	}
	return 0
}

// each calls fn for every member with its score (unweighted).
func (src zopSource) each(fn func(m string, score float64)) {
	switch {
	case src.z != nil:
		for _, m := range src.z.RangeByRank(0, src.z.Len()-1, false) {
			fn(m.Member, m.Score)
		}
	case src.s != nil:
		src.s.Each(func(m string) bool { fn(m, 1); return true })
	}
}

func (src zopSource) score(m string) (float64, bool) {
	switch {
	case src.z != nil:
		return src.z.Score(m)
	case src.s != nil && src.s.Has(m):
		return 1, true
	}
	return 0, false
}

// zaggregate is zunionInterAggregate; agg is 's', 'm' (min) or 'M' (max).
func zaggregate(target *float64, v float64, agg byte) {
	switch agg {
	case 's':
		*target += v
		if math.IsNaN(*target) {
			*target = 0 // +inf + -inf
		}
	case 'm':
		*target = min(v, *target)
	case 'M':
		*target = max(v, *target)
	}
}

func cmdZUnion(c *Client, args [][]byte)      { zsetOp(c, args, nil, 1, zopUnion, false) }
func cmdZInter(c *Client, args [][]byte)      { zsetOp(c, args, nil, 1, zopInter, false) }
func cmdZDiff(c *Client, args [][]byte)       { zsetOp(c, args, nil, 1, zopDiff, false) }
func cmdZUnionStore(c *Client, args [][]byte) { zsetOp(c, args, args[1], 2, zopUnion, false) }
func cmdZInterStore(c *Client, args [][]byte) { zsetOp(c, args, args[1], 2, zopInter, false) }
func cmdZDiffStore(c *Client, args [][]byte)  { zsetOp(c, args, args[1], 2, zopDiff, false) }
func cmdZInterCard(c *Client, args [][]byte)  { zsetOp(c, args, nil, 1, zopInter, true) }

// zsetOp is zunionInterDiffGenericCommand: numkeys at args[numIdx], the
// keys (sorted sets or sets), then WEIGHTS/AGGREGATE/WITHSCORES, or
// LIMIT for ZINTERCARD; the keys are looked up before the options are
// parsed, as in Redis.
func zsetOp(c *Client, args [][]byte, dst []byte, numIdx, op int, cardOnly bool) {
	n, ok := parseInt(args[numIdx])
	if !ok {
		c.writeError(errNotInt)
		return
	}
	if n < 1 {
		c.writeError("ERR at least 1 input key is needed for '" + c.cur.Name + "' command")
		return
	}
	if n > int64(len(args)-(numIdx+1)) {
		c.writeError(errSyntax)
		return
	}
	srcs := make([]zopSource, n)
	j := numIdx + 1
	for i := range srcs {
		srcs[i].weight = 1
		e, found := c.lookup(args[j])
		j++
		if !found {
			continue
		}
		switch e.kind() {
		case kindZSet:
			srcs[i].z = e.box().o.(*ZSet)
		case kindSet:
			srcs[i].s = e.box().o.(*Set)
		default:
			c.writeError(errWrongType)
			return
		}
	}
	agg := byte('s')
	withScores := false
	var limit int64
	for j < len(args) {
		rem := len(args) - j
		a := args[j]
		switch {
		case op != zopDiff && !cardOnly && rem >= len(srcs)+1 && equalFold(a, "weights"):
			j++
			for i := range srcs {
				w, ok := parseRedisDouble(args[j])
				if !ok {
					c.writeError("ERR weight value is not a float")
					return
				}
				srcs[i].weight = w
				j++
			}
		case op != zopDiff && !cardOnly && rem >= 2 && equalFold(a, "aggregate"):
			switch b := args[j+1]; {
			case equalFold(b, "sum"):
				agg = 's'
			case equalFold(b, "min"):
				agg = 'm'
			case equalFold(b, "max"):
				agg = 'M'
			default:
				c.writeError(errSyntax)
				return
			}
			j += 2
		case dst == nil && !cardOnly && equalFold(a, "withscores"):
			withScores = true
			j++
		case cardOnly && rem >= 2 && equalFold(a, "limit"):
			if limit, ok = positiveLong(c, args[j+1], "ERR LIMIT can't be negative"); !ok {
				return
			}
			j += 2
		default:
			c.writeError(errSyntax)
			return
		}
	}
	if op != zopDiff {
		sort.SliceStable(srcs, func(a, b int) bool { return srcs[a].len() < srcs[b].len() })
	}
	res := &ZSet{lim: c.tuning()}
	cardinality := int64(0)
	switch op {
	case zopInter:
		if srcs[0].len() == 0 {
			break
		}
		done := false
		srcs[0].each(func(m string, s float64) {
			if done {
				return
			}
			score := srcs[0].weight * s
			if math.IsNaN(score) {
				score = 0
			}
			for _, o := range srcs[1:] {
				v, ok := o.score(m)
				if !ok {
					return
				}
				zaggregate(&score, v*o.weight, agg)
			}
			if cardOnly {
				cardinality++
				done = limit > 0 && cardinality >= limit
				return
			}
			res.Set(m, score)
		})
	case zopUnion:
		acc := map[string]float64{}
		var order []string
		for _, src := range srcs {
			src.each(func(m string, s float64) {
				score := src.weight * s
				if math.IsNaN(score) {
					score = 0
				}
				if cur, ok := acc[m]; ok {
					zaggregate(&cur, score, agg)
					acc[m] = cur
					return
				}
				acc[m] = score
				order = append(order, m)
			})
		}
		for _, m := range order {
			res.Set(m, acc[m])
		}
	case zopDiff:
		srcs[0].each(func(m string, s float64) {
			for _, o := range srcs[1:] {
				if _, ok := o.score(m); ok {
					return
				}
			}
			res.Set(m, s)
		})
	}
	switch {
	case dst != nil:
		storeZSet(c, dst, res)
	case cardOnly:
		c.writeInt(cardinality)
	default:
		writeScoredMembers(c, res.RangeByRank(0, res.Len()-1, false), withScores)
	}
}

func cmdZRandMember(c *Client, args [][]byte) {
	if len(args) == 2 {
		z, found, err := getObject[*ZSet](c, args[1], kindZSet)
		switch {
		case err != nil:
			c.writeErr(err)
		case !found:
			c.writeNull()
		default:
			c.writeBulkString(z.RangeByRank(0, z.Len()-1, false)[randomPicks(z.Len(), -1)[0]].Member)
		}
		return
	}
	count, withScores, ok := randCountArg(c, args, "withscores")
	if !ok {
		return
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
	// Asked for the whole set, Redis 7.0 answers it from the highest
	// score down; the picks index that order.
	all := z.RangeByRank(0, z.Len()-1, true)
	picks := randomPicks(len(all), count)
	ms := make([]ZMember, len(picks))
	for i, p := range picks {
		ms[i] = all[p]
	}
	writeScoredMembers(c, ms, withScores)
}

func cmdZMScore(c *Client, args [][]byte) {
	z, found, err := getObject[*ZSet](c, args[1], kindZSet)
	if err != nil {
		c.writeErr(err)
		return
	}
	c.writeArray(len(args) - 2)
	for _, m := range args[2:] {
		if !found {
			c.writeNull()
			continue
		}
		if s, ok := z.ScoreBytes(m); ok {
			c.writeDouble(s)
		} else {
			c.writeNull()
		}
	}
}

// parseLexRange parses BYLEX's min and max, writing Redis's error.
func parseLexRange(c *Client, minArg, maxArg []byte) (LexRange, bool) {
	var lr LexRange
	var ok1, ok2 bool
	lr.Min, lr.MinInf, lr.MinEx, ok1 = parseLexBound(minArg)
	lr.Max, lr.MaxInf, lr.MaxEx, ok2 = parseLexBound(maxArg)
	if !ok1 || !ok2 {
		c.writeError("ERR min or max not valid string range item")
		return lr, false
	}
	return lr, true
}

func cmdZLexCount(c *Client, args [][]byte) {
	lr, ok := parseLexRange(c, args[2], args[3])
	if !ok {
		return
	}
	z, found, err := getObject[*ZSet](c, args[1], kindZSet)
	switch {
	case err != nil:
		c.writeErr(err)
	case !found:
		c.writeInt(0)
	default:
		c.writeInt(int64(len(z.RangeByLex(lr, false, 0, -1))))
	}
}

func cmdZRemRangeByRank(c *Client, args [][]byte) {
	start, end, ok := parseIndexPair(c, args[2], args[3])
	if !ok {
		return
	}
	zremRange(c, args[1], func(z *ZSet) []ZMember {
		from, to, ok := clampRange(start, end, z.Len())
		if !ok {
			return nil
		}
		return z.RangeByRank(from, to, false)
	})
}

func cmdZRemRangeByScore(c *Client, args [][]byte) {
	r, ok := parseScoreRange(args[2], args[3])
	if !ok {
		c.writeError(errMinMaxFloat)
		return
	}
	zremRange(c, args[1], func(z *ZSet) []ZMember { return z.RangeByScore(r, false, 0, -1) })
}

func cmdZRemRangeByLex(c *Client, args [][]byte) {
	lr, ok := parseLexRange(c, args[2], args[3])
	if !ok {
		return
	}
	zremRange(c, args[1], func(z *ZSet) []ZMember { return z.RangeByLex(lr, false, 0, -1) })
}

// zremRange removes the members pick selects from the sorted set at key
// and replies how many went.
func zremRange(c *Client, key []byte, pick func(*ZSet) []ZMember) {
	z, found, err := getObject[*ZSet](c, key, kindZSet)
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found {
		c.writeInt(0)
		return
	}
	ms := pick(z)
	for _, m := range ms {
		z.Remove(m.Member)
	}
	if len(ms) > 0 {
		if z.Len() == 0 {
			c.deleteKey(key)
		}
		c.signalModified(key)
	}
	c.writeInt(int64(len(ms)))
}

// zsetEnd parses MIN or MAX (true for MAX).
func zsetEnd(c *Client, b []byte) (isMax, ok bool) {
	switch {
	case equalFold(b, "min"):
		return false, true
	case equalFold(b, "max"):
		return true, true
	}
	c.writeError(errSyntax)
	return false, false
}

func cmdZMPop(c *Client, args [][]byte) {
	keys, isMax, count, ok := parseMPop(c, args, 1, zsetEnd)
	if !ok {
		return
	}
	key, ms, err := c.zmpopKeys(keys, isMax, int(min(count, math.MaxInt32)))
	switch {
	case err != nil:
		c.writeErr(err)
	case key == nil:
		c.writeNullArray()
	default:
		writeKeyAndScoredMembers(c, key, ms)
	}
}

// writeKeyAndScoredMembers is ZMPOP's reply: [key, [[member, score]...]],
// the pairs nested in RESP2 too.
func writeKeyAndScoredMembers(c *Client, key []byte, ms []ZMember) {
	c.writeArray(2)
	c.writeBulk(key)
	c.writeArray(len(ms))
	for _, m := range ms {
		c.writeArray(2)
		c.writeBulkString(m.Member)
		c.writeDouble(m.Score)
	}
}

// zmpopKeys pops up to count members (the lowest scores, or the highest
// when isMax) from the first existing sorted set among keys (ZMPOP;
// BZMPOP once a key is ready). key is nil when every key is missing; err
// is WRONGTYPE for a key of another kind met first.
func (c *Client) zmpopKeys(keys [][]byte, isMax bool, count int) (key []byte, ms []ZMember, err error) {
	for _, k := range keys {
		z, found, err := getObject[*ZSet](c, k, kindZSet)
		if err != nil {
			return nil, nil, err
		}
		if !found || z.Len() == 0 {
			continue
		}
		ms = z.Pop(min(count, z.Len()), isMax)
		if z.Len() == 0 {
			c.deleteKey(k)
		}
		c.signalModified(k)
		return k, ms, nil
	}
	return nil, nil, nil
}
