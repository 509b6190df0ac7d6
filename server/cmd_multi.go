package server

// Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH, as Redis 7.0's
// multi.c. Between MULTI and EXEC every command except EXEC, DISCARD,
// MULTI, WATCH, QUIT and RESET is checked (existence, arity, auth,
// maxmemory) and queued with a copy of its arguments; a rejected one
// aborts the transaction (EXECABORT at EXEC). WATCH registers the client
// on the key in its database (db.watched); any change to the key marks
// the watcher dirty (db.touch), and EXEC of a dirty client, or of one
// whose watched key has expired since, replies a null array.

func init() { registerGroup(registerMultiCommands) }

func registerMultiCommands(t *commandTable) {
	const g = "transactions"
	common := flagNoScript | flagLoading | flagStale | flagFast | flagAllowBusy
	t.add(
		&command{Name: "multi", Fn: cmdMulti, Arity: 1, Flags: common, Group: g, Summary: "Starts a transaction.", Since: "1.2.0"},
		&command{Name: "exec", Fn: cmdExec, Arity: 1, Flags: flagNoScript | flagLoading | flagStale, Group: g, Summary: "Executes all commands in a transaction.", Since: "1.2.0"},
		&command{Name: "discard", Fn: cmdDiscard, Arity: 1, Flags: common, Group: g, Summary: "Discards a transaction.", Since: "2.0.0"},
		&command{Name: "watch", Fn: cmdWatch, Arity: -2, Flags: common, FirstKey: 1, LastKey: -1, Step: 1, Group: g, Summary: "Monitors changes to keys to determine the execution of a transaction.", Since: "2.2.0"},
		&command{Name: "unwatch", Fn: cmdUnwatch, Arity: 1, Flags: common, Group: g, Summary: "Forgets about watched keys of a transaction.", Since: "2.2.0"},
	)
}

// multiState is a client's open transaction.
type multiState struct {
	cmds    []queuedCmd
	aborted bool // a command was rejected while queueing: EXEC replies EXECABORT
}

// queuedCmd is a command waiting for EXEC, with its own copy of the
// arguments (the originals alias the read buffer).
type queuedCmd struct {
	cmd  *command
	args [][]byte
}

// watchedKey is one key a client watches.
type watchedKey struct {
	db  *db
	key string
}

// queue copies args into one allocation and appends them to the
// transaction.
func (m *multiState) queue(cmd *command, args [][]byte) {
	n := 0
	for _, a := range args {
		n += len(a)
	}
	buf := make([]byte, 0, n)
	own := make([][]byte, len(args))
	for i, a := range args {
		buf = append(buf, a...)
		own[i] = buf[len(buf)-len(a) : len(buf) : len(buf)]
	}
	m.cmds = append(m.cmds, queuedCmd{cmd: cmd, args: own})
}

// runsInMulti reports whether cmd runs at once inside MULTI instead of
// being queued (Redis's processCommand list).
func runsInMulti(cmd *command) bool {
	switch cmd.Name {
	case "exec", "discard", "multi", "watch", "quit", "reset":
		return true
	}
	return false
}

// rejectInMulti marks an open transaction as aborted: a command queued
// after MULTI was refused, so EXEC must not run any of them.
func (c *Client) rejectInMulti() {
	if c.multi != nil {
		c.multi.aborted = true
	}
}

func cmdMulti(c *Client, args [][]byte) {
	if c.multi != nil {
		c.writeError("ERR MULTI calls can not be nested")
		return
	}
	c.multi = &multiState{}
	c.writeOK()
}

func cmdDiscard(c *Client, args [][]byte) {
	if c.multi == nil {
		c.writeError("ERR DISCARD without MULTI")
		return
	}
	c.multi = nil
	c.unwatchAll()
	c.writeOK()
}

