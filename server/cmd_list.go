package server

// List commands (t_list.c). Replies, errors and the order in which
// arguments are validated follow Redis 7.0: e.g. LRANGE checks its indexes
// before looking the key up, LINDEX after.

func init() { registerGroup(registerListCommands) }

func registerListCommands(t *commandTable) {
	const w, r = flagWrite, flagReadonly
	t.add(
		&command{Name: "lpush", Fn: cmdLPush, Arity: -3, Flags: w | flagDenyOOM | flagFast, FirstKey: 1, LastKey: 1, Group: "list", Summary: "Prepends one or more elements to a list. Creates the key if it doesn't exist.", Since: "1.0.0"},
		&command{Name: "rpush", Fn: cmdRPush, Arity: -3, Flags: w | flagDenyOOM | flagFast, FirstKey: 1, LastKey: 1, Group: "list", Summary: "Appends one or more elements to a list. Creates the key if it doesn't exist.", Since: "1.0.0"},
		&command{Name: "lpushx", Fn: cmdLPushX, Arity: -3, Flags: w | flagDenyOOM | flagFast, FirstKey: 1, LastKey: 1, Group: "list", Summary: "Prepends one or more elements to a list only when the list exists.", Since: "2.2.0"},
		&command{Name: "rpushx", Fn: cmdRPushX, Arity: -3, Flags: w | flagDenyOOM | flagFast, FirstKey: 1, LastKey: 1, Group: "list", Summary: "Appends an element to a list only when the list exists.", Since: "2.2.0"},
		&command{Name: "lpop", Fn: cmdLPop, Arity: -2, Flags: w | flagFast, FirstKey: 1, LastKey: 1, Group: "list", Summary: "Returns the first elements in a list after removing it. Deletes the list if the last element was popped.", Since: "1.0.0"},
		&command{Name: "rpop", Fn: cmdRPop, Arity: -2, Flags: w | flagFast, FirstKey: 1, LastKey: 1, Group: "list", Summary: "Returns and removes the last elements of a list. Deletes the list if the last element was popped.", Since: "1.0.0"},
		&command{Name: "llen", Fn: cmdLLen, Arity: 2, Flags: r | flagFast, FirstKey: 1, LastKey: 1, Group: "list", Summary: "Returns the length of a list.", Since: "1.0.0"},
		&command{Name: "lrange", Fn: cmdLRange, Arity: 4, Flags: r, FirstKey: 1, LastKey: 1, Group: "list", Summary: "Returns a range of elements from a list.", Since: "1.0.0"},
		&command{Name: "lindex", Fn: cmdLIndex, Arity: 3, Flags: r, FirstKey: 1, LastKey: 1, Group: "list", Summary: "Returns an element from a list by its index.", Since: "1.0.0"},
		&command{Name: "lset", Fn: cmdLSet, Arity: 4, Flags: w | flagDenyOOM, FirstKey: 1, LastKey: 1, Group: "list", Summary: "Sets the value of an element in a list by its index.", Since: "1.0.0"},
		&command{Name: "ltrim", Fn: cmdLTrim, Arity: 4, Flags: w, FirstKey: 1, LastKey: 1, Group: "list", Summary: "Removes elements from both ends a list. Deletes the list if all elements were trimmed.", Since: "1.0.0"},
		&command{Name: "lrem", Fn: cmdLRem, Arity: 4, Flags: w, FirstKey: 1, LastKey: 1, Group: "list", Summary: "Removes elements from a list. Deletes the list if the last element was removed.", Since: "1.0.0"},
		&command{Name: "linsert", Fn: cmdLInsert, Arity: 5, Flags: w | flagDenyOOM, FirstKey: 1, LastKey: 1, Group: "list", Summary: "Inserts an element before or after another element in a list.", Since: "2.2.0"},
	)
}

const (
	errIndexOutOfRange = "ERR index out of range"
	errMustBePositive  = "ERR value is out of range, must be positive"
)

func newList() *List { return &List{} }

func cmdLPush(c *Client, args [][]byte)  { pushGeneric(c, args, true, false) }
func cmdRPush(c *Client, args [][]byte)  { pushGeneric(c, args, false, false) }
func cmdLPushX(c *Client, args [][]byte) { pushGeneric(c, args, true, true) }
func cmdRPushX(c *Client, args [][]byte) { pushGeneric(c, args, false, true) }

func pushGeneric(c *Client, args [][]byte, front, onlyExisting bool) {
	var l *List
	if onlyExisting {
		v, found, err := getObject[*List](c, args[1], kindList)
		if err != nil {
			c.writeErr(err)
			return
		}
		if !found {
			c.writeInt(0)
			return
		}
		l = v
	} else {
		v, err := getOrCreateObject(c, args[1], kindList, newList)
		if err != nil {
			c.writeErr(err)
			return
		}
		l = v
	}
	for _, a := range args[2:] {
		if front {
			l.PushFront(string(a))
		} else {
			l.PushBack(string(a))
		}
	}
	c.signalModified(args[1])
	c.writeInt(int64(l.Len()))
}

// parsePositiveCount parses the optional COUNT of LPOP, SPOP, ZPOPMIN...:
// Redis's getPositiveLongFromObjectOrReply, whose message covers both a
// non-integer and a negative value.
func parsePositiveCount(c *Client, b []byte) (int64, bool) {
	n, ok := parseInt(b)
	if !ok || n < 0 {
		c.writeError(errMustBePositive)
		return 0, false
	}
	return n, true
}

func cmdLPop(c *Client, args [][]byte) { popGeneric(c, args, true) }
func cmdRPop(c *Client, args [][]byte) { popGeneric(c, args, false) }

