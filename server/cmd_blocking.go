package server

// Blocking list and sorted-set commands (t_list.c, t_zset.c): BLPOP,
// BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN, BZPOPMAX, BZMPOP. Each
// first tries its keys in order as its non-blocking cousin would (the
// first key of the wrong type is an error, the first non-empty one
// serves); with nothing to take it blocks (blocking.go), unless it runs
// inside EXEC, where it answers as a timeout at once. XREAD is in
// cmd_blocking_stream.go.

func init() {
	registerGroup(registerBlockingCommands)
	for _, name := range []string{"blpop", "brpop", "bzpopmin", "bzpopmax"} {
		keySpecFlags[name] = "RW access delete"
	}
	for _, name := range []string{"blmove", "brpoplpush"} {
		keySpecFlags[name] = "RW access delete|RW insert"
	}
}

func registerBlockingCommands(t *commandTable) {
	const w = flagWrite | flagBlocking
	t.add(
		&command{Name: "blpop", Fn: cmdBLPop, Arity: -3, Flags: w | flagNoScript, FirstKey: 1, LastKey: -2, Group: "list", Summary: "Removes and returns the first element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", Since: "2.0.0"},
		&command{Name: "brpop", Fn: cmdBRPop, Arity: -3, Flags: w | flagNoScript, FirstKey: 1, LastKey: -2, Group: "list", Summary: "Removes and returns the last element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", Since: "2.0.0"},
		&command{Name: "blmove", Fn: cmdBLMove, Arity: 6, Flags: w | flagDenyOOM | flagNoScript, FirstKey: 1, LastKey: 2, Group: "list", Summary: "Pops an element from a list, pushes it to another list and returns it. Blocks until an element is available otherwise. Deletes the list if the last element was moved.", Since: "6.2.0"},
		&command{Name: "brpoplpush", Fn: cmdBRPopLPush, Arity: 4, Flags: w | flagDenyOOM | flagNoScript, FirstKey: 1, LastKey: 2, Group: "list", Summary: "Pops an element from a list, pushes it to another list and returns it. Block until an element is available otherwise. Deletes the list if the last element was popped.", Since: "2.2.0"},
		&command{Name: "blmpop", Fn: cmdBLMPop, Arity: -5, Flags: w, Group: "list", Summary: "Pops the first element from one of multiple lists. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", Since: "7.0.0"},
		&command{Name: "bzpopmin", Fn: cmdBZPopMin, Arity: -3, Flags: w | flagNoScript | flagFast, FirstKey: 1, LastKey: -2, Group: "sorted-set", Summary: "Removes and returns the member with the lowest score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.", Since: "5.0.0"},
		&command{Name: "bzpopmax", Fn: cmdBZPopMax, Arity: -3, Flags: w | flagNoScript | flagFast, FirstKey: 1, LastKey: -2, Group: "sorted-set", Summary: "Removes and returns the member with the highest score from one or more sorted sets. Blocks until a member available otherwise.  Deletes the sorted set if the last element was popped.", Since: "5.0.0"},
		&command{Name: "bzmpop", Fn: cmdBZMPop, Arity: -5, Flags: w, Group: "sorted-set", Summary: "Removes and returns a member by score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.", Since: "7.0.0"},
	)
}

// blockOn is the common end of every blocking command once its keys had
// nothing for it: the timeout reply inside EXEC (Redis's
// CLIENT_DENY_BLOCKING: a transaction never waits), else the client
// blocks on keys until serve succeeds for one of them or the deadline
// passes.
func blockOn(c *Client, keys [][]byte, deadline int64, serve func(w *Client, key string) bool, timedOut func(w *Client)) {
	if c.denyBlocking {
		timedOut(c)
		return
	}
	bs := &blockState{cmd: c.cur, db: c.db, deadline: deadline, serve: serve, timedOut: timedOut}
	if c.srv.cfg.Tuning.SlowlogLogSlowerThan >= 0 {
		// Recorded when served (slowlogUnblocked); c.args is the
		// command's, which the read buffer will not hold by then.
		bs.slowArgs = slowArgs(c.cur, c.args)
	}
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		// A key named twice is waited on once, as Redis's dict of keys.
		if !seen[string(k)] {
			seen[string(k)] = true
			bs.keys = append(bs.keys, string(k))
		}
	}
	c.block(bs)
}

