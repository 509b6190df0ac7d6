package server

import (
	"sort"
	"strconv"
)

// Set commands (t_set.c), replies and errors as in Redis 7.0: SMEMBERS,
// SPOP with a count, SINTER, SUNION and SDIFF reply RESP3 sets; SRANDMEMBER
// with a count replies an array (it may repeat members).

func init() { registerGroup(registerSetCommands) }

func registerSetCommands(t *commandTable) {
	const w, r = flagWrite, flagReadonly
	t.add(
		&command{Name: "sadd", Fn: cmdSAdd, Arity: -3, Flags: w | flagDenyOOM | flagFast, FirstKey: 1, LastKey: 1, Group: "set", Summary: "Adds one or more members to a set. Creates the key if it doesn't exist.", Since: "1.0.0"},
		&command{Name: "srem", Fn: cmdSRem, Arity: -3, Flags: w | flagFast, FirstKey: 1, LastKey: 1, Group: "set", Summary: "Removes one or more members from a set. Deletes the set if the last member was removed.", Since: "1.0.0"},
		&command{Name: "smembers", Fn: cmdSMembers, Arity: 2, Flags: r, FirstKey: 1, LastKey: 1, Group: "set", Summary: "Returns all members of a set.", Since: "1.0.0"},
		&command{Name: "sismember", Fn: cmdSIsMember, Arity: 3, Flags: r | flagFast, FirstKey: 1, LastKey: 1, Group: "set", Summary: "Determines whether a member belongs to a set.", Since: "1.0.0"},
		&command{Name: "smismember", Fn: cmdSMIsMember, Arity: -3, Flags: r | flagFast, FirstKey: 1, LastKey: 1, Group: "set", Summary: "Determines whether multiple members belong to a set.", Since: "6.2.0"},
		&command{Name: "scard", Fn: cmdSCard, Arity: 2, Flags: r | flagFast, FirstKey: 1, LastKey: 1, Group: "set", Summary: "Returns the number of members in a set.", Since: "1.0.0"},
		&command{Name: "spop", Fn: cmdSPop, Arity: -2, Flags: w | flagFast, FirstKey: 1, LastKey: 1, Group: "set", Summary: "Returns one or more random members from a set after removing them. Deletes the set if the last member was popped.", Since: "1.0.0"},
		&command{Name: "srandmember", Fn: cmdSRandMember, Arity: -2, Flags: r, FirstKey: 1, LastKey: 1, Group: "set", Summary: "Get one or multiple random members from a set", Since: "1.0.0"},
		&command{Name: "sinter", Fn: cmdSInter, Arity: -2, Flags: r, FirstKey: 1, LastKey: -1, Group: "set", Summary: "Returns the intersect of multiple sets.", Since: "1.0.0"},
		&command{Name: "sunion", Fn: cmdSUnion, Arity: -2, Flags: r, FirstKey: 1, LastKey: -1, Group: "set", Summary: "Returns the union of multiple sets.", Since: "1.0.0"},
		&command{Name: "sdiff", Fn: cmdSDiff, Arity: -2, Flags: r, FirstKey: 1, LastKey: -1, Group: "set", Summary: "Returns the difference of multiple sets.", Since: "1.0.0"},
	)
}

func newSet() *Set { return &Set{} }

// getOrCreateSet is getOrCreateObject for a set, a new one taking the
// server's encoding thresholds.
func getOrCreateSet(c *Client, key []byte) (*Set, error) {
	s, err := getOrCreateObject(c, key, kindSet, newSet)
	if err == nil && s.lim == nil {
		s.lim = c.tuning()
	}
	return s, err
}

// srandMemberMaxRepeat bounds SRANDMEMBER's negative count (see there).
const srandMemberMaxRepeat = 10_000_000

func cmdSAdd(c *Client, args [][]byte) {
	s, err := getOrCreateSet(c, args[1])
	if err != nil {
		c.writeErr(err)
		return
	}
	added := 0
	for _, m := range args[2:] {
		if s.AddBytes(m) {
			added++
		}
	}
	if added > 0 {
		c.signalModified(args[1])
	}
	c.writeInt(int64(added))
}

