package server

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

func init() { registerGroup(registerKeyCommands) }

func registerKeyCommands(t *commandTable) {
	const g = "generic"
	w, r := flagWrite, flagReadonly
	t.add(
		&command{Name: "del", Fn: cmdDel, Arity: -2, Flags: w, FirstKey: 1, LastKey: -1, Group: g, Summary: "Deletes one or more keys.", Since: "1.0.0"},
		&command{Name: "unlink", Fn: cmdDel, Arity: -2, Flags: w | flagFast, FirstKey: 1, LastKey: -1, Group: g, Summary: "Asynchronously deletes one or more keys.", Since: "4.0.0"},
		&command{Name: "exists", Fn: cmdExists, Arity: -2, Flags: r | flagFast, FirstKey: 1, LastKey: -1, Group: g, Summary: "Determines whether one or more keys exist.", Since: "1.0.0"},
		&command{Name: "touch", Fn: cmdTouch, Arity: -2, Flags: r | flagFast, FirstKey: 1, LastKey: -1, Group: g, Summary: "Returns the number of existing keys out of those specified after updating the time they were last accessed.", Since: "3.2.1"},
		&command{Name: "expire", Fn: cmdExpire, Arity: -3, Flags: w | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Sets the expiration time of a key in seconds.", Since: "1.0.0"},
		&command{Name: "pexpire", Fn: cmdPExpire, Arity: -3, Flags: w | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Sets the expiration time of a key in milliseconds.", Since: "2.6.0"},
		&command{Name: "expireat", Fn: cmdExpireAt, Arity: -3, Flags: w | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Sets the expiration time of a key to a Unix timestamp.", Since: "1.2.0"},
		&command{Name: "pexpireat", Fn: cmdPExpireAt, Arity: -3, Flags: w | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Sets the expiration time of a key to a Unix milliseconds timestamp.", Since: "2.6.0"},
		&command{Name: "ttl", Fn: cmdTTL, Arity: 2, Flags: r | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Returns the expiration time in seconds of a key.", Since: "1.0.0"},
		&command{Name: "pttl", Fn: cmdPTTL, Arity: 2, Flags: r | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Returns the expiration time in milliseconds of a key.", Since: "2.6.0"},
		&command{Name: "expiretime", Fn: cmdExpireTime, Arity: 2, Flags: r | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Returns the expiration time of a key as a Unix timestamp.", Since: "7.0.0"},
		&command{Name: "pexpiretime", Fn: cmdPExpireTime, Arity: 2, Flags: r | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Returns the expiration time of a key as a Unix milliseconds timestamp.", Since: "7.0.0"},
		&command{Name: "persist", Fn: cmdPersist, Arity: 2, Flags: w | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Removes the expiration time of a key.", Since: "2.2.0"},
		&command{Name: "type", Fn: cmdType, Arity: 2, Flags: r | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Determines the type of value stored at a key.", Since: "1.0.0"},
		&command{Name: "keys", Fn: cmdKeys, Arity: 2, Flags: r, Group: g, Summary: "Returns all key names that match a pattern.", Since: "1.0.0"},
		&command{Name: "scan", Fn: cmdScan, Arity: -2, Flags: r, Group: g, Summary: "Iterates over the key names in the database.", Since: "2.8.0"},
		&command{Name: "rename", Fn: cmdRename, Arity: 3, Flags: w, FirstKey: 1, LastKey: 2, Group: g, Summary: "Renames a key and overwrites the destination.", Since: "1.0.0"},
		&command{Name: "renamenx", Fn: cmdRenameNX, Arity: 3, Flags: w | flagFast, FirstKey: 1, LastKey: 2, Group: g, Summary: "Renames a key only when the target key name doesn't exist.", Since: "1.0.0"},
		&command{Name: "randomkey", Fn: cmdRandomKey, Arity: 1, Flags: r, Group: g, Summary: "Returns a random key name from the database.", Since: "1.0.0"},
		&command{Name: "copy", Fn: cmdCopy, Arity: -3, Flags: w | flagDenyOOM, FirstKey: 1, LastKey: 2, Group: g, Summary: "Copy a key", Since: "6.2.0"},
		&command{Name: "move", Fn: cmdMove, Arity: 3, Flags: w | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Move a key to another database", Since: "1.0.0"},
		&command{Name: "swapdb", Fn: cmdSwapDB, Arity: 3, Flags: w | flagFast, Group: g, Summary: "Swaps two Redis databases", Since: "4.0.0"},
		&command{Name: "dump", Fn: cmdDump, Arity: 2, Flags: r, FirstKey: 1, LastKey: 1, Group: g, Summary: "Return a serialized version of the value stored at the specified key.", Since: "2.6.0"},
		&command{Name: "restore", Fn: cmdRestore, Arity: -4, Flags: w | flagDenyOOM, FirstKey: 1, LastKey: 1, Group: g, Summary: "Create a key using the provided serialized value, previously obtained using DUMP.", Since: "2.6.0"},
	)
}

func cmdDel(c *Client, args [][]byte) {
	var n int64
	for _, k := range args[1:] {
		if c.deleteKey(k) {
			n++
		}
	}
	c.writeInt(n)
}

// cmdExists counts existing keys without touching their access clock
// (Redis's LOOKUP_NOTOUCH); TOUCH is the same count with the touch.
func cmdExists(c *Client, args [][]byte) {
	var n int64
	for _, k := range args[1:] {
		if _, ok := c.peek(k); ok {
			n++
		}
	}
	c.writeInt(n)
}

func cmdTouch(c *Client, args [][]byte) {
	var n int64
	for _, k := range args[1:] {
		if _, ok := c.lookup(k); ok {
			n++
		}
	}
	c.writeInt(n)
}

func cmdExpire(c *Client, args [][]byte)    { c.expire(args, 1000, false) }
func cmdPExpire(c *Client, args [][]byte)   { c.expire(args, 1, false) }
func cmdExpireAt(c *Client, args [][]byte)  { c.expire(args, 1000, true) }
func cmdPExpireAt(c *Client, args [][]byte) { c.expire(args, 1, true) }

// expire implements the EXPIRE family with Redis 7's NX/XX/GT/LT options.
func (c *Client) expire(args [][]byte, unit int64, abs bool) {
	name := strings.ToLower(string(args[0]))
	var nx, xx, gt, lt bool
	for _, a := range args[3:] {
		switch {
		case equalFold(a, "nx"):
			nx = true
		case equalFold(a, "xx"):
			xx = true
		case equalFold(a, "gt"):
			gt = true
		case equalFold(a, "lt"):
			lt = true
		default:
			c.writeError("ERR Unsupported option " + truncate(a, 128))
			return
		}
	}
	if nx && (xx || gt || lt) {
		c.writeError("ERR NX and XX, GT or LT options at the same time are not compatible")
		return
	}
	if gt && lt {
		c.writeError("ERR GT and LT options at the same time are not compatible")
		return
	}
	v, ok := parseInt(args[2])
	if !ok {
		c.writeError(errNotInt)
		return
	}
	invalid := "ERR invalid expire time in '" + name + "' command"
	if v > math.MaxInt64/unit || v < math.MinInt64/unit {
		c.writeError(invalid)
		return
	}
	at := v * unit
	if !abs {
		if at > 0 && at > math.MaxInt64-c.now || at < 0 && at < math.MinInt64+c.now {
			c.writeError(invalid)
			return
		}
		at += c.now
	}
	if _, found := c.db.get(args[1], c.now); !found {
		c.writeInt(0)
		return
	}
	cur, has := c.db.expires[string(args[1])]
	switch {
	case nx && has, xx && !has:
		c.writeInt(0)
		return
	case gt && (!has || at <= cur):
		c.writeInt(0)
		return
	case lt && has && at >= cur:
		c.writeInt(0)
		return
	}
	if at <= c.now {
		c.deleteKey(args[1])
		c.writeInt(1)
		return
	}
	c.db.setExpire(args[1], "", at)
	c.srv.stats.dirty++
	c.writeInt(1)
}

// ttlMs returns the remaining TTL in ms, -1 without TTL, -2 when missing.
func (c *Client) ttlMs(key []byte) int64 {
	if _, ok := c.lookup(key); !ok {
		return -2
	}
	at, ok := c.db.expires[string(key)]
	if !ok {
		return -1
	}
	return max(at-c.now, 0)
}

func cmdTTL(c *Client, args [][]byte) {
	t := c.ttlMs(args[1])
	if t >= 0 {
		t = (t + 500) / 1000
	}
	c.writeInt(t)
}

func cmdPTTL(c *Client, args [][]byte) { c.writeInt(c.ttlMs(args[1])) }

func (c *Client) expireTime(key []byte, unit int64) {
	if _, ok := c.lookup(key); !ok {
		c.writeInt(-2)
		return
	}
	at, ok := c.db.expires[string(key)]
	if !ok {
		c.writeInt(-1)
		return
	}
	c.writeInt(at / unit)
}

func cmdExpireTime(c *Client, args [][]byte)  { c.expireTime(args[1], 1000) }
func cmdPExpireTime(c *Client, args [][]byte) { c.expireTime(args[1], 1) }

func cmdPersist(c *Client, args [][]byte) {
	if _, ok := c.lookup(args[1]); !ok {
		c.writeInt(0)
		return
	}
	if _, ok := c.db.expires[string(args[1])]; !ok {
		c.writeInt(0)
		return
	}
	delete(c.db.expires, string(args[1]))
	c.db.touch(string(args[1]))
	c.srv.stats.dirty++
	c.writeInt(1)
}

func cmdType(c *Client, args [][]byte) {
	e, ok := c.peek(args[1])
	if !ok {
		c.writeSimple("none")
		return
	}
	c.writeSimple(e.kind().String())
}

func cmdKeys(c *Client, args [][]byte) {
	pat := args[1]
	all := len(pat) == 1 && pat[0] == '*'
	var out []string
	for k := range c.db.keys {
		if at, ok := c.db.expires[k]; ok && at <= c.now {
			continue
		}
		if all || globMatch(pat, []byte(k), false) {
			out = append(out, k)
		}
	}
	c.writeArray(len(out))
	for _, k := range out {
		c.writeBulkString(k)
	}
}

func parseUint(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var v uint64
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		nv := v*10 + uint64(ch-'0')
		if nv/10 != v {
			return 0, false
		}
		v = nv
	}
	return v, true
}

func appendUint(b []byte, v uint64) []byte {
	if v == 0 {
		return append(b, '0')
	}
	var tmp [20]byte
	i := len(tmp)
	for v > 0 {
		i--
		tmp[i] = byte('0' + v%10)
		v /= 10
	}
	return append(b, tmp[i:]...)
}

// rename moves src to dst keeping the value and TTL; nx refuses an
// existing dst.
func (c *Client) rename(args [][]byte, nx bool) {
	src, dst := args[1], args[2]
	e, ok := c.db.get(src, c.now)
	if !ok {
		c.writeError(errNoSuchKey)
		return
	}
	if string(src) == string(dst) {
		if nx {
			c.writeInt(0)
		} else {
			c.writeOK()
		}
		return
	}
	if _, exists := c.db.get(dst, c.now); exists {
		if nx {
			c.writeInt(0)
			return
		}
		c.deleteKey(dst)
	}
	at, hasTTL := c.db.expires[string(src)]
	// Move without marking a container gone: it lives on under dst.
	c.db.used -= c.db.entryMem(string(src), e)
	delete(c.db.keys, string(src))
	delete(c.db.expires, string(src))
	c.db.touch(string(src))
	shared := c.db.put(dst, e)
	if hasTTL {
		c.db.setExpire(dst, shared, at)
	}
	c.srv.stats.dirty += 2
	if nx {
		c.writeInt(1)
	} else {
		c.writeOK()
	}
}

func cmdRename(c *Client, args [][]byte)   { c.rename(args, false) }
func cmdRenameNX(c *Client, args [][]byte) { c.rename(args, true) }

func cmdRandomKey(c *Client, args [][]byte) {
	k, ok := c.db.randomKey(c.now)
	if !ok {
		c.writeNull()
		return
	}
	c.writeBulkString(k)
}

// dbArg parses a database index as Redis's getIntFromObjectOrReply and
// selectDb do. It writes the error (msg, or the generic one) and returns
// nil on bad input.
func (c *Client) dbArg(b []byte, msg string) (*db, int) {
	n, ok := parseInt(b)
	switch {
	case msg != "" && (!ok || n < math.MinInt32 || n > math.MaxInt32):
		c.writeError(msg)
		return nil, 0
	case !ok:
		c.writeError(errNotInt)
		return nil, 0
	case n < math.MinInt32 || n > math.MaxInt32:
		c.writeError("ERR value is out of range, value must between -2147483648 and 2147483647")
		return nil, 0
	}
	if n < 0 || n >= int64(len(c.srv.dbs)) {
		c.writeError("ERR DB index is out of range")
		return nil, 0
	}
	return c.srv.dbs[n], int(n)
}

// cloneEntry returns an independent copy of e's value: a string's bytes,
// or a deep copy of a container in the same encoding.
func cloneEntry(e entry, clock uint32) entry {
	if e.kind() == kindString {
		return stringEntry(slices.Clone(e.bytes()), clock)
	}
	var o object
	switch v := e.box().o.(type) {
	case *List:
		o = v.clone()
	case *Hash:
		o = v.clone()
	case *Set:
		o = v.clone()
	case *ZSet:
		o = v.clone()
	case *Stream:
		o = v.clone()
	default:
		panic(fmt.Sprintf("server: COPY of an unknown value type %T", v))
	}
	return objectEntry(&objBox{o: o, mem: o.memUsage()}, e.kind(), clock)
}

const errSameObject = "ERR source and destination objects are the same"

// cmdCopy is Redis 7.0's COPY source destination [DB n] [REPLACE]: the
// value and its TTL are duplicated.
func cmdCopy(c *Client, args [][]byte) {
	dst := c.db
	replace := false
	for j := 3; j < len(args); j++ {
		switch {
		case equalFold(args[j], "replace"):
			replace = true
		case equalFold(args[j], "db") && j+1 < len(args):
			if dst, _ = c.dbArg(args[j+1], ""); dst == nil {
				return
			}
			j++
		default:
			c.writeError(errSyntax)
			return
		}
	}
	src, key, newKey := c.db, args[1], args[2]
	if src == dst && string(key) == string(newKey) {
		c.writeError(errSameObject)
		return
	}
	e, ok := c.lookup(key)
	if !ok {
		c.writeInt(0)
		return
	}
	at, hasTTL := src.expires[string(key)]
	if _, exists := dst.get(newKey, c.now); exists {
		if !replace {
			c.writeInt(0)
			return
		}
		old, _ := dst.get(newKey, c.now)
		dst.remove(string(newKey), old)
	}
	shared := dst.put(newKey, cloneEntry(e, c.srv.newClock))
	if hasTTL {
		dst.setExpire(newKey, shared, at)
	}
	c.srv.stats.dirty++
	c.writeInt(1)
}

// cmdMove is MOVE key db: the key, its value and TTL leave this database
// for the other, unless the key exists there.
func cmdMove(c *Client, args [][]byte) {
	dst, _ := c.dbArg(args[2], "")
	if dst == nil {
		return
	}
	src, key := c.db, args[1]
	if src == dst {
		c.writeError(errSameObject)
		return
	}
	e, ok := c.lookup(key)
	if !ok {
		c.writeInt(0)
		return
	}
	if _, exists := dst.get(key, c.now); exists {
		c.writeInt(0)
		return
	}
	at, hasTTL := src.expires[string(key)]
	// Move without marking a container gone: it lives on in dst.
	src.used -= src.entryMem(string(key), e)
	delete(src.keys, string(key))
	delete(src.expires, string(key))
	src.touch(string(key))
	shared := dst.put(key, e)
	if hasTTL {
		dst.setExpire(key, shared, at)
	}
	c.srv.stats.dirty++
	c.writeInt(1)
}

// cmdSwapDB is SWAPDB a b. Clients keep their database by number, so the
// data moves between the two db values and each keeps its watchers, as in
// Redis (which swaps the dictionaries under the same redisDb ids).
func cmdSwapDB(c *Client, args [][]byte) {
	a, _ := c.dbArg(args[1], "ERR invalid first DB index")
	if a == nil {
		return
	}
	b, _ := c.dbArg(args[2], "ERR invalid second DB index")
	if b == nil {
		return
	}
	if a != b {
		// A watched key that exists on either side before the swap has
		// changed (Redis's touchAllWatchedKeysInDb(a, b) and (b, a)).
		touchSwapped(a, b)
		touchSwapped(b, a)
		a.keys, b.keys = b.keys, a.keys
		a.expires, b.expires = b.expires, a.expires
		a.used, b.used = b.used, a.used
		a.scans, b.scans = b.scans, a.scans
		a.signalSwapped()
		b.signalSwapped()
	}
	c.srv.stats.dirty++
	c.writeOK()
}

// touchSwapped marks d's watchers dirty for every watched key that exists
// in d or in other, the database about to take d's place.
func touchSwapped(d, other *db) {
	for key, cs := range d.watched {
		_, inD := d.keys[key]
		_, inOther := other.keys[key]
		if !inD && !inOther {
			continue
		}
		for _, w := range cs {
			w.dirtyCAS = true
		}
	}
}
