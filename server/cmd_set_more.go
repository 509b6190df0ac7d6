package server

import (
	"math"
	"sort"
)

// SMOVE, SINTERCARD and the STORE variants of SINTER, SUNION and SDIFF
// (Redis 7.0 t_set.c).

func init() { registerGroup(registerSetMoreCommands) }

func registerSetMoreCommands(t *commandTable) {
	const g = "set"
	w, r := flagWrite, flagReadonly
	t.add(
		&command{Name: "smove", Fn: cmdSMove, Arity: 4, Flags: w | flagFast, FirstKey: 1, LastKey: 2, Group: g, Summary: "Move a member from one set to another", Since: "1.0.0"},
		&command{Name: "sintercard", Fn: cmdSInterCard, Arity: -3, Flags: r, Group: g, Summary: "Intersect multiple sets and return the cardinality of the result", Since: "7.0.0"},
		&command{Name: "sinterstore", Fn: cmdSInterStore, Arity: -3, Flags: w | flagDenyOOM, FirstKey: 1, LastKey: -1, Group: g, Summary: "Intersect multiple sets and store the resulting set in a key", Since: "1.0.0"},
		&command{Name: "sunionstore", Fn: cmdSUnionStore, Arity: -3, Flags: w | flagDenyOOM, FirstKey: 1, LastKey: -1, Group: g, Summary: "Add multiple sets and store the resulting set in a key", Since: "1.0.0"},
		&command{Name: "sdiffstore", Fn: cmdSDiffStore, Arity: -3, Flags: w | flagDenyOOM, FirstKey: 1, LastKey: -1, Group: g, Summary: "Subtract multiple sets and store the resulting set in a key", Since: "1.0.0"},
	)
}

func cmdSMove(c *Client, args [][]byte) {
	src, found, err := getObject[*Set](c, args[1], kindSet)
	if !found && err == nil {
		c.writeInt(0) // even when the destination holds another kind
		return
	}
	if err != nil {
		c.writeErr(err)
		return
	}
	dst, dstFound, err := getObject[*Set](c, args[2], kindSet)
	if err != nil {
		c.writeErr(err)
		return
	}
	member := args[3]
	if dstFound && dst == src {
		if src.HasBytes(member) {
			c.writeInt(1)
		} else {
			c.writeInt(0)
		}
		return
	}
	if !src.RemoveBytes(member) {
		c.writeInt(0)
		return
	}
	if src.Len() == 0 {
		c.deleteKey(args[1])
	}
	c.signalModified(args[1])
	if !dstFound {
		if dst, err = getOrCreateSet(c, args[2]); err != nil {
			c.writeErr(err) // cannot happen: the key was just found missing
			return
		}
	}
	if dst.AddBytes(member) {
		c.signalModified(args[2])
	}
	c.writeInt(1)
}

// setInter returns the members of every set, walking the smallest and
// probing the others as Redis does (its order for SINTER); at most limit
// members when limit > 0. Any nil set makes it empty.
func setInter(sets []*Set, limit int) []string {
	for _, s := range sets {
		if s == nil {
			return nil
		}
	}
	sorted := append([]*Set(nil), sets...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Len() < sorted[j].Len() })
	var out []string
	sorted[0].Each(func(m string) bool {
		for _, o := range sorted[1:] {
			if !o.Has(m) {
				return true
			}
		}
		out = append(out, m)
		return limit <= 0 || len(out) < limit
	})
	return out
}

func cmdSInterCard(c *Client, args [][]byte) {
	numKeys, ok := rangeLong(c, args[1], 1, math.MaxInt64, "ERR numkeys should be greater than 0")
	if !ok {
		return
	}
	if numKeys > int64(len(args)-2) {
		c.writeError("ERR Number of keys can't be greater than number of args")
		return
	}
	var limit int64
	for j := 2 + int(numKeys); j < len(args); j++ {
		if equalFold(args[j], "limit") && j < len(args)-1 {
			j++
			if limit, ok = positiveLong(c, args[j], "ERR LIMIT can't be negative"); !ok {
				return
			}
			continue
		}
		c.writeError(errSyntax)
		return
	}
	sets, ok := loadSets(c, args[2:2+numKeys])
	if !ok {
		return
	}
	c.writeInt(int64(len(setInter(sets, int(min(limit, math.MaxInt32))))))
}

// storeSet replaces dst with res (deleting dst when res is empty) and
// replies res's size, as the *STORE commands do.
func storeSet(c *Client, dst []byte, res *Set) {
	if res.Len() == 0 {
		c.deleteKey(dst)
		c.writeInt(0)
		return
	}
	b := &objBox{o: res}
	if c.db.put(dst, objectEntry(b, kindSet, c.srv.newClock)) == "" {
		delete(c.db.expires, string(dst))
	}
	c.touched = append(c.touched, b)
	c.srv.stats.dirty++
	c.writeInt(int64(res.Len()))
}

func cmdSInterStore(c *Client, args [][]byte) {
	sets, ok := loadSets(c, args[2:])
	if !ok {
		return
	}
	res := &Set{lim: c.tuning()}
	for _, m := range setInter(sets, 0) {
		res.Add(m)
	}
	storeSet(c, args[1], res)
}

func cmdSUnionStore(c *Client, args [][]byte) {
	sets, ok := loadSets(c, args[2:])
	if !ok {
		return
	}
	res := &Set{lim: c.tuning()}
	for _, s := range sets {
		if s != nil {
			s.Each(func(m string) bool { res.Add(m); return true })
		}
	}
	storeSet(c, args[1], res)
}

func cmdSDiffStore(c *Client, args [][]byte) {
	sets, ok := loadSets(c, args[2:])
	if !ok {
		return
	}
	res := &Set{lim: c.tuning()}
	if sets[0] != nil {
		sets[0].Each(func(m string) bool {
			for _, o := range sets[1:] {
				if o != nil && o.Has(m) {
					return true
				}
			}
			res.Add(m)
			return true
		})
	}
	storeSet(c, args[1], res)
}
