package server

import "unsafe"

// HyperLogLog commands (hyperloglog.c): PFADD, PFCOUNT, PFMERGE, PFDEBUG.
// An HLL is a string value in Redis's representation (hll.go), changed in
// place where its size stays and stored anew where it grows, shrinks or
// turns dense; its TTL stays either way, as in Redis, which edits the
// string in place.

func init() {
	registerGroup(registerHLLCommands)
	groupCategory["hyperloglog"] = "hyperloglog"
	for name, flags := range map[string]string{
		"pfadd": "RW insert", "pfcount": "RW access", "pfmerge": "RW access insert|RO access", "pfdebug": "RW access",
	} {
		keySpecFlags[name] = flags
	}
	for name, u := range map[string]string{
		"pfadd": "key [element [element ...]]", "pfcount": "key [key ...]",
		"pfmerge": "destkey sourcekey [sourcekey ...]", "pfdebug": "subcommand key", "pfselftest": "",
	} {
		usages[name] = u
	}
	keySpecNotes["pfcount"] = "RW because it may change the internal representation of the key, and propagate to replicas"
}

func registerHLLCommands(t *commandTable) {
	const g = "hyperloglog"
	t.add(
		&command{Name: "pfadd", Fn: cmdPFAdd, Arity: -2, Flags: flagWrite | flagDenyOOM | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Adds the specified elements to the specified HyperLogLog.", Since: "2.8.9"},
		&command{Name: "pfcount", Fn: cmdPFCount, Arity: -2, Flags: flagReadonly, FirstKey: 1, LastKey: -1, Group: g, Summary: "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).", Since: "2.8.9"},
		&command{Name: "pfmerge", Fn: cmdPFMerge, Arity: -2, Flags: flagWrite | flagDenyOOM, FirstKey: 1, LastKey: -1, Group: g, Summary: "Merge N different HyperLogLogs into a single one.", Since: "2.8.9"},
		&command{Name: "pfdebug", Fn: cmdPFDebug, Arity: 3, Flags: flagWrite | flagDenyOOM | flagAdmin, FirstKey: 2, LastKey: 2, Group: g, Summary: "Internal commands for debugging HyperLogLog values", Since: "2.8.9"},
		&command{Name: "pfselftest", Fn: cmdPFSelfTest, Arity: 1, Flags: flagAdmin, Group: g, Summary: "An internal command for testing HyperLogLog values", Since: "2.8.9"},
	)
}

// sameBytes reports whether a and b are the same slice (same array and
// length): an HLL changed in place needs no new store.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || unsafe.SliceData(a) == unsafe.SliceData(b))
}

// hllString returns the HLL at key for reading: found false when missing;
// on WRONGTYPE or a string that is no HLL it replies and returns ok false.
func (c *Client) hllString(key []byte) (h []byte, found, ok bool) {
	v, found, err := c.getString(key)
	if err != nil {
		c.writeErr(err)
		return nil, true, false
	}
	if found && !isHLL(v) {
		c.writeError(errNotHLL)
		return nil, true, false
	}
	return v, found, true
}

func cmdPFAdd(c *Client, args [][]byte) {
	cur, found, ok := c.hllString(args[1])
	if !ok {
		return
	}
	updated := 0
	h := cur
	if !found {
		h = newHLL()
		updated++
	}
	corrupt := false
	sparseMax := c.srv.hllSparseMaxBytes()
	for _, ele := range args[2:] {
		var r int
		h, r = hllAdd(h, ele, sparseMax)
		if r < 0 {
			corrupt = true
			break
		}
		updated += r
	}
	if updated > 0 {
		hllInvalidateCache(h)
	}
	switch {
	case !found || !sameBytes(h, cur):
		c.storeString(args[1], h, true)
	case updated > 0:
		c.signalModified(args[1])
	}
	switch {
	case corrupt:
		c.writeError(errInvalidHLL)
	case updated > 0:
		c.writeInt(1)
	default:
		c.writeInt(0)
	}
}

func cmdPFCount(c *Client, args [][]byte) {
	if len(args) > 2 {
		// The cardinality of the union, from the registers' maximums.
		var max [hllRegisters]uint8
		for _, key := range args[1:] {
			h, found, ok := c.hllString(key)
			if !ok {
				return
			}
			if found && !hllMerge(&max, h) {
				c.writeError(errInvalidHLL)
				return
			}
		}
		var histo [64]int
		for _, v := range max {
			histo[v]++
		}
		c.writeInt(int64(hllEstimate(&histo)))
		return
	}
	h, found, ok := c.hllString(args[1])
	if !ok {
		return
	}
	if !found {
		c.writeInt(0)
		return
	}
	card, changed, ok := hllCard(h)
	if !ok {
		c.writeError(errInvalidHLL)
		return
	}
	if changed {
		// The cache lives in the value: a change like any other.
		c.signalModified(args[1])
	}
	c.writeInt(int64(card))
}