// firstReady tries keys in order: the first that holds kind k serves
// (serve writes the reply), the first holding another kind is a
// WRONGTYPE error. It reports whether it replied.
func firstReady(c *Client, keys [][]byte, k kind, serve func(w *Client, key string) bool) bool {
	for _, key := range keys {
		e, ok := c.db.get(key, c.now)
		if !ok {
			continue
		}
		if e.kind() != k {
			c.writeError(errWrongType)
			return true
		}
		if serve(c, string(key)) {
			return true
		}
	}
	return false
}

func nullArrayReply(w *Client) { w.writeNullArray() }

func cmdBLPop(c *Client, args [][]byte) { blockingPop(c, args, true) }
func cmdBRPop(c *Client, args [][]byte) { blockingPop(c, args, false) }

// blockingPop is BLPOP and BRPOP: the timeout is parsed before any key is
// looked at.
func blockingPop(c *Client, args [][]byte, left bool) {
	deadline, ok := parseBlockTimeout(c, args[len(args)-1], true)
	if !ok {
		return
	}
	keys := args[1 : len(args)-1]
	serve := func(w *Client, key string) bool {
		l, found, err := getObject[*List](w, []byte(key), kindList)
		if err != nil || !found || l.Len() == 0 {
			return false
		}
		v, _ := l.Pop(left)
		w.writeArray(2)
		w.writeBulkString(key)
		w.writeBulkString(v)
		if l.Len() == 0 {
			w.deleteKey([]byte(key))
		}
		w.signalModified([]byte(key))
		return true
	}
	if firstReady(c, keys, kindList, serve) {
		return
	}
	blockOn(c, keys, deadline, serve, nullArrayReply)
}

func cmdBLMove(c *Client, args [][]byte) {
	from, ok := listEnd(c, args[3])
	if !ok {
		return
	}
	to, ok := listEnd(c, args[4])
	if !ok {
		return
	}
	blockingMove(c, args[1], args[2], from, to, args[5])
}

func cmdBRPopLPush(c *Client, args [][]byte) { blockingMove(c, args[1], args[2], false, true, args[3]) }

// blockingMove is BLMOVE and BRPOPLPUSH: a non-empty source moves at
// once, as LMOVE; an empty one blocks. Served later, a destination of
// the wrong type answers WRONGTYPE and leaves the source as it was.
func blockingMove(c *Client, src, dst []byte, fromLeft, toLeft bool, timeout []byte) {
	deadline, ok := parseBlockTimeout(c, timeout, true)
	if !ok {
		return
	}
	dstKey := string(dst)
	serve := func(w *Client, key string) bool {
		if e, ok := w.db.get([]byte(key), w.now); !ok || e.kind() != kindList {
			return false
		}
		v, moved, err := w.lmoveKeys([]byte(key), []byte(dstKey), fromLeft, toLeft)
		switch {
		case err != nil:
			w.writeErr(err)
		case !moved:
			return false
		default:
			w.writeBulkString(v)
		}
		return true
	}
	if e, found := c.db.get(src, c.now); found {
		if e.kind() != kindList {
			c.writeError(errWrongType)
			return
		}
		serve(c, string(src))
		return
	}
	// Inside EXEC the answer is a null bulk, but a real timeout answers
	// a null array, as for every list command (Redis 7.0's
	// replyToBlockedClientTimedOut).
	if c.denyBlocking {
		c.writeNull()
		return
	}
	blockOn(c, [][]byte{src}, deadline, serve, nullArrayReply)
}

