package server

import "unsafe"

// LCS (Redis 7.0 t_string.c): the longest common subsequence of two
// strings, its length, or the matching ranges.

func init() { registerGroup(registerStringMoreCommands) }

func registerStringMoreCommands(t *commandTable) {
	t.add(
		&command{Name: "lcs", Fn: cmdLCS, Arity: -3, Flags: flagReadonly, FirstKey: 1, LastKey: 2, Group: "string", Summary: "Find longest common substring", Since: "7.0.0"},
	)
}

func cmdLCS(c *Client, args [][]byte) {
	ea, okA := c.lookup(args[1])
	eb, okB := c.lookup(args[2])
	if okA && ea.kind() != kindString || okB && eb.kind() != kindString {
		c.writeError("ERR The specified keys must contain string values")
		return
	}
	a, b := ea.bytes(), eb.bytes() // empty for a missing key
	if !okA {
		a = nil
	}
	if !okB {
		b = nil
	}
	var getLen, getIdx, withMatchLen bool
	var minMatchLen int64
	for j := 3; j < len(args); j++ {
		switch o := args[j]; {
		case equalFold(o, "idx"):
			getIdx = true
		case equalFold(o, "len"):
			getLen = true
		case equalFold(o, "withmatchlen"):
			withMatchLen = true
		case equalFold(o, "minmatchlen") && j < len(args)-1:
			n, ok := parseInt(args[j+1])
			if !ok {
				c.writeError(errNotInt)
				return
			}
			minMatchLen = max(n, 0)
			j++
		default:
			c.writeError(errSyntax)
			return
		}
	}
	if getIdx && getLen {
		c.writeError("ERR If you want both the length and indexes, please just use IDX.")
		return
	}
	alen, blen := len(a), len(b)
	// The dynamic-programming table is transient memory Redis bounds by
	// proto-max-bulk-len.
	cells := uint64(alen+1) * uint64(blen+1)
	if cells*uint64(unsafe.Sizeof(uint32(0))) > uint64(c.srv.cfg.ProtoMaxBulkLen) {
		c.writeError("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
		return
	}
	w := blen + 1
	lcs := make([]uint32, cells)
	for i := 1; i <= alen; i++ {
		for j := 1; j <= blen; j++ {
			if a[i-1] == b[j-1] {
				lcs[i*w+j] = lcs[(i-1)*w+j-1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i-1)*w+j], lcs[i*w+j-1])
			}
		}
	}
	idx := int(lcs[alen*w+blen])
	total := idx
	computeLCS := getIdx || !getLen
	var result []byte
	if computeLCS {
		result = make([]byte, idx)
	}
	type match struct{ aStart, aEnd, bStart, bEnd int }
	var matches []match
	aStart, aEnd, bStart, bEnd := alen, 0, 0, 0 // aStart == alen: no range open
	for i, j := alen, blen; computeLCS && i > 0 && j > 0; {
		emit := false
		if a[i-1] == b[j-1] {
			result[idx-1] = a[i-1]
			if aStart == alen {
				aStart, aEnd, bStart, bEnd = i-1, i-1, j-1, j-1
			} else if aStart == i && bStart == j {
				aStart--
				bStart--
			} else {
				emit = true
			}
			if aStart == 0 || bStart == 0 {
				emit = true
			}
			idx--
			i--
			j--
		} else {
			if lcs[(i-1)*w+j] > lcs[i*w+j-1] {
				i--
			} else {
				j--
			}
			if aStart != alen {
				emit = true
			}
		}
		if emit {
			if minMatchLen == 0 || int64(aEnd-aStart+1) >= minMatchLen {
				matches = append(matches, match{aStart, aEnd, bStart, bEnd})
			}
			aStart = alen
		}
	}
	switch {
	case getIdx:
		c.writeMap(2)
		c.writeBulkString("matches")
		c.writeArray(len(matches))
		for _, m := range matches {
			if withMatchLen {
				c.writeArray(3)
			} else {
				c.writeArray(2)
			}
			c.writeArray(2)
			c.writeInt(int64(m.aStart))
			c.writeInt(int64(m.aEnd))
			c.writeArray(2)
			c.writeInt(int64(m.bStart))
			c.writeInt(int64(m.bEnd))
			if withMatchLen {
				c.writeInt(int64(m.aEnd - m.aStart + 1))
			}
		}
		c.writeBulkString("len")
		c.writeInt(int64(total))
	case getLen:
		c.writeInt(int64(total))
	default:
		c.writeBulk(result)
	}
}
