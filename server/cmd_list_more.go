package server

import (
	"math"
	"strconv"
)

// LPOS, LMOVE, RPOPLPUSH and LMPOP (t_list.c). The key-level helpers
// (lmoveKeys, lmpopKeys) take no reply decisions beyond errors, so that the
// blocking variants can run them when a key becomes ready.

func init() { registerGroup(registerListMoreCommands) }

func registerListMoreCommands(t *commandTable) {
	const w, r = flagWrite, flagReadonly
	t.add(
		&command{Name: "lpos", Fn: cmdLPos, Arity: -3, Flags: r, FirstKey: 1, LastKey: 1, Group: "list", Summary: "Return the index of matching elements on a list", Since: "6.0.6"},
		&command{Name: "lmove", Fn: cmdLMove, Arity: 5, Flags: w | flagDenyOOM, FirstKey: 1, LastKey: 2, Group: "list", Summary: "Pop an element from a list, push it to another list and return it", Since: "6.2.0"},
		&command{Name: "rpoplpush", Fn: cmdRPopLPush, Arity: 3, Flags: w | flagDenyOOM, FirstKey: 1, LastKey: 2, Group: "list", Summary: "Remove the last element in a list, prepend it to another list and return it", Since: "1.2.0"},
		&command{Name: "lmpop", Fn: cmdLMPop, Arity: -4, Flags: w, Group: "list", Summary: "Pop elements from a list", Since: "7.0.0"},
	)
}

// rangeLong is Redis's getRangeLongFromObjectOrReply: an integer within
// [lo, hi]; msg, when given, replaces both errors.
func rangeLong(c *Client, b []byte, lo, hi int64, msg string) (int64, bool) {
	n, ok := parseInt(b)
	switch {
	case !ok:
		if msg == "" {
			msg = errNotInt
		}
	case n < lo || n > hi:
		if msg == "" {
			msg = "ERR value is out of range, value must between " + strconv.FormatInt(lo, 10) + " and " + strconv.FormatInt(hi, 10)
		}
	default:
		return n, true
	}
	c.writeError(msg)
	return 0, false
}

// positiveLong is Redis's getPositiveLongFromObjectOrReply with a message
// for both a non-integer and a negative value.
func positiveLong(c *Client, b []byte, msg string) (int64, bool) {
	n, ok := parseInt(b)
	if !ok || n < 0 {
		c.writeError(msg)
		return 0, false
	}
	return n, true
}

func cmdLPos(c *Client, args [][]byte) {
	elem := string(args[2])
	rank, count, maxLen := int64(1), int64(-1), int64(0)
	for j := 3; j < len(args); j++ {
		more := j < len(args)-1
		var ok bool
		switch {
		case equalFold(args[j], "rank") && more:
			j++
			// Redis 7.0 takes any long here; -LLONG_MIN wraps to itself,
			// which then matches from the first hit at the tail.
			if rank, ok = parseInt(args[j]); !ok {
				c.writeError(errNotInt)
				return
			}
			if rank == 0 {
				c.writeError("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list")
				return
			}
		case equalFold(args[j], "count") && more:
			j++
			if count, ok = positiveLong(c, args[j], "ERR COUNT can't be negative"); !ok {
				return
			}
		case equalFold(args[j], "maxlen") && more:
			j++
			if maxLen, ok = positiveLong(c, args[j], "ERR MAXLEN can't be negative"); !ok {
				return
			}
		default:
			c.writeError(errSyntax)
			return
		}
	}
	fromTail := rank < 0
	if fromTail {
		rank = -rank
	}
	l, found, err := getObject[*List](c, args[1], kindList)
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found {
		if count != -1 {
			c.writeArray(0)
		} else {
			c.writeNull()
		}
		return
	}
	n := l.Len()
	var matches []int64
	seen := int64(0)
	for i := 0; i < n && (maxLen == 0 || int64(i) < maxLen); i++ {
		idx := i
		if fromTail {
			idx = n - 1 - i
		}
		if l.Index(idx) != elem {
			continue
		}
		seen++
		if seen < rank {
			continue
		}
		matches = append(matches, int64(idx))
		if count == -1 || count != 0 && seen-rank+1 >= count {
			break
		}
	}
	if count == -1 {
		if len(matches) == 0 {
			c.writeNull()
		} else {
			c.writeInt(matches[0])
		}
		return
	}
	c.writeArray(len(matches))
	for _, m := range matches {
		c.writeInt(m)
	}
}

