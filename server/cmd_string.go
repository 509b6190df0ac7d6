package server

import (
	"math"
	"strconv"
)

func init() { registerGroup(registerStringCommands) }

func registerStringCommands(t *commandTable) {
	const g = "string"
	w, r := flagWrite|flagDenyOOM, flagReadonly
	t.add(
		&command{Name: "get", Fn: cmdGet, Arity: 2, Flags: r | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Returns the string value of a key.", Since: "1.0.0"},
		&command{Name: "set", Fn: cmdSet, Arity: -3, Flags: w, FirstKey: 1, LastKey: 1, Group: g, Summary: "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.", Since: "1.0.0"},
		&command{Name: "setnx", Fn: cmdSetNX, Arity: 3, Flags: w | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Set the string value of a key only when the key doesn't exist.", Since: "1.0.0"},
		&command{Name: "setex", Fn: cmdSetEX, Arity: 4, Flags: w, FirstKey: 1, LastKey: 1, Group: g, Summary: "Sets the string value and expiration time of a key. Creates the key if it doesn't exist.", Since: "2.0.0"},
		&command{Name: "psetex", Fn: cmdPSetEX, Arity: 4, Flags: w, FirstKey: 1, LastKey: 1, Group: g, Summary: "Sets both string value and expiration time in milliseconds of a key. The key is created if it doesn't exist.", Since: "2.6.0"},
		&command{Name: "mget", Fn: cmdMGet, Arity: -2, Flags: r | flagFast, FirstKey: 1, LastKey: -1, Group: g, Summary: "Atomically returns the string values of one or more keys.", Since: "1.0.0"},
		&command{Name: "mset", Fn: cmdMSet, Arity: -3, Flags: w, FirstKey: 1, LastKey: -1, Step: 2, Group: g, Summary: "Atomically creates or modifies the string values of one or more keys.", Since: "1.0.1"},
		&command{Name: "msetnx", Fn: cmdMSetNX, Arity: -3, Flags: w, FirstKey: 1, LastKey: -1, Step: 2, Group: g, Summary: "Atomically modifies the string values of one or more keys only when all keys don't exist.", Since: "1.0.1"},
		&command{Name: "incr", Fn: cmdIncr, Arity: 2, Flags: w | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", Since: "1.0.0"},
		&command{Name: "decr", Fn: cmdDecr, Arity: 2, Flags: w | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", Since: "1.0.0"},
		&command{Name: "incrby", Fn: cmdIncrBy, Arity: 3, Flags: w | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Increments the integer value of a key by a number. Uses 0 as initial value if the key doesn't exist.", Since: "1.0.0"},
		&command{Name: "decrby", Fn: cmdDecrBy, Arity: 3, Flags: w | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Decrements a number from the integer value of a key. Uses 0 as initial value if the key doesn't exist.", Since: "1.0.0"},
		&command{Name: "incrbyfloat", Fn: cmdIncrByFloat, Arity: 3, Flags: w | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Increment the floating point value of a key by a number. Uses 0 as initial value if the key doesn't exist.", Since: "2.6.0"},
		&command{Name: "append", Fn: cmdAppend, Arity: 3, Flags: w | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Appends a string to the value of a key. Creates the key if it doesn't exist.", Since: "2.0.0"},
		&command{Name: "strlen", Fn: cmdStrlen, Arity: 2, Flags: r | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Returns the length of a string value.", Since: "2.2.0"},
		&command{Name: "getrange", Fn: cmdGetRange, Arity: 4, Flags: r, FirstKey: 1, LastKey: 1, Group: g, Summary: "Returns a substring of the string stored at a key.", Since: "2.4.0"},
		&command{Name: "substr", Fn: cmdGetRange, Arity: 4, Flags: r, FirstKey: 1, LastKey: 1, Group: g, Summary: "Returns a substring from a string value.", Since: "1.0.0"},
		&command{Name: "setrange", Fn: cmdSetRange, Arity: 4, Flags: w, FirstKey: 1, LastKey: 1, Group: g, Summary: "Overwrites a part of a string value with another by an offset. Creates the key if it doesn't exist.", Since: "2.2.0"},
		&command{Name: "getset", Fn: cmdGetSet, Arity: 3, Flags: w | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Returns the previous string value of a key after setting it to a new value.", Since: "1.0.0"},
		&command{Name: "getdel", Fn: cmdGetDel, Arity: 2, Flags: flagWrite | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Returns the string value of a key after deleting the key.", Since: "6.2.0"},
		&command{Name: "getex", Fn: cmdGetEx, Arity: -2, Flags: flagWrite | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Returns the string value of a key after setting its expiration time.", Since: "6.2.0"},
	)
}

func cmdGet(c *Client, args [][]byte) {
	v, found, err := c.getString(args[1])
	switch {
	case err != nil:
		c.writeErr(err)
	case !found:
		c.writeNull()
	default:
		c.writeBulk(v)
	}
}

// setValue stores val at key, reusing the stored buffer when the new value
// has the same length: overwriting a key with a same-sized value (the
// benchmark's and many caches' pattern) then allocates nothing.
func (c *Client) setValue(key, val []byte, keepTTL bool) string {
	if old, ok := c.db.keys[string(key)]; ok && old.kind() == kindString && old.n == uint32(len(val)) && len(val) > 0 {
		copy(old.bytes(), val)
		if bits := c.srv.accessed(old.lru()); bits != old.lru() {
			old.meta = old.meta&^lruMask | bits
			c.db.keys[string(key)] = old
		}
		if !keepTTL && len(c.db.expires) > 0 {
			delete(c.db.expires, string(key))
		}
		c.db.touch(string(key))
		c.srv.stats.dirty++
		return ""
	}
	return c.setString(key, val, keepTTL)
}

// expireArg converts an expiry argument to an absolute unix-ms deadline.
// unit is 1000 for seconds, 1 for ms; abs says the value is a timestamp.
// It writes the error reply and returns ok=false on bad input.
func (c *Client) expireArg(arg []byte, unit int64, abs bool, cmd string) (int64, bool) {
	v, ok := parseInt(arg)
	if !ok {
		c.writeError(errNotInt)
		return 0, false
	}
	if v <= 0 {
		c.writeError("ERR invalid expire time in '" + cmd + "' command")
		return 0, false
	}
	if v > math.MaxInt64/unit {
		c.writeError("ERR invalid expire time in '" + cmd + "' command")
		return 0, false
	}
	v *= unit
	if !abs {
		if v > math.MaxInt64-c.now {
			c.writeError("ERR invalid expire time in '" + cmd + "' command")
			return 0, false
		}
		v += c.now
	}
	return v, true
}

func cmdSet(c *Client, args [][]byte) {
	key, val := args[1], args[2]
	if len(args) == 3 {
		c.setValue(key, val, false)
		c.writeOK()
		return
	}
	var nx, xx, get, keepTTL bool
	var expArg []byte
	var unit int64
	var abs bool
	for i := 3; i < len(args); i++ {
		a := args[i]
		hasNext := i+1 < len(args)
		switch {
		case equalFold(a, "nx") && !xx:
			nx = true
		case equalFold(a, "xx") && !nx:
			xx = true
		case equalFold(a, "get"):
			get = true
		case equalFold(a, "keepttl") && expArg == nil:
			keepTTL = true
		case (equalFold(a, "ex") || equalFold(a, "px") || equalFold(a, "exat") || equalFold(a, "pxat")) && !keepTTL && expArg == nil && hasNext:
			unit = 1000
			if a[0] == 'p' || a[0] == 'P' {
				unit = 1
			}
			abs = len(a) == 4
			expArg = args[i+1]
			i++
		default:
			c.writeError(errSyntax)
			return
		}
	}
	var at int64
	if expArg != nil {
		var ok bool
		if at, ok = c.expireArg(expArg, unit, abs, "set"); !ok {
			return
		}
	}
	old, found, err := c.getString(key)
	if err != nil && get {
		c.writeErr(err)
		return
	}
	if nx && found || xx && !found {
		if get && found {
			c.writeBulk(old)
		} else {
			c.writeNull()
		}
		return
	}
	if get {
		if found {
			c.writeBulk(old)
		} else {
			c.writeNull()
		}
	}
	// The reply above was copied into the output buffer, so the old value
	// may now be overwritten in place.
	shared := c.setValue(key, val, keepTTL)
	if expArg != nil {
		if at <= c.now {
			c.deleteKey(key)
		} else {
			c.db.setExpire(key, shared, at)
		}
	}
	if !get {
		c.writeOK()
	}
}

func cmdSetNX(c *Client, args [][]byte) {
	if _, ok := c.db.get(args[1], c.now); ok {
		c.writeInt(0)
		return
	}
	c.setString(args[1], args[2], false)
	c.writeInt(1)
}

func (c *Client) setWithExpire(args [][]byte, unit int64, name string) {
	at, ok := c.expireArg(args[2], unit, false, name)
	if !ok {
		return
	}
	shared := c.setValue(args[1], args[3], false)
	c.db.setExpire(args[1], shared, at)
	c.writeOK()
}

func cmdSetEX(c *Client, args [][]byte)  { c.setWithExpire(args, 1000, "setex") }
func cmdPSetEX(c *Client, args [][]byte) { c.setWithExpire(args, 1, "psetex") }

func cmdMGet(c *Client, args [][]byte) {
	c.writeArray(len(args) - 1)
	for _, k := range args[1:] {
		v, found, err := c.getString(k)
		if !found || err != nil {
			c.writeNull()
			continue
		}
		c.writeBulk(v)
	}
}

func cmdMSet(c *Client, args [][]byte) {
	if len(args)%2 != 1 {
		c.writeArityError("mset")
		return
	}
	for i := 1; i < len(args); i += 2 {
		c.setValue(args[i], args[i+1], false)
	}
	c.writeOK()
}

func cmdMSetNX(c *Client, args [][]byte) {
	if len(args)%2 != 1 {
		c.writeArityError("msetnx")
		return
	}
	for i := 1; i < len(args); i += 2 {
		if _, ok := c.db.get(args[i], c.now); ok {
			c.writeInt(0)
			return
		}
	}
	for i := 1; i < len(args); i += 2 {
		c.setValue(args[i], args[i+1], false)
	}
	c.writeInt(1)
}

// incrBy adds delta to the integer at key, keeping its TTL.
func (c *Client) incrBy(key []byte, delta int64) {
	v, found, err := c.getString(key)
	if err != nil {
		c.writeErr(err)
		return
	}
	var cur int64
	if found {
		n, ok := parseInt(v)
		if !ok {
			c.writeError(errNotInt)
			return
		}
		cur = n
	}
	if delta > 0 && cur > math.MaxInt64-delta || delta < 0 && cur < math.MinInt64-delta {
		c.writeError(errOverflow)
		return
	}
	cur += delta
	var tmp [24]byte
	c.setValue(key, strconv.AppendInt(tmp[:0], cur, 10), true)
	c.writeInt(cur)
}

func cmdIncr(c *Client, args [][]byte) { c.incrBy(args[1], 1) }
func cmdDecr(c *Client, args [][]byte) { c.incrBy(args[1], -1) }

func cmdIncrBy(c *Client, args [][]byte) {
	d, ok := parseInt(args[2])
	if !ok {
		c.writeError(errNotInt)
		return
	}
	c.incrBy(args[1], d)
}

func cmdDecrBy(c *Client, args [][]byte) {
	d, ok := parseInt(args[2])
	if !ok {
		c.writeError(errNotInt)
		return
	}
	if d == math.MinInt64 {
		c.writeError("ERR decrement would overflow")
		return
	}
	c.incrBy(args[1], -d)
}

// cmdIncrByFloat computes in long double precision as Redis does on
// x86-64 (parseLongDouble and friends in type_numbers.go), so results print
// digit for digit the same.
func cmdIncrByFloat(c *Client, args [][]byte) {
	v, found, err := c.getString(args[1])
	if err != nil {
		c.writeErr(err)
		return
	}
	cur, _ := parseLongDouble([]byte("0"))
	if found {
		f, ok := parseLongDouble(v)
		if !ok {
			c.writeError(errNotFloat)
			return
		}
		cur = f
	}
	incr, ok := parseLongDouble(args[2])
	if !ok {
		c.writeError(errNotFloat)
		return
	}
	sum, ok := addLongDouble(cur, incr)
	if !ok {
		c.writeError("ERR increment would produce NaN or Infinity")
		return
	}
	s := formatLongDoubleHuman(sum)
	c.setValue(args[1], []byte(s), true)
	c.writeBulkString(s)
}

func (c *Client) maxString() int64 { return c.srv.maxBulk() }

func cmdAppend(c *Client, args [][]byte) {
	v, found, err := c.getString(args[1])
	if err != nil {
		c.writeErr(err)
		return
	}
	if int64(len(v))+int64(len(args[2])) > c.maxString() {
		c.writeError(errStringLimit)
		return
	}
	if !found {
		c.setString(args[1], args[2], false)
		c.writeInt(int64(len(args[2])))
		return
	}
	nv := make([]byte, len(v)+len(args[2]))
	copy(nv, v)
	copy(nv[len(v):], args[2])
	c.storeString(args[1], nv, true)
	c.writeInt(int64(len(nv)))
}

func cmdStrlen(c *Client, args [][]byte) {
	v, _, err := c.getString(args[1])
	if err != nil {
		c.writeErr(err)
		return
	}
	c.writeInt(int64(len(v)))
}

func cmdGetRange(c *Client, args [][]byte) {
	start, ok1 := parseInt(args[2])
	end, ok2 := parseInt(args[3])
	if !ok1 || !ok2 {
		c.writeError(errNotInt)
		return
	}
	v, _, err := c.getString(args[1])
	if err != nil {
		c.writeErr(err)
		return
	}
	n := int64(len(v))
	if start < 0 && end < 0 && start > end {
		c.writeBulkString("")
		return
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	if start < 0 {
		start = 0
	}
	if end < 0 {
		end = 0
	}
	if end >= n {
		end = n - 1
	}
	if start > end || n == 0 {
		c.writeBulkString("")
		return
	}
	c.writeBulk(v[start : end+1])
}

func cmdSetRange(c *Client, args [][]byte) {
	off, ok := parseInt(args[2])
	if !ok {
		c.writeError(errNotInt)
		return
	}
	if off < 0 {
		c.writeError("ERR offset is out of range")
		return
	}
	val := args[3]
	v, found, err := c.getString(args[1])
	if err != nil {
		c.writeErr(err)
		return
	}
	if len(val) == 0 {
		c.writeInt(int64(len(v)))
		return
	}
	// Compared without adding: off+len(val) overflows for an offset near
	// 2^63.
	if off > c.maxString()-int64(len(val)) {
		c.writeError(errStringLimit)
		return
	}
	size := max(int64(len(v)), off+int64(len(val)))
	nv := make([]byte, size)
	copy(nv, v)
	copy(nv[off:], val)
	c.storeString(args[1], nv, found)
	c.writeInt(size)
}

func cmdGetSet(c *Client, args [][]byte) {
	v, found, err := c.getString(args[1])
	if err != nil {
		c.writeErr(err)
		return
	}
	if found {
		c.writeBulk(v)
	} else {
		c.writeNull()
	}
	c.setValue(args[1], args[2], false)
}

func cmdGetDel(c *Client, args [][]byte) {
	v, found, err := c.getString(args[1])
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found {
		c.writeNull()
		return
	}
	c.writeBulk(v)
	c.deleteKey(args[1])
}

func cmdGetEx(c *Client, args [][]byte) {
	var expArg []byte
	var unit int64
	var abs, persist bool
	for i := 2; i < len(args); i++ {
		a := args[i]
		switch {
		case equalFold(a, "persist") && expArg == nil && !persist:
			persist = true
		case (equalFold(a, "ex") || equalFold(a, "px") || equalFold(a, "exat") || equalFold(a, "pxat")) && expArg == nil && !persist && i+1 < len(args):
			unit = 1000
			if a[0] == 'p' || a[0] == 'P' {
				unit = 1
			}
			abs = len(a) == 4
			expArg = args[i+1]
			i++
		default:
			c.writeError(errSyntax)
			return
		}
	}
	// Redis looks the key up (nil, WRONGTYPE) before it validates the
	// expire time: GETEX missing PX -1 is a nil reply, not an error.
	v, found, err := c.getString(args[1])
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found {
		c.writeNull()
		return
	}
	var at int64
	if expArg != nil {
		var ok bool
		if at, ok = c.expireArg(expArg, unit, abs, "getex"); !ok {
			return
		}
	}
	c.writeBulk(v)
	switch {
	case expArg != nil && at <= c.now:
		c.deleteKey(args[1])
	case expArg != nil:
		c.db.setExpire(args[1], "", at)
		c.srv.stats.dirty++
	case persist:
		if _, ok := c.db.expires[string(args[1])]; ok {
			delete(c.db.expires, string(args[1]))
			c.db.touch(string(args[1]))
			c.srv.stats.dirty++
		}
	}
}