func cmdSRem(c *Client, args [][]byte) {
	s, found, err := getObject[*Set](c, args[1], kindSet)
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
		if s.RemoveBytes(m) {
			removed++
			if s.Len() == 0 {
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

// writeSetMembers replies s's members as a set (RESP3 ~, RESP2 *).
func writeSetMembers(c *Client, s *Set) {
	c.writeSet(s.Len())
	s.Each(func(m string) bool {
		c.writeBulkString(m)
		return true
	})
}

func cmdSMembers(c *Client, args [][]byte) {
	s, found, err := getObject[*Set](c, args[1], kindSet)
	switch {
	case err != nil:
		c.writeErr(err)
	case !found:
		c.writeSet(0)
	default:
		writeSetMembers(c, s)
	}
}

func cmdSIsMember(c *Client, args [][]byte) {
	s, found, err := getObject[*Set](c, args[1], kindSet)
	switch {
	case err != nil:
		c.writeErr(err)
	case found && s.HasBytes(args[2]):
		c.writeInt(1)
	default:
		c.writeInt(0)
	}
}

func cmdSMIsMember(c *Client, args [][]byte) {
	s, found, err := getObject[*Set](c, args[1], kindSet)
	if err != nil {
		c.writeErr(err)
		return
	}
	c.writeArray(len(args) - 2)
	for _, m := range args[2:] {
		if found && s.HasBytes(m) {
			c.writeInt(1)
		} else {
			c.writeInt(0)
		}
	}
}

func cmdSCard(c *Client, args [][]byte) {
	s, found, err := getObject[*Set](c, args[1], kindSet)
	switch {
	case err != nil:
		c.writeErr(err)
	case !found:
		c.writeInt(0)
	default:
		c.writeInt(int64(s.Len()))
	}
}

func cmdSPop(c *Client, args [][]byte) {
	if len(args) > 3 {
		c.writeError(errSyntax)
		return
	}
	if len(args) == 3 {
		sPopCount(c, args)
		return
	}
	s, found, err := getObject[*Set](c, args[1], kindSet)
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found {
		c.writeNull()
		return
	}
	c.writeBulkString(s.Pop())
	if s.Len() == 0 {
		c.deleteKey(args[1])
	}
	c.signalModified(args[1])
}

func sPopCount(c *Client, args [][]byte) {
	count, ok := parsePositiveCount(c, args[2])
	if !ok {
		return
	}
	s, found, err := getObject[*Set](c, args[1], kindSet)
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found || count == 0 {
		c.writeSet(0)
		return
	}
	if count >= int64(s.Len()) {
		writeSetMembers(c, s)
		c.deleteKey(args[1])
		c.signalModified(args[1])
		return
	}
	c.writeSet(int(count))
	for i := int64(0); i < count; i++ {
		c.writeBulkString(s.Pop())
	}
	c.signalModified(args[1])
}

func cmdSRandMember(c *Client, args [][]byte) {
	if len(args) > 3 {
		c.writeError(errSyntax)
		return
	}
	if len(args) == 2 {
		s, found, err := getObject[*Set](c, args[1], kindSet)
		switch {
		case err != nil:
			c.writeErr(err)
		case !found:
			c.writeNull()
		default:
			c.writeBulkString(s.Random())
		}
		return
	}
	count, ok := parseInt(args[2])
	if !ok {
		c.writeError(errNotInt)
		return
	}
	if count == minInt64 {
		c.writeError("ERR value is out of range, value must between -" + strconv.FormatInt(maxInt64, 10) + " and " + strconv.FormatInt(maxInt64, 10))
		return
	}
	s, found, err := getObject[*Set](c, args[1], kindSet)
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found || count == 0 {
		c.writeArray(0)
		return
	}
	if count < 0 {
		// A negative count may repeat members and returns exactly -count.
		// Redis would build a reply of any size; a reply of billions of
		// members would take the whole server down, so there is a cap.
		if -count > srandMemberMaxRepeat {
			c.writeError("ERR count is too large: SRANDMEMBER with a negative count returns at most " + strconv.Itoa(srandMemberMaxRepeat) + " members; ask for fewer")
			return
		}
		c.writeArray(int(-count))
		for i := int64(0); i < -count; i++ {
			c.writeBulkString(s.Random())
		}
		return
	}
	ms := s.RandomDistinct(int(min(count, int64(s.Len()))))
	c.writeArray(len(ms))
	for _, m := range ms {
		c.writeBulkString(m)
	}
}

// loadSets looks up every key as a set: missing keys are nil, and any key
// of another type makes the whole command fail with WRONGTYPE, as Redis
// checks all keys before computing.
func loadSets(c *Client, keys [][]byte) ([]*Set, bool) {
	sets := make([]*Set, len(keys))
	for i, k := range keys {
		s, found, err := getObject[*Set](c, k, kindSet)
		if err != nil {
			c.writeErr(err)
			return nil, false
		}
		if found {
			sets[i] = s
		}
	}
	return sets, true
}

func cmdSInter(c *Client, args [][]byte) {
	sets, ok := loadSets(c, args[1:])
	if !ok {
		return
	}
	for _, s := range sets {
		if s == nil {
			c.writeSet(0)
			return
		}
	}
	// Walk the smallest set and probe the others, as Redis does; the
	// result keeps the smallest set's order (ascending for integer sets).
	sort.SliceStable(sets, func(i, j int) bool { return sets[i].Len() < sets[j].Len() })
	var out []string
	sets[0].Each(func(m string) bool {
		for _, o := range sets[1:] {
			if !o.Has(m) {
				return true
			}
		}
		out = append(out, m)
		return true
	})
	c.writeSet(len(out))
	for _, m := range out {
		c.writeBulkString(m)
	}
}

func cmdSUnion(c *Client, args [][]byte) {
	sets, ok := loadSets(c, args[1:])
	if !ok {
		return
	}
	// Building a Set gives Redis's result order: ascending when every
	// member is an integer (intset), else hash order.
	res := Set{lim: c.tuning()}
	for _, s := range sets {
		if s != nil {
			s.Each(func(m string) bool { res.Add(m); return true })
		}
	}
	writeSetMembers(c, &res)
}

func cmdSDiff(c *Client, args [][]byte) {
	sets, ok := loadSets(c, args[1:])
	if !ok {
		return
	}
	res := Set{lim: c.tuning()}
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
	writeSetMembers(c, &res)
}
