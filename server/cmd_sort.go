package server

import (
	"bytes"
	"math"
	"sort"
	"strings"
)

// SORT and SORT_RO as Redis 7.0's sortCommandGeneric (sort.c): the
// options' parsing and errors, the LIMIT clamping, the "don't sort" cases
// (BY without '*' keeps a list's or sorted set's own order, DESC
// included), numeric sorting with ties broken by the elements' bytes, and
// GET/BY patterns with "#" and "->field".

func init() { registerGroup(registerSortCommands) }

func registerSortCommands(t *commandTable) {
	const g = "generic"
	t.add(
		&command{Name: "sort", Fn: cmdSort, Arity: -2, Flags: flagWrite | flagDenyOOM, FirstKey: 1, LastKey: 1, Group: g, Summary: "Sort the elements in a list, set or sorted set", Since: "1.0.0"},
		&command{Name: "sort_ro", Fn: cmdSortRO, Arity: -2, Flags: flagReadonly, FirstKey: 1, LastKey: 1, Group: g, Summary: "Sort the elements in a list, set or sorted set. Read-only variant of SORT.", Since: "7.0.0"},
	)
}

func cmdSort(c *Client, args [][]byte)   { sortGeneric(c, args, false) }
func cmdSortRO(c *Client, args [][]byte) { sortGeneric(c, args, true) }

// sortItem is one element with what it is compared by.
type sortItem struct {
	elem  string
	score float64
	cmp   []byte // ALPHA with BY: the looked-up value
	hasBy bool   // cmp was found
}

func sortGeneric(c *Client, args [][]byte, readOnly bool) {
	var (
		desc, alpha, dontSort bool
		limitStart            int64
		limitCount            int64 = -1
		store, by             []byte
		gets                  [][]byte
	)
	for j := 2; j < len(args); j++ {
		left := len(args) - j - 1
		a := args[j]
		switch {
		case equalFold(a, "asc"):
			desc = false
		case equalFold(a, "desc"):
			desc = true
		case equalFold(a, "alpha"):
			alpha = true
		case equalFold(a, "limit") && left >= 2:
			var ok bool
			if limitStart, ok = parseInt(args[j+1]); !ok {
				c.writeError(errNotInt)
				return
			}
			if limitCount, ok = parseInt(args[j+2]); !ok {
				c.writeError(errNotInt)
				return
			}
			j += 2
		case !readOnly && equalFold(a, "store") && left >= 1:
			store = args[j+1]
			j++
		case equalFold(a, "by") && left >= 1:
			by = args[j+1]
			// A pattern without '*' names no per-element key: nothing
			// to sort by, so the native order is kept.
			dontSort = bytes.IndexByte(by, '*') < 0
			j++
		case equalFold(a, "get") && left >= 1:
			gets = append(gets, args[j+1])
			j++
		default:
			c.writeError(errSyntax)
			return
		}
	}
	e, found := c.lookup(args[1])
	k := e.kind()
	if found && k != kindList && k != kindSet && k != kindZSet {
		c.writeError(errWrongType)
		return
	}
	if dontSort && found && k == kindSet && store != nil {
		// A set has no order of its own: what is stored must not depend
		// on the hash table, so it is sorted as ALPHA (as Redis does).
		dontSort, alpha, by = false, true, nil
	}
	var vlen int64
	if found {
		switch v := e.box().o.(type) {
		case *List:
			vlen = int64(v.Len())
		case *Set:
			vlen = int64(v.Len())
		case *ZSet:
			vlen = int64(v.Len())
		}
	}
	start := min(max(limitStart, 0), vlen)
	limitCount = min(max(limitCount, -1), vlen)
	end := start + limitCount - 1
	if limitCount < 0 {
		end = vlen - 1
	}
	if start >= vlen {
		start, end = vlen-1, vlen-2
	}
	end = min(end, vlen-1)

	var items []sortItem
	if found {
		switch v := e.box().o.(type) {
		case *List:
			if dontSort {
				if end >= start {
					if desc {
						v.RangeReverse(v.Len()-1-int(end), v.Len()-1-int(start), func(s string) { items = append(items, sortItem{elem: s}) })
					} else {
						v.Range(int(start), int(end), func(s string) { items = append(items, sortItem{elem: s}) })
					}
				}
				end -= start
				start = 0
			} else {
				v.Range(0, v.Len()-1, func(s string) { items = append(items, sortItem{elem: s}) })
			}
		case *Set:
			v.Each(func(m string) bool { items = append(items, sortItem{elem: m}); return true })
		case *ZSet:
			if dontSort {
				if end >= start {
					for _, m := range v.RangeByRank(int(start), int(end), desc) {
						items = append(items, sortItem{elem: m.Member})
					}
				}
				end -= start
				start = 0
			} else {
				for _, m := range v.RangeByRank(0, v.Len()-1, false) {
					items = append(items, sortItem{elem: m.Member})
				}
			}
		}
	}

	if !dontSort {
		convErr := false
		for i := range items {
			it := &items[i]
			var byVal []byte
			if by != nil {
				v, ok := c.sortLookup(by, it.elem)
				if !ok {
					continue // sorts as 0, or first with ALPHA
				}
				byVal = v
			} else {
				byVal = stringView(it.elem)
			}
			if alpha {
				if by != nil {
					it.cmp, it.hasBy = bytes.Clone(byVal), true
				}
				continue
			}
			f, consumed, erange := cStrtod(string(byVal))
			if consumed != len(byVal) || erange || math.IsNaN(f) {
				convErr = true
			}
			it.score = f
		}
		if convErr {
			c.writeError("ERR One or more scores can't be converted into double")
			return
		}
		sort.SliceStable(items, func(i, j int) bool {
			cmp := sortCompare(&items[i], &items[j], alpha, by != nil)
			if desc {
				cmp = -cmp
			}
			return cmp < 0
		})
	}

	n := end - start + 1
	if n < 0 {
		n = 0
	}
	var out []sortItem
	if n > 0 {
		out = items[start : end+1]
	}
	outLen := len(out)
	if len(gets) > 0 {
		outLen *= len(gets)
	}
	if store == nil {
		c.writeArray(outLen)
		for _, it := range out {
			if len(gets) == 0 {
				c.writeBulkString(it.elem)
			}
			for _, g := range gets {
				if v, ok := c.sortLookup(g, it.elem); ok {
					c.writeBulk(v)
				} else {
					c.writeNull()
				}
			}
		}
		return
	}
	vals := make([]string, 0, outLen)
	for _, it := range out {
		if len(gets) == 0 {
			vals = append(vals, it.elem)
		}
		for _, g := range gets {
			v, _ := c.sortLookup(g, it.elem) // missing: an empty string
			vals = append(vals, string(v))
		}
	}
	if len(vals) == 0 {
		c.deleteKey(store)
		c.writeInt(0)
		return
	}
	l := &List{}
	l.rebuild(vals)
	b := &objBox{o: l}
	if c.db.put(store, objectEntry(b, kindList, c.srv.newClock)) == "" {
		delete(c.db.expires, string(store)) // replaced: the old TTL goes
	}
	c.touched = append(c.touched, b)
	c.srv.stats.dirty += int64(len(vals))
	c.writeInt(int64(len(vals)))
}

