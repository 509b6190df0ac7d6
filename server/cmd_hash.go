package server

import (
	"strconv"
)

// Hash commands (t_hash.c), replies and errors as in Redis 7.0.

func init() { registerGroup(registerHashCommands) }

func registerHashCommands(t *commandTable) {
	const w, r = flagWrite, flagReadonly
	t.add(
		&command{Name: "hset", Fn: cmdHSet, Arity: -4, Flags: w | flagDenyOOM | flagFast, FirstKey: 1, LastKey: 1, Group: "hash", Summary: "Creates or modifies the value of a field in a hash.", Since: "2.0.0"},
		&command{Name: "hmset", Fn: cmdHSet, Arity: -4, Flags: w | flagDenyOOM | flagFast, FirstKey: 1, LastKey: 1, Group: "hash", Summary: "Sets the values of multiple fields.", Since: "2.0.0"},
		&command{Name: "hsetnx", Fn: cmdHSetNX, Arity: 4, Flags: w | flagDenyOOM | flagFast, FirstKey: 1, LastKey: 1, Group: "hash", Summary: "Sets the value of a field in a hash only when the field doesn't exist.", Since: "2.0.0"},
		&command{Name: "hget", Fn: cmdHGet, Arity: 3, Flags: r | flagFast, FirstKey: 1, LastKey: 1, Group: "hash", Summary: "Returns the value of a field in a hash.", Since: "2.0.0"},
		&command{Name: "hmget", Fn: cmdHMGet, Arity: -3, Flags: r | flagFast, FirstKey: 1, LastKey: 1, Group: "hash", Summary: "Returns the values of all fields in a hash.", Since: "2.0.0"},
		&command{Name: "hgetall", Fn: cmdHGetAll, Arity: 2, Flags: r, FirstKey: 1, LastKey: 1, Group: "hash", Summary: "Returns all fields and values in a hash.", Since: "2.0.0"},
		&command{Name: "hkeys", Fn: cmdHKeys, Arity: 2, Flags: r, FirstKey: 1, LastKey: 1, Group: "hash", Summary: "Returns all fields in a hash.", Since: "2.0.0"},
		&command{Name: "hvals", Fn: cmdHVals, Arity: 2, Flags: r, FirstKey: 1, LastKey: 1, Group: "hash", Summary: "Returns all values in a hash.", Since: "2.0.0"},
		&command{Name: "hdel", Fn: cmdHDel, Arity: -3, Flags: w | flagFast, FirstKey: 1, LastKey: 1, Group: "hash", Summary: "Deletes one or more fields and their values from a hash. Deletes the hash if no fields remain.", Since: "2.0.0"},
		&command{Name: "hlen", Fn: cmdHLen, Arity: 2, Flags: r | flagFast, FirstKey: 1, LastKey: 1, Group: "hash", Summary: "Returns the number of fields in a hash.", Since: "2.0.0"},
		&command{Name: "hexists", Fn: cmdHExists, Arity: 3, Flags: r | flagFast, FirstKey: 1, LastKey: 1, Group: "hash", Summary: "Determines whether a field exists in a hash.", Since: "2.0.0"},
		&command{Name: "hstrlen", Fn: cmdHStrLen, Arity: 3, Flags: r | flagFast, FirstKey: 1, LastKey: 1, Group: "hash", Summary: "Returns the length of the value of a field.", Since: "3.2.0"},
		&command{Name: "hincrby", Fn: cmdHIncrBy, Arity: 4, Flags: w | flagDenyOOM | flagFast, FirstKey: 1, LastKey: 1, Group: "hash", Summary: "Increments the integer value of a field in a hash by a number. Uses 0 as initial value if the field doesn't exist.", Since: "2.0.0"},
		&command{Name: "hincrbyfloat", Fn: cmdHIncrByFloat, Arity: 4, Flags: w | flagDenyOOM | flagFast, FirstKey: 1, LastKey: 1, Group: "hash", Summary: "Increments the floating point value of a field by a number. Uses 0 as initial value if the field doesn't exist.", Since: "2.6.0"},
	)
}

func newHash() *Hash { return &Hash{} }

// getOrCreateHash is getOrCreateObject for a hash, a new one taking the
// server's encoding thresholds.
func getOrCreateHash(c *Client, key []byte) (*Hash, error) {
	h, err := getOrCreateObject(c, key, kindHash, newHash)
	if err == nil && h.lim == nil {
		h.lim = c.tuning()
	}
	return h, err
}

// tuning is the server's encoding thresholds, for containers it creates.
func (c *Client) tuning() *Tuning { return &c.srv.cfg.Tuning }

// cmdHSet is HSET (replies the number of new fields) and HMSET (+OK).
func cmdHSet(c *Client, args [][]byte) {
	if len(args)%2 == 1 {
		c.writeArityError(c.cur.Name)
		return
	}
	h, err := getOrCreateHash(c, args[1])
	if err != nil {
		c.writeErr(err)
		return
	}
	created := 0
	for i := 2; i < len(args); i += 2 {
		if h.SetBytes(args[i], args[i+1]) {
			created++
		}
	}
	c.signalModified(args[1])
	if c.cur.Name == "hmset" {
		c.writeOK()
		return
	}
	c.writeInt(int64(created))
}