func cmdExec(c *Client, args [][]byte) {
	m := c.multi
	if m == nil {
		c.writeError("ERR EXEC without MULTI")
		return
	}
	c.multi = nil
	if m.aborted {
		c.unwatchAll()
		c.writeError("EXECABORT Transaction discarded because of previous errors.")
		return
	}
	if c.dirtyCAS || c.watchedKeyExpired() {
		c.unwatchAll()
		c.writeNullArray()
		return
	}
	// Unwatch first, as Redis does: the transaction's own writes must not
	// count against it.
	c.unwatchAll()
	c.writeArray(len(m.cmds))
	outer, errs := c.cur, c.errors
	for _, q := range m.cmds {
		c.call(q.cmd, q.args)
	}
	c.cur, c.errors = outer, errs
}

// execAbort is Redis's execCommandAbort for an EXEC refused by the
// dispatcher: the transaction (if any) is discarded and the reason given
// after EXECABORT.
func (c *Client) execAbort(reason string) {
	c.multi = nil
	c.unwatchAll()
	c.writeError("EXECABORT Transaction discarded because of: " + reason)
}

func cmdWatch(c *Client, args [][]byte) {
	if c.multi != nil {
		c.writeError("ERR WATCH inside MULTI is not allowed")
		return
	}
	for _, k := range args[1:] {
		c.watch(k)
	}
	c.writeOK()
}

func cmdUnwatch(c *Client, args [][]byte) {
	c.unwatchAll()
	c.writeOK()
}

// watch registers c on key in its selected database. An already expired
// key is removed first (lazy expiry), so its deletion does not count as a
// change, as in Redis.
func (c *Client) watch(key []byte) {
	for _, w := range c.watching {
		if w.db == c.db && w.key == string(key) {
			return
		}
	}
	c.db.get(key, c.now)
	k := string(key)
	if c.db.watched == nil {
		c.db.watched = make(map[string][]*Client)
	}
	c.db.watched[k] = append(c.db.watched[k], c)
	c.watching = append(c.watching, watchedKey{db: c.db, key: k})
}

// unwatchAll forgets every watched key and clears the dirty mark. It runs
// with s.mu held (commands, and release when the client leaves).
func (c *Client) unwatchAll() {
	for _, w := range c.watching {
		list := w.db.watched[w.key]
		for i, o := range list {
			if o == c {
				list = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(w.db.watched, w.key)
		} else {
			w.db.watched[w.key] = list
		}
	}
	c.watching = c.watching[:0]
	c.dirtyCAS = false
}

// watchedKeyExpired reports whether a watched key has passed its deadline
// since WATCH without having been deleted yet (Redis's
// isWatchedKeyExpired): the key changed, logically.
func (c *Client) watchedKeyExpired() bool {
	for _, w := range c.watching {
		if at, ok := w.db.expires[w.key]; ok && at <= c.now {
			return true
		}
	}
	return false
}

// touch marks the clients watching key dirty (Redis's touchWatchedKey).
// Every change to a key's value or TTL calls it; without watchers it costs
// a map length check.
func (d *db) touch(key string) {
	// Small enough to be inlined into every write: the work is elsewhere.
	if len(d.watched) == 0 && d.blocking == nil && d.trk == nil {
		return
	}
	d.touchWaiters(key)
}

// touchWaiters is touch for a database with watchers or blocked clients
// (blocking.go's touchBlocked); out of line, or touch would not inline.
//
//go:noinline
func (d *db) touchWaiters(key string) {
	if d.trk != nil {
		d.trk.invalidate(key) // CLIENT TRACKING (tracking.go)
	}
	if d.blocking != nil {
		d.touchBlocked(key)
	}
	for _, c := range d.watched[key] {
		c.dirtyCAS = true
	}
}

// touchAll marks the watchers of every key that exists in d dirty, for
// FLUSHDB and FLUSHALL (Redis's touchAllWatchedKeysInDb): watching a
// missing key survives a flush.
func (d *db) touchAll() {
	for key, cs := range d.watched {
		if _, ok := d.keys[key]; !ok {
			continue
		}
		for _, c := range cs {
			c.dirtyCAS = true
		}
	}
}