// sortCompare is Redis's sortCompare before DESC is applied.
func sortCompare(a, b *sortItem, alpha, byPattern bool) int {
	if !alpha {
		switch {
		case a.score > b.score:
			return 1
		case a.score < b.score:
			return -1
		}
		return strings.Compare(a.elem, b.elem)
	}
	if byPattern {
		switch {
		case !a.hasBy && !b.hasBy:
			return 0
		case !a.hasBy:
			return -1
		case !b.hasBy:
			return 1
		}
		return bytes.Compare(a.cmp, b.cmp)
	}
	return strings.Compare(a.elem, b.elem)
}

// sortLookup is Redis's lookupKeyByPattern: "#" is the element itself;
// otherwise the first '*' is replaced by the element and the key read as a
// string, or with "->field" after the '*' as a hash's field. A pattern
// without '*', a missing key or one of another type gives nothing. The
// slice aliases the keyspace: use it before the next write.
func (c *Client) sortLookup(pattern []byte, elem string) ([]byte, bool) {
	if len(pattern) == 1 && pattern[0] == '#' {
		return stringView(elem), true
	}
	star := bytes.IndexByte(pattern, '*')
	if star < 0 {
		return nil, false
	}
	keyPat, field := pattern, []byte(nil)
	if f := bytes.Index(pattern[star+1:], []byte("->")); f >= 0 && star+1+f+2 < len(pattern) {
		keyPat, field = pattern[:star+1+f], pattern[star+1+f+2:]
	}
	key := make([]byte, 0, len(keyPat)-1+len(elem))
	key = append(append(append(key, keyPat[:star]...), elem...), keyPat[star+1:]...)
	e, ok := c.lookup(key)
	if !ok {
		return nil, false
	}
	if field != nil {
		if e.kind() != kindHash {
			return nil, false
		}
		return e.box().o.(*Hash).GetBytes(field)
	}
	if e.kind() != kindString {
		return nil, false
	}
	return e.bytes(), true
}
