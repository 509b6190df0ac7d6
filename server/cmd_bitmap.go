package server

import (
	"math"
	"math/bits"
)

// Bitmaps are strings addressed by bit, bit 0 being the most significant
// bit of the first byte, as in Redis's bitops.c. The commands' argument
// checks, their order (which error wins) and the replies follow Redis 7.0.

func init() { registerGroup(registerBitmapCommands) }

func registerBitmapCommands(t *commandTable) {
	const g = "bitmap"
	w, r := flagWrite, flagReadonly
	t.add(
		&command{Name: "setbit", Fn: cmdSetBit, Arity: 4, Flags: w | flagDenyOOM, FirstKey: 1, LastKey: 1, Group: g, Summary: "Sets or clears the bit at offset of the string value. Creates the key if it doesn't exist.", Since: "2.2.0"},
		&command{Name: "getbit", Fn: cmdGetBit, Arity: 3, Flags: r | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Returns a bit value by offset.", Since: "2.2.0"},
		&command{Name: "bitcount", Fn: cmdBitCount, Arity: -2, Flags: r, FirstKey: 1, LastKey: 1, Group: g, Summary: "Counts the number of set bits (population counting) in a string.", Since: "2.6.0"},
		&command{Name: "bitpos", Fn: cmdBitPos, Arity: -3, Flags: r, FirstKey: 1, LastKey: 1, Group: g, Summary: "Finds the first set (1) or clear (0) bit in a string.", Since: "2.8.7"},
		&command{Name: "bitop", Fn: cmdBitOp, Arity: -4, Flags: w | flagDenyOOM, FirstKey: 2, LastKey: -1, Group: g, Summary: "Performs bitwise operations on multiple strings, and stores the result.", Since: "2.6.0"},
		&command{Name: "bitfield", Fn: cmdBitField, Arity: -2, Flags: w | flagDenyOOM, FirstKey: 1, LastKey: 1, Group: g, Summary: "Performs arbitrary bitfield integer operations on strings.", Since: "3.2.0"},
		&command{Name: "bitfield_ro", Fn: cmdBitFieldRO, Arity: -2, Flags: r | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Performs arbitrary read-only bitfield integer operations on strings.", Since: "6.0.0"},
	)
}

const errBitOffset = "ERR bit offset is not an integer or out of range"

// bitOffset parses a bit offset as Redis's getBitOffsetFromArgument: a
// strict integer, or for BITFIELD "#N", meaning N times the field's width;
// never negative, and within proto-max-bulk-len bytes.
func (c *Client) bitOffset(arg []byte, hash bool, width int) (uint64, bool) {
	useHash := hash && width > 0 && len(arg) > 1 && arg[0] == '#'
	if useHash {
		arg = arg[1:]
	}
	v, ok := parseInt(arg)
	if ok && useHash {
		// Redis multiplies without an overflow check; a wrapped product
		// is negative or too large and refused below, as there.
		v = int64(uint64(v) * uint64(width))
	}
	if !ok || v < 0 || v>>3 >= c.maxString() {
		c.writeError(errBitOffset)
		return 0, false
	}
	return uint64(v), true
}

// bitString returns the string at key, made at least maxBit/8+1 bytes
// long (zero-padded, created if missing), for writing in place: the bytes
// belong to the keyspace. It writes WRONGTYPE and returns false for a key
// of another kind. grown reports whether the key was created or extended.
func (c *Client) bitString(key []byte, maxBit uint64) (v []byte, grown, ok bool) {
	cur, found, err := c.getString(key)
	if err != nil {
		c.writeErr(err)
		return nil, false, false
	}
	need := maxBit>>3 + 1
	if found && uint64(len(cur)) >= need {
		return cur, false, true
	}
	nv := make([]byte, need)
	copy(nv, cur)
	c.storeString(key, nv, true)
	return nv, true, true
}

func cmdSetBit(c *Client, args [][]byte) {
	off, ok := c.bitOffset(args[2], false, 0)
	if !ok {
		return
	}
	on, ok := parseInt(args[3])
	if !ok || on&^1 != 0 {
		c.writeError("ERR bit is not an integer or out of range")
		return
	}
	v, grown, ok := c.bitString(args[1], off)
	if !ok {
		return
	}
	byteIdx, mask := off>>3, byte(1)<<(7-off&7)
	old := v[byteIdx]&mask != 0
	if on == 1 {
		v[byteIdx] |= mask
	} else {
		v[byteIdx] &^= mask
	}
	if old != (on == 1) && !grown {
		// storeString already counted a created or grown key.
		c.signalModified(args[1])
	}
	if old {
		c.writeInt(1)
	} else {
		c.writeInt(0)
	}
}

func cmdGetBit(c *Client, args [][]byte) {
	off, ok := c.bitOffset(args[2], false, 0)
	if !ok {
		return
	}
	v, _, err := c.getString(args[1])
	if err != nil {
		c.writeErr(err)
		return
	}
	if i := off >> 3; i < uint64(len(v)) && v[i]&(1<<(7-off&7)) != 0 {
		c.writeInt(1)
		return
	}
	c.writeInt(0)
}

// bitRange resolves BITCOUNT's and BITPOS's start and end (bytes, or bits
// with BIT) against a string of n bytes into an inclusive range of bit
// positions, as Redis does: negative indexes count from the end, then both
// are clamped. empty is true when nothing is left.
func bitRange(start, end int64, isBit bool, n int64) (first, last int64, empty bool) {
	total := n
	if isBit {
		total <<= 3
	}
	if start < 0 {
		start += total
	}
	if end < 0 {
		end += total
	}
	start, end = max(start, 0), max(end, 0)
	if end >= total {
		end = total - 1
	}
	if start > end {
		return 0, 0, true
	}
	if isBit {
		return start, end, false
	}
	return start << 3, end<<3 | 7, false
}

// bitArgUnit parses the optional BYTE|BIT argument.
func bitArgUnit(a []byte) (isBit, ok bool) {
	switch {
	case equalFold(a, "bit"):
		return true, true
	case equalFold(a, "byte"):
		return false, true
	}
	return false, false
}

func cmdBitCount(c *Client, args [][]byte) {
	// Redis looks the key up first: a missing key counts 0 whatever the
	// other arguments are.
	v, found, err := c.getString(args[1])
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found {
		c.writeInt(0)
		return
	}
	first, last := int64(0), int64(len(v))*8-1
	switch len(args) {
	case 2:
	case 4, 5:
		start, ok1 := parseInt(args[2])
		if !ok1 {
			c.writeError(errNotInt)
			return
		}
		end, ok2 := parseInt(args[3])
		if !ok2 {
			c.writeError(errNotInt)
			return
		}
		if start < 0 && end < 0 && start > end {
			c.writeInt(0)
			return
		}
		isBit := false
		if len(args) == 5 {
			var ok bool
			if isBit, ok = bitArgUnit(args[4]); !ok {
				c.writeError(errSyntax)
				return
			}
		}
		var empty bool
		if first, last, empty = bitRange(start, end, isBit, int64(len(v))); empty {
			c.writeInt(0)
			return
		}
	default:
		c.writeError(errSyntax)
		return
	}
	c.writeInt(popcountRange(v, first, last))
}

// popcountRange counts the set bits of v between bit positions first and
// last, inclusive (last < len(v)*8); an empty v counts 0.
func popcountRange(v []byte, first, last int64) int64 {
	if last < first {
		return 0
	}
	fb, lb := first>>3, last>>3
	headMask := byte(0xff) >> (first & 7)  // bits of the first byte in range
	tailMask := byte(0xff) << (7 - last&7) // bits of the last byte in range
	if fb == lb {
		return int64(bits.OnesCount8(v[fb] & headMask & tailMask))
	}
	n := int64(bits.OnesCount8(v[fb]&headMask)) + int64(bits.OnesCount8(v[lb]&tailMask))
	mid := v[fb+1 : lb]
	for len(mid) >= 8 {
		n += int64(bits.OnesCount64(uint64(mid[0]) | uint64(mid[1])<<8 | uint64(mid[2])<<16 | uint64(mid[3])<<24 |
			uint64(mid[4])<<32 | uint64(mid[5])<<40 | uint64(mid[6])<<48 | uint64(mid[7])<<56))
		mid = mid[8:]
	}
	for _, b := range mid {
		n += int64(bits.OnesCount8(b))
	}
	return n
}

// bitposRange returns the position of the first bit equal to bit between
// first and last inclusive, or -1.
func bitposRange(v []byte, first, last int64, bit bool) int64 {
	// A whole byte of the other bit is skipped at once.
	skip := byte(0xff)
	if bit {
		skip = 0
	}
	for p := first; p <= last; {
		i := p >> 3
		if p&7 == 0 && p+7 <= last && v[i] == skip {
			p += 8
			continue
		}
		if (v[i]&(1<<(7-p&7)) != 0) == bit {
			return p
		}
		p++
	}
	return -1
}

func cmdBitPos(c *Client, args [][]byte) {
	b, ok := parseInt(args[2])
	if !ok {
		c.writeError(errNotInt)
		return
	}
	if b != 0 && b != 1 {
		c.writeError("ERR The bit argument must be 1 or 0.")
		return
	}
	bit := b == 1
	v, found, err := c.getString(args[1])
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found {
		// A missing key is an endless run of zeros.
		if bit {
			c.writeInt(-1)
		} else {
			c.writeInt(0)
		}
		return
	}
	n := int64(len(v))
	first, last := int64(0), n*8-1
	endGiven := false
	switch len(args) {
	case 3:
	case 4, 5, 6:
		start, ok := parseInt(args[3])
		if !ok {
			c.writeError(errNotInt)
			return
		}
		isBit := false
		if len(args) == 6 {
			if isBit, ok = bitArgUnit(args[5]); !ok {
				c.writeError(errSyntax)
				return
			}
		}
		end := n - 1
		if len(args) >= 5 {
			if end, ok = parseInt(args[4]); !ok {
				c.writeError(errNotInt)
				return
			}
			endGiven = true
		}
		var empty bool
		if first, last, empty = bitRange(start, end, isBit, n); empty {
			c.writeInt(-1)
			return
		}
	default:
		c.writeError(errSyntax)
		return
	}
	if last < first {
		c.writeInt(-1)
		return
	}
	pos := bitposRange(v, first, last, bit)
	if pos < 0 && !bit && !endGiven {
		// Without an explicit end the string is taken as zero-padded on
		// the right: the first clear bit is the one after it.
		pos = n * 8
	}
	c.writeInt(pos)
}

func cmdBitOp(c *Client, args [][]byte) {
	op := args[1]
	var opc byte
	switch {
	case equalFold(op, "and"):
		opc = '&'
	case equalFold(op, "or"):
		opc = '|'
	case equalFold(op, "xor"):
		opc = '^'
	case equalFold(op, "not"):
		opc = '~'
	default:
		c.writeError(errSyntax)
		return
	}
	if opc == '~' && len(args) != 4 {
		c.writeError("ERR BITOP NOT must be called with a single source key.")
		return
	}
	srcs := make([][]byte, 0, len(args)-3)
	maxLen := 0
	for _, k := range args[3:] {
		v, _, err := c.getString(k)
		if err != nil {
			c.writeErr(err)
			return
		}
		srcs = append(srcs, v)
		maxLen = max(maxLen, len(v))
	}
	dst := args[2]
	if maxLen == 0 {
		c.deleteKey(dst)
		c.writeInt(0)
		return
	}
	res := make([]byte, maxLen)
	copy(res, srcs[0])
	switch opc {
	case '~':
		for i := range res {
			res[i] = ^res[i]
		}
	case '&':
		for _, s := range srcs[1:] {
			for i := range res {
				if i < len(s) {
					res[i] &= s[i]
				} else {
					res[i] = 0
				}
			}
		}
	case '|':
		for _, s := range srcs[1:] {
			for i := range s {
				res[i] |= s[i]
			}
		}
	case '^':
		for _, s := range srcs[1:] {
			for i := range s {
				res[i] ^= s[i]
			}
		}
	}
	c.storeString(dst, res, false)
	c.writeInt(int64(maxLen))
}

// BITFIELD's overflow behaviours.
const (
	bfWrap = iota
	bfSat
	bfFail
)

// bitfieldOp is one GET, SET or INCRBY of a BITFIELD command.
type bitfieldOp struct {
	op     byte // 'g', 's', 'i'
	signed bool
	width  int
	offset uint64
	value  int64
	ow     int
}

const errBitfieldType = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."

// bitfieldType parses i1..i64 and u1..u63 (lowercase only, as Redis).
func bitfieldType(a []byte) (signed bool, width int, ok bool) {
	if len(a) < 2 || a[0] != 'i' && a[0] != 'u' {
		return false, 0, false
	}
	signed = a[0] == 'i'
	n, ok := parseInt(a[1:])
	if !ok || n < 1 || signed && n > 64 || !signed && n > 63 {
		return false, 0, false
	}
	return signed, int(n), true
}

func cmdBitField(c *Client, args [][]byte)   { bitfieldGeneric(c, args, false) }
func cmdBitFieldRO(c *Client, args [][]byte) { bitfieldGeneric(c, args, true) }

func bitfieldGeneric(c *Client, args [][]byte, readOnly bool) {
	var ops []bitfieldOp
	ow := bfWrap
	writes := false
	var highest uint64
	for j := 2; j < len(args); j++ {
		rem := len(args) - j - 1
		sub := args[j]
		var op bitfieldOp
		switch {
		case equalFold(sub, "get") && rem >= 2:
			op.op = 'g'
		case equalFold(sub, "set") && rem >= 3:
			op.op = 's'
		case equalFold(sub, "incrby") && rem >= 3:
			op.op = 'i'
		case equalFold(sub, "overflow") && rem >= 1:
			j++
			switch a := args[j]; {
			case equalFold(a, "wrap"):
				ow = bfWrap
			case equalFold(a, "sat"):
				ow = bfSat
			case equalFold(a, "fail"):
				ow = bfFail
			default:
				c.writeError("ERR Invalid OVERFLOW type specified")
				return
			}
			continue
		default:
			c.writeError(errSyntax)
			return
		}
		var ok bool
		if op.signed, op.width, ok = bitfieldType(args[j+1]); !ok {
			c.writeError(errBitfieldType)
			return
		}
		if op.offset, ok = c.bitOffset(args[j+2], true, op.width); !ok {
			return
		}
		if op.op != 'g' {
			writes = true
			highest = max(highest, op.offset+uint64(op.width)-1)
			if op.value, ok = parseInt(args[j+3]); !ok {
				c.writeError(errNotInt)
				return
			}
			j++
		}
		op.ow = ow
		ops = append(ops, op)
		j += 2
	}
	var v []byte
	grown := false
	if !writes {
		var err error
		if v, _, err = c.getString(args[1]); err != nil {
			c.writeErr(err)
			return
		}
	} else {
		if readOnly {
			c.writeError("ERR BITFIELD_RO only supports the GET subcommand")
			return
		}
		var ok bool
		if v, grown, ok = c.bitString(args[1], highest); !ok {
			return
		}
	}
	c.writeArray(len(ops))
	changed := false
	for _, op := range ops {
		if op.op == 'g' {
			// Fields past the end read as zeros.
			var buf [9]byte
			first := op.offset >> 3
			if first < uint64(len(v)) {
				copy(buf[:], v[first:])
			}
			u := getBitfield(buf[:], op.offset&7, op.width)
			if op.signed {
				c.writeInt(signExtend(u, op.width))
			} else {
				c.writeInt(int64(u))
			}
			continue
		}
		old := getBitfield(v, op.offset, op.width)
		var next uint64
		var reply int64
		var overflow bool
		if op.signed {
			oldS := signExtend(old, op.width)
			var res int64
			if op.op == 'i' {
				res, overflow = signedFieldOverflow(oldS, op.value, op.width, op.ow)
				reply = res
			} else {
				res, overflow = signedFieldOverflow(op.value, 0, op.width, op.ow)
				reply = oldS
			}
			next = uint64(res)
		} else {
			if op.op == 'i' {
				next, overflow = unsignedFieldOverflow(old, op.value, op.width, op.ow)
				reply = int64(next)
			} else {
				next, overflow = unsignedFieldOverflow(uint64(op.value), 0, op.width, op.ow)
				reply = int64(old)
			}
		}
		if overflow && op.ow == bfFail {
			c.writeNull()
			continue
		}
		c.writeInt(reply)
		setBitfield(v, op.offset, op.width, next)
		if next&widthMask(op.width) != old {
			changed = true
		}
	}
	if changed && !grown {
		c.signalModified(args[1])
	}
}

func widthMask(width int) uint64 {
	if width == 64 {
		return math.MaxUint64
	}
	return 1<<width - 1
}

// getBitfield reads width bits at offset, most significant first.
func getBitfield(p []byte, offset uint64, width int) uint64 {
	var v uint64
	for j := 0; j < width; j++ {
		b := p[offset>>3] >> (7 - offset&7) & 1
		v = v<<1 | uint64(b)
		offset++
	}
	return v
}

// setBitfield writes the low width bits of v at offset.
func setBitfield(p []byte, offset uint64, width int, v uint64) {
	for j := width - 1; j >= 0; j-- {
		mask := byte(1) << (7 - offset&7)
		if v>>j&1 != 0 {
			p[offset>>3] |= mask
		} else {
			p[offset>>3] &^= mask
		}
		offset++
	}
}

func signExtend(u uint64, width int) int64 {
	if width < 64 && u&(1<<(width-1)) != 0 {
		u |= math.MaxUint64 << width
	}
	return int64(u)
}

// unsignedFieldOverflow is Redis's checkUnsignedBitfieldOverflow: value +
// incr in a width-bit unsigned field, and whether it overflowed (the result
// then being the wrapped or saturated value per ow).
func unsignedFieldOverflow(value uint64, incr int64, width, ow int) (uint64, bool) {
	limit := widthMask(width)
	maxIncr := int64(limit - value)
	minIncr := -int64(value)
	var sat uint64
	switch {
	case value > limit || incr > 0 && incr > maxIncr:
		sat = limit
	case incr < 0 && incr < minIncr:
		sat = 0
	default:
		return value + uint64(incr), false
	}
	if ow == bfWrap {
		return (value + uint64(incr)) & limit, true
	}
	return sat, true
}

// signedFieldOverflow is Redis's checkSignedBitfieldOverflow for a
// width-bit two's complement field.
func signedFieldOverflow(value, incr int64, width, ow int) (int64, bool) {
	hi := int64(math.MaxInt64)
	if width < 64 {
		hi = 1<<(width-1) - 1
	}
	lo := -hi - 1
	// Both may wrap; they are only used once value's range is known.
	maxIncr := int64(uint64(hi) - uint64(value))
	minIncr := lo - value
	var sat int64
	switch {
	case value > hi || width != 64 && incr > maxIncr || value >= 0 && incr > 0 && incr > maxIncr:
		sat = hi
	case value < lo || width != 64 && incr < minIncr || value < 0 && incr < 0 && incr < minIncr:
		sat = lo
	default:
		return value + incr, false
	}
	if ow == bfWrap {
		return signExtend((uint64(value)+uint64(incr))&widthMask(width), width), true
	}
	return sat, true
}