func popGeneric(c *Client, args [][]byte, front bool) {
	if len(args) > 3 {
		c.writeArityError(c.cur.Name)
		return
	}
	hasCount := len(args) == 3
	var count int64
	if hasCount {
		var ok bool
		if count, ok = parsePositiveCount(c, args[2]); !ok {
			return
		}
	}
	l, found, err := getObject[*List](c, args[1], kindList)
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found {
		if hasCount {
			c.writeNullArray()
		} else {
			c.writeNull()
		}
		return
	}
	pop := l.PopBack
	if front {
		pop = l.PopFront
	}
	if !hasCount {
		v, _ := pop()
		c.writeBulkString(v)
	} else {
		n := min(count, int64(l.Len()))
		c.writeArray(int(n))
		for i := int64(0); i < n; i++ {
			v, _ := pop()
			c.writeBulkString(v)
		}
		if n == 0 {
			return
		}
	}
	if l.Len() == 0 {
		c.deleteKey(args[1])
	}
	c.signalModified(args[1])
}

func cmdLLen(c *Client, args [][]byte) {
	l, found, err := getObject[*List](c, args[1], kindList)
	switch {
	case err != nil:
		c.writeErr(err)
	case !found:
		c.writeInt(0)
	default:
		c.writeInt(int64(l.Len()))
	}
}

// parseIndexPair parses two integer arguments (LRANGE, LTRIM, ZRANGE).
func parseIndexPair(c *Client, a, b []byte) (int64, int64, bool) {
	start, ok1 := parseInt(a)
	end, ok2 := parseInt(b)
	if !ok1 || !ok2 {
		c.writeError(errNotInt)
		return 0, 0, false
	}
	return start, end, true
}

// clampRange applies Redis's index rules (negative counts from the end) to
// start..end for a sequence of length n; ok is false for an empty range.
func clampRange(start, end int64, n int) (int, int, bool) {
	ln := int64(n)
	if start < 0 {
		start += ln
	}
	if end < 0 {
		end += ln
	}
	if start < 0 {
		start = 0
	}
	if start > end || start >= ln {
		return 0, 0, false
	}
	if end >= ln {
		end = ln - 1
	}
	return int(start), int(end), true
}

func cmdLRange(c *Client, args [][]byte) {
	start, end, ok := parseIndexPair(c, args[2], args[3])
	if !ok {
		return
	}
	l, found, err := getObject[*List](c, args[1], kindList)
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found {
		c.writeArray(0)
		return
	}
	from, to, ok := clampRange(start, end, l.Len())
	if !ok {
		c.writeArray(0)
		return
	}
	c.writeArray(to - from + 1)
	l.Range(from, to, c.writeBulkString)
}

// listIndex maps a Redis index (negative from the end) into 0..n-1.
func listIndex(idx int64, n int) (int, bool) {
	if idx < 0 {
		idx += int64(n)
	}
	if idx < 0 || idx >= int64(n) {
		return 0, false
	}
	return int(idx), true
}

func cmdLIndex(c *Client, args [][]byte) {
	l, found, err := getObject[*List](c, args[1], kindList)
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found {
		c.writeNull()
		return
	}
	idx, ok := parseInt(args[2])
	if !ok {
		c.writeError(errNotInt)
		return
	}
	i, ok := listIndex(idx, l.Len())
	if !ok {
		c.writeNull()
		return
	}
	c.writeBulkString(l.Index(i))
}

func cmdLSet(c *Client, args [][]byte) {
	l, found, err := getObject[*List](c, args[1], kindList)
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found {
		c.writeError(errNoSuchKey)
		return
	}
	idx, ok := parseInt(args[2])
	if !ok {
		c.writeError(errNotInt)
		return
	}
	i, ok := listIndex(idx, l.Len())
	if !ok {
		c.writeError(errIndexOutOfRange)
		return
	}
	l.Set(i, string(args[3]))
	c.signalModified(args[1])
	c.writeOK()
}

func cmdLTrim(c *Client, args [][]byte) {
	start, end, ok := parseIndexPair(c, args[2], args[3])
	if !ok {
		return
	}
	l, found, err := getObject[*List](c, args[1], kindList)
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found {
		c.writeOK()
		return
	}
	if from, to, ok := clampRange(start, end, l.Len()); ok {
		if from != 0 || to != l.Len()-1 {
			l.Trim(from, to)
		}
	} else {
		l.Clear()
	}
	if l.Len() == 0 {
		c.deleteKey(args[1])
	}
	c.signalModified(args[1])
	c.writeOK()
}

func cmdLRem(c *Client, args [][]byte) {
	count, ok := parseInt(args[2])
	if !ok {
		c.writeError(errNotInt)
		return
	}
	l, found, err := getObject[*List](c, args[1], kindList)
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found {
		c.writeInt(0)
		return
	}
	// Counts beyond the list's length mean "all of them from that end".
	cnt := count
	if n := int64(l.Len()); cnt > n {
		cnt = n
	} else if cnt < -n {
		cnt = -n
	}
	removed := l.Remove(string(args[3]), int(cnt))
	if removed > 0 {
		if l.Len() == 0 {
			c.deleteKey(args[1])
		}
		c.signalModified(args[1])
	}
	c.writeInt(int64(removed))
}

func cmdLInsert(c *Client, args [][]byte) {
	var before bool
	switch {
	case equalFold(args[2], "after"):
	case equalFold(args[2], "before"):
		before = true
	default:
		c.writeError(errSyntax)
		return
	}
	l, found, err := getObject[*List](c, args[1], kindList)
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found {
		c.writeInt(0)
		return
	}
	if !l.Insert(string(args[3]), string(args[4]), before) {
		c.writeInt(-1)
		return
	}
	c.signalModified(args[1])
	c.writeInt(int64(l.Len()))
}
