package server

import (
	"math"
	"math/rand/v2"
	"strconv"
)

// HRANDFIELD (Redis 7.0 t_hash.c).

func init() { registerGroup(registerHashMoreCommands) }

func registerHashMoreCommands(t *commandTable) {
	t.add(
		&command{Name: "hrandfield", Fn: cmdHRandField, Arity: -2, Flags: flagReadonly, FirstKey: 1, LastKey: 1, Group: "hash", Summary: "Get one or multiple random fields from a hash", Since: "6.2.0"},
	)
}

// randCountArg parses HRANDFIELD's and ZRANDMEMBER's count and the
// optional WITHVALUES/WITHSCORES word, as Redis 7.0 does.
func randCountArg(c *Client, args [][]byte, with string) (count int64, withValues, ok bool) {
	count, ok = rangeLong(c, args[2], -math.MaxInt64, math.MaxInt64, "")
	if !ok {
		return 0, false, false
	}
	if len(args) > 4 || len(args) == 4 && !equalFold(args[3], with) {
		c.writeError(errSyntax)
		return 0, false, false
	}
	if len(args) == 4 {
		withValues = true
		if count < -math.MaxInt64/2 || count > math.MaxInt64/2 {
			c.writeError("ERR value is out of range")
			return 0, false, false
		}
	}
	if count < -srandMemberMaxRepeat {
		// As SRANDMEMBER: a reply of billions of repeats would take the
		// server down; Redis would try.
		c.writeError("ERR count is too large: a negative count returns at most " + strconv.Itoa(srandMemberMaxRepeat) + " elements; ask for fewer")
		return 0, false, false
	}
	return count, withValues, true
}

// randomPicks returns indexes into n elements for a count as HRANDFIELD
// and ZRANDMEMBER take it: negative, -count draws with repeats; positive,
// min(count, n) distinct ones (all, in order, when count >= n).
func randomPicks(n int, count int64) []int {
	if count < 0 {
		out := make([]int, -count)
		for i := range out {
			out[i] = rand.IntN(n)
		}
		return out
	}
	if count >= int64(n) {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	perm := rand.Perm(n)
	return perm[:count]
}

func cmdHRandField(c *Client, args [][]byte) {
	if len(args) == 2 {
		h, found, err := getObject[*Hash](c, args[1], kindHash)
		switch {
		case err != nil:
			c.writeErr(err)
		case !found:
			c.writeNull()
		default:
			i, target := 0, rand.IntN(h.Len())
			h.EachBytes(func(f, _ []byte) bool {
				if i == target {
					c.writeBulk(f)
					return false
				}
				i++
				return true
			})
		}
		return
	}
	count, withValues, ok := randCountArg(c, args, "withvalues")
	if !ok {
		return
	}
	h, found, err := getObject[*Hash](c, args[1], kindHash)
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found || count == 0 {
		c.writeArray(0)
		return
	}
	var fields, values [][]byte
	h.EachBytes(func(f, v []byte) bool {
		fields, values = append(fields, f), append(values, v)
		return true
	})
	picks := randomPicks(len(fields), count)
	// RESP3 nests each pair; RESP2 flattens them.
	if withValues && c.resp == 2 {
		c.writeArray(2 * len(picks))
	} else {
		c.writeArray(len(picks))
	}
	for _, i := range picks {
		if withValues && c.resp == 3 {
			c.writeArray(2)
		}
		c.writeBulk(fields[i])
		if withValues {
			c.writeBulk(values[i])
		}
	}
}