func cmdPFMerge(c *Client, args [][]byte) {
	var max [hllRegisters]uint8
	useDense := false
	for _, key := range args[1:] {
		h, found, ok := c.hllString(key)
		if !ok {
			return
		}
		if !found {
			continue
		}
		if h[4] == hllDense {
			useDense = true
		}
		if !hllMerge(&max, h) {
			c.writeError(errInvalidHLL)
			return
		}
	}
	cur, found, _ := c.getString(args[1])
	h := cur
	if !found {
		h = newHLL()
	}
	if useDense {
		d, ok := hllSparseToDense(h)
		if !ok {
			if !found {
				c.storeString(args[1], h, true)
			}
			c.writeError(errInvalidHLL)
			return
		}
		h = d
	}
	for i, v := range max {
		if v == 0 {
			continue
		}
		if h[4] == hllDense {
			hllDenseSet(h[hllHdrSize:], i, v)
		} else {
			h, _ = hllSparseSet(h, i, v, c.srv.hllSparseMaxBytes())
		}
	}
	hllInvalidateCache(h)
	if !found || !sameBytes(h, cur) {
		c.storeString(args[1], h, true)
	} else {
		c.signalModified(args[1])
	}
	c.writeOK()
}

func cmdPFDebug(c *Client, args [][]byte) {
	cur, found, err := c.getString(args[2])
	switch {
	case err != nil:
		c.writeErr(err)
		return
	case !found:
		c.writeError("ERR The specified key does not exist")
		return
	case !isHLL(cur):
		c.writeError(errNotHLL)
		return
	}
	// toDense converts a sparse value for GETREG and TODENSE.
	toDense := func() ([]byte, bool) {
		if cur[4] == hllDense {
			return cur, true
		}
		d, ok := hllSparseToDense(cur)
		if !ok {
			c.writeError(errInvalidHLL)
			return nil, false
		}
		c.storeString(args[2], d, true)
		return d, true
	}
	switch sub := args[1]; {
	case equalFold(sub, "getreg"):
		d, ok := toDense()
		if !ok {
			return
		}
		c.writeArray(hllRegisters)
		for i := 0; i < hllRegisters; i++ {
			c.writeInt(int64(hllDenseGet(d[hllHdrSize:], i)))
		}
	case equalFold(sub, "decode"):
		if cur[4] != hllSparse {
			c.writeError("ERR HLL encoding is not sparse")
			return
		}
		c.writeBulkString(hllDecode(cur))
	case equalFold(sub, "encoding"):
		if cur[4] == hllDense {
			c.writeSimple("dense")
		} else {
			c.writeSimple("sparse")
		}
	case equalFold(sub, "todense"):
		conv := cur[4] == hllSparse
		if _, ok := toDense(); !ok {
			return
		}
		if conv {
			c.writeInt(1)
		} else {
			c.writeInt(0)
		}
	default:
		c.writeError("ERR Unknown PFDEBUG subcommand '" + string(sub) + "'")
	}
}

// cmdPFSelfTest checks the register accessors and the estimator as
// PFSELFTEST does: every register set and read back, and the estimate of
// a growing set within a few standard errors.
func cmdPFSelfTest(c *Client, args [][]byte) {
	r := make([]byte, hllDenseSize-hllHdrSize)
	vals := make([]uint8, hllRegisters)
	for i := range vals {
		vals[i] = uint8((i*7919 + 13) % (hllRegisterMax + 1))
		hllDenseSetReg(r, i, vals[i])
	}
	for i, v := range vals {
		if hllDenseGet(r, i) != v {
			c.writeError("ERR TESTFAILED Register error at index " + itoa(int64(i)))
			return
		}
	}
	h := newHLL()
	var ele [8]byte
	for n := 1; n <= 100000; n++ {
		for j := range ele {
			ele[j] = byte(n >> (8 * j))
		}
		h, _ = hllAdd(h, ele[:], hllSparseMaxBytes)
		if n%10000 != 0 {
			continue
		}
		hllInvalidateCache(h)
		card, _, _ := hllCard(h)
		diff := float64(card) - float64(n)
		if diff < 0 {
			diff = -diff
		}
		if diff > float64(n)*1.04/128*5 {
			c.writeError("ERR TESTFAILED Too big error. card:" + itoa(int64(card)) + " error:" + itoa(int64(diff)))
			return
		}
	}
	c.writeOK()
}

// hllSparseMaxBytes is hll-sparse-max-bytes as set now (CONFIG SET, the
// config file): a sparse value that would grow past it becomes dense.
func (s *Server) hllSparseMaxBytes() int {
	return int(min(s.cfg.paramInt("hll-sparse-max-bytes"), 1<<30))
}