func cmdHSetNX(c *Client, args [][]byte) {
	h, err := getOrCreateHash(c, args[1])
	if err != nil {
		c.writeErr(err)
		return
	}
	if _, ok := h.GetBytes(args[2]); ok {
		c.writeInt(0)
		return
	}
	h.SetBytes(args[2], args[3])
	c.signalModified(args[1])
	c.writeInt(1)
}

func cmdHGet(c *Client, args [][]byte) {
	h, found, err := getObject[*Hash](c, args[1], kindHash)
	if err != nil {
		c.writeErr(err)
		return
	}
	if found {
		if v, ok := h.GetBytes(args[2]); ok {
			c.writeBulk(v)
			return
		}
	}
	c.writeNull()
}

func cmdHMGet(c *Client, args [][]byte) {
	h, found, err := getObject[*Hash](c, args[1], kindHash)
	if err != nil {
		c.writeErr(err)
		return
	}
	c.writeArray(len(args) - 2)
	for _, f := range args[2:] {
		if found {
			if v, ok := h.GetBytes(f); ok {
				c.writeBulk(v)
				continue
			}
		}
		c.writeNull()
	}
}

func cmdHGetAll(c *Client, args [][]byte) {
	h, found, err := getObject[*Hash](c, args[1], kindHash)
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found {
		c.writeMap(0)
		return
	}
	c.writeMap(h.Len())
	h.EachBytes(func(f, v []byte) bool {
		c.writeBulk(f)
		c.writeBulk(v)
		return true
	})
}

func cmdHKeys(c *Client, args [][]byte) { hashKeysOrVals(c, args, true) }
func cmdHVals(c *Client, args [][]byte) { hashKeysOrVals(c, args, false) }

func hashKeysOrVals(c *Client, args [][]byte, keys bool) {
	h, found, err := getObject[*Hash](c, args[1], kindHash)
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found {
		c.writeArray(0)
		return
	}
	c.writeArray(h.Len())
	h.EachBytes(func(f, v []byte) bool {
		if keys {
			c.writeBulk(f)
		} else {
			c.writeBulk(v)
		}
		return true
	})
}

func cmdHDel(c *Client, args [][]byte) {
	h, found, err := getObject[*Hash](c, args[1], kindHash)
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found {
		c.writeInt(0)
		return
	}
	deleted := 0
	for _, f := range args[2:] {
		if h.DeleteBytes(f) {
			deleted++
			if h.Len() == 0 {
				c.deleteKey(args[1])
				break
			}
		}
	}
	if deleted > 0 {
		c.signalModified(args[1])
	}
	c.writeInt(int64(deleted))
}

func cmdHLen(c *Client, args [][]byte) {
	h, found, err := getObject[*Hash](c, args[1], kindHash)
	switch {
	case err != nil:
		c.writeErr(err)
	case !found:
		c.writeInt(0)
	default:
		c.writeInt(int64(h.Len()))
	}
}

func cmdHExists(c *Client, args [][]byte) {
	h, found, err := getObject[*Hash](c, args[1], kindHash)
	if err != nil {
		c.writeErr(err)
		return
	}
	if found {
		if _, ok := h.GetBytes(args[2]); ok {
			c.writeInt(1)
			return
		}
	}
	c.writeInt(0)
}

func cmdHStrLen(c *Client, args [][]byte) {
	h, found, err := getObject[*Hash](c, args[1], kindHash)
	if err != nil {
		c.writeErr(err)
		return
	}
	if found {
		if v, ok := h.GetBytes(args[2]); ok {
			c.writeInt(int64(len(v)))
			return
		}
	}
	c.writeInt(0)
}

func cmdHIncrBy(c *Client, args [][]byte) {
	incr, ok := parseInt(args[3])
	if !ok {
		c.writeError(errNotInt)
		return
	}
	h, err := getOrCreateHash(c, args[1])
	if err != nil {
		c.writeErr(err)
		return
	}
	var cur int64
	if v, ok := h.GetBytes(args[2]); ok {
		if cur, ok = parseInt([]byte(v)); !ok {
			c.writeError("ERR hash value is not an integer")
			return
		}
	}
	if incr < 0 && cur < 0 && incr < minInt64-cur || incr > 0 && cur > 0 && incr > maxInt64-cur {
		c.writeError(errOverflow)
		return
	}
	cur += incr
	h.Set(string(args[2]), strconv.FormatInt(cur, 10))
	c.signalModified(args[1])
	c.writeInt(cur)
}

const (
	maxInt64 = 1<<63 - 1
	minInt64 = -1 << 63
)

func cmdHIncrByFloat(c *Client, args [][]byte) {
	incr, ok := parseLongDouble(args[3])
	if !ok {
		c.writeError(errNotFloat)
		return
	}
	if incr.IsInf() {
		c.writeError("ERR value is NaN or Infinity")
		return
	}
	h, err := getOrCreateHash(c, args[1])
	if err != nil {
		c.writeErr(err)
		return
	}
	cur, _ := parseLongDouble([]byte("0"))
	if v, ok := h.GetBytes(args[2]); ok {
		if cur, ok = parseLongDouble([]byte(v)); !ok {
			c.writeError("ERR hash value is not a float")
			return
		}
	}
	sum, ok := addLongDouble(cur, incr)
	if !ok {
		c.writeError("ERR increment would produce NaN or Infinity")
		return
	}
	s := formatLongDoubleHuman(sum)
	h.Set(string(args[2]), s)
	c.signalModified(args[1])
	c.writeBulkString(s)
}