// cmdBLMPop is BLMPOP timeout numkeys key... LEFT|RIGHT [COUNT n]: the
// arguments are checked before the timeout, as Redis does.
func cmdBLMPop(c *Client, args [][]byte) {
	keys, left, count, ok := parseMPop(c, args, 2, listEnd)
	if !ok {
		return
	}
	deadline, ok := parseBlockTimeout(c, args[1], true)
	if !ok {
		return
	}
	serve := func(w *Client, key string) bool {
		k, vals, err := w.lmpopKeys([][]byte{[]byte(key)}, left, int(count))
		if err != nil || k == nil {
			return false
		}
		w.writeArray(2)
		w.writeBulk(k)
		w.writeArray(len(vals))
		for _, v := range vals {
			w.writeBulkString(v)
		}
		return true
	}
	if firstReady(c, keys, kindList, serve) {
		return
	}
	blockOn(c, keys, deadline, serve, nullArrayReply)
}

func cmdBZPopMin(c *Client, args [][]byte) { blockingZPop(c, args, false) }
func cmdBZPopMax(c *Client, args [][]byte) { blockingZPop(c, args, true) }

// blockingZPop is BZPOPMIN and BZPOPMAX: the reply is one flat [key,
// member, score], in RESP3 too.
func blockingZPop(c *Client, args [][]byte, max bool) {
	deadline, ok := parseBlockTimeout(c, args[len(args)-1], true)
	if !ok {
		return
	}
	keys := args[1 : len(args)-1]
	serve := func(w *Client, key string) bool {
		_, ms, err := w.zmpopKeys([][]byte{[]byte(key)}, max, 1)
		if err != nil || len(ms) == 0 {
			return false
		}
		w.writeArray(3)
		w.writeBulkString(key)
		w.writeBulkString(ms[0].Member)
		w.writeDouble(ms[0].Score)
		return true
	}
	if firstReady(c, keys, kindZSet, serve) {
		return
	}
	blockOn(c, keys, deadline, serve, nullArrayReply)
}

// cmdBZMPop is BZMPOP timeout numkeys key... MIN|MAX [COUNT n]; the reply
// is [key, [[member, score]...]] in both protocols.
func cmdBZMPop(c *Client, args [][]byte) {
	keys, max, count, ok := parseMPop(c, args, 2, zsetEnd)
	if !ok {
		return
	}
	deadline, ok := parseBlockTimeout(c, args[1], true)
	if !ok {
		return
	}
	serve := func(w *Client, key string) bool {
		k, ms, err := w.zmpopKeys([][]byte{[]byte(key)}, max, int(count))
		if err != nil || k == nil {
			return false
		}
		writeKeyAndScoredMembers(w, k, ms)
		return true
	}
	if firstReady(c, keys, kindZSet, serve) {
		return
	}
	blockOn(c, keys, deadline, serve, nullArrayReply)
}

// cmdClientUnblock is CLIENT UNBLOCK id [TIMEOUT|ERROR]: a blocked client
// gets its timeout reply, or the UNBLOCKED error; the reply is 1 if it was
// blocked, else 0.
func cmdClientUnblock(c *Client, args [][]byte) {
	if len(args) > 4 {
		c.writeError("ERR unknown subcommand or wrong number of arguments for '" + truncate(args[1], 128) + "'. Try CLIENT HELP.")
		return
	}
	id, ok := parseInt(args[2])
	if !ok {
		c.writeError(errNotInt)
		return
	}
	withError := false
	if len(args) == 4 {
		switch {
		case equalFold(args[3], "timeout"):
		case equalFold(args[3], "error"):
			withError = true
		default:
			c.writeError("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
			return
		}
	}
	s := c.srv
	s.clientsMu.Lock()
	target := s.clients[id]
	s.clientsMu.Unlock()
	if target != nil && s.unblockByClient(c, target, withError) {
		c.writeInt(1)
		return
	}
	c.writeInt(0)
}