// listEnd parses LEFT or RIGHT.
func listEnd(c *Client, b []byte) (left, ok bool) {
	switch {
	case equalFold(b, "left"):
		return true, true
	case equalFold(b, "right"):
		return false, true
	}
	c.writeError(errSyntax)
	return false, false
}

func cmdLMove(c *Client, args [][]byte) {
	from, ok := listEnd(c, args[3])
	if !ok {
		return
	}
	to, ok := listEnd(c, args[4])
	if !ok {
		return
	}
	lmoveReply(c, args[1], args[2], from, to)
}

func cmdRPopLPush(c *Client, args [][]byte) { lmoveReply(c, args[1], args[2], false, true) }

func lmoveReply(c *Client, src, dst []byte, fromLeft, toLeft bool) {
	v, moved, err := c.lmoveKeys(src, dst, fromLeft, toLeft)
	switch {
	case err != nil:
		c.writeErr(err)
	case !moved:
		c.writeNull()
	default:
		c.writeBulkString(v)
	}
}

// lmoveKeys moves one element from the list at src to the list at dst
// (created if missing; src deleted once empty), as LMOVE does. moved is
// false when src does not exist; err is WRONGTYPE when src, or dst while
// src has an element, holds another kind; nothing changes then.
func (c *Client) lmoveKeys(src, dst []byte, fromLeft, toLeft bool) (v string, moved bool, err error) {
	sl, found, err := getObject[*List](c, src, kindList)
	if err != nil || !found || sl.Len() == 0 {
		return "", false, err
	}
	var dl *List
	if string(src) == string(dst) {
		dl = sl
	} else if dl, err = getOrCreateObject(c, dst, kindList, newList); err != nil {
		return "", false, err
	}
	v, _ = listMove(sl, dl, fromLeft, toLeft)
	c.signalModified(dst)
	if sl.Len() == 0 {
		c.deleteKey(src)
	}
	c.signalModified(src)
	return v, true, nil
}

func cmdLMPop(c *Client, args [][]byte) {
	keys, left, count, ok := parseMPop(c, args, 1, listEnd)
	if !ok {
		return
	}
	key, vals, err := c.lmpopKeys(keys, left, int(count))
	switch {
	case err != nil:
		c.writeErr(err)
	case key == nil:
		c.writeNullArray()
	default:
		c.writeArray(2)
		c.writeBulk(key)
		c.writeArray(len(vals))
		for _, v := range vals {
			c.writeBulkString(v)
		}
	}
}

// parseMPop parses LMPOP's and ZMPOP's "numkeys key... WHERE [COUNT n]"
// from args[i:] (Redis's lmpopGenericCommand and zmpopGenericCommand);
// where parses the direction word and writes its own error.
func parseMPop(c *Client, args [][]byte, i int, where func(*Client, []byte) (bool, bool)) (keys [][]byte, dir bool, count int64, ok bool) {
	numKeys, ok := rangeLong(c, args[i], 1, math.MaxInt64, "ERR numkeys should be greater than 0")
	if !ok {
		return nil, false, 0, false
	}
	// numkeys must leave room for WHERE; compared without adding, as
	// i+numkeys+1 overflows for a count near 2^63.
	if numKeys >= int64(len(args)-i-1) {
		c.writeError(errSyntax)
		return nil, false, 0, false
	}
	whereIdx := int64(i) + numKeys + 1
	if dir, ok = where(c, args[whereIdx]); !ok {
		return nil, false, 0, false
	}
	count = -1
	for j := int(whereIdx) + 1; j < len(args); j++ {
		if count == -1 && equalFold(args[j], "count") && j < len(args)-1 {
			j++
			if count, ok = rangeLong(c, args[j], 1, math.MaxInt64, "ERR count should be greater than 0"); !ok {
				return nil, false, 0, false
			}
			continue
		}
		c.writeError(errSyntax)
		return nil, false, 0, false
	}
	if count == -1 {
		count = 1
	}
	return args[i+1 : whereIdx], dir, count, true
}

// lmpopKeys pops up to count elements from the first non-empty list among
// keys (LMPOP; BLMPOP once a key is ready). key is nil when every key is
// missing; err is WRONGTYPE for a key of another kind met first.
func (c *Client) lmpopKeys(keys [][]byte, left bool, count int) (key []byte, vals []string, err error) {
	for _, k := range keys {
		l, found, err := getObject[*List](c, k, kindList)
		if err != nil {
			return nil, nil, err
		}
		if !found || l.Len() == 0 {
			continue
		}
		vals = l.PopN(count, left)
		if l.Len() == 0 {
			c.deleteKey(k)
		}
		c.signalModified(k)
		return k, vals, nil
	}
	return nil, nil, nil
}
