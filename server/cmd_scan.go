package server

import (
	"math"
	"slices"
	"strconv"

	"github.com/dpulab/dpulab/server/resp"
)

func init() { registerGroup(registerScanCommands) }

// registerScanCommands adds the container scans; SCAN itself is with the
// key commands.
func registerScanCommands(t *commandTable) {
	r := flagReadonly
	t.add(
		&command{Name: "sscan", Fn: cmdSScan, Arity: -3, Flags: r, FirstKey: 1, LastKey: 1, Group: "set", Summary: "Incrementally iterate Set elements", Since: "2.8.0"},
		&command{Name: "hscan", Fn: cmdHScan, Arity: -3, Flags: r, FirstKey: 1, LastKey: 1, Group: "hash", Summary: "Incrementally iterate hash fields and associated values", Since: "2.8.0"},
		&command{Name: "zscan", Fn: cmdZScan, Arity: -3, Flags: r, FirstKey: 1, LastKey: 1, Group: "sorted-set", Summary: "Incrementally iterate sorted sets elements and associated scores", Since: "2.8.0"},
	)
}

// SCAN, SSCAN, HSCAN and ZSCAN share one cursor scheme.
//
// Redis walks its hash tables with a reverse-binary cursor, which survives
// rehashing. Go's maps cannot be walked from a position, and our big sets
// reorder members on removal, so an iteration instead walks a snapshot of
// the element names taken when it starts (cursor 0): every element present
// for the whole iteration is in the snapshot, and each one is looked up
// again when its turn comes, so removed ones are skipped and values and
// scores are current. That is the guarantee Redis documents; like Redis we
// may also return an element added meanwhile, or none of them.
//
// Snapshots belong to the database (db.scans), not to the connection: a
// client with a connection pool (go-redis) may send each SCAN of one
// iteration on another connection. A cursor is the snapshot's id in its
// top 32 bits and the position in the bottom 32, so it never looks like 0
// mid-iteration. The registry is bounded (scanMaxSnapshots, scanMaxItems,
// scanIdleMs); a cursor whose snapshot was dropped, or one this server
// never issued, starts the iteration again: elements may come twice, which
// Redis allows, but none is missed.
//
// Small encodings (an intset, a small hash or sorted set) are returned
// whole in one reply with cursor 0, whatever COUNT says, exactly as Redis
// does for its intset and listpack encodings.

// Bounds of one database's scan registry. An iteration idle for longer than
// scanIdleMs is dropped first; past the other bounds the least recently used.
const (
	scanMaxSnapshots = 1024
	scanMaxItems     = 1 << 25 // element names held by all snapshots (16 bytes each)
	scanIdleMs       = 10 * 60 * 1000
)

// scanSnapshot is one iteration's element names.
type scanSnapshot struct {
	keyspace bool   // the database's keys; else the elements of key
	key      string // the container iterated
	items    []string
	lastUse  int64 // unix ms
}

// scanRegistry is a database's iterations in progress.
type scanRegistry struct {
	next  uint32
	snaps map[uint32]*scanSnapshot
	items int
}

// scanStep returns the element names an iteration examines in this call,
// starting or resuming it at cursor, and the cursor to reply (0 when the
// iteration is complete). take builds the snapshot when one is needed.
func (d *db) scanStep(cursor uint64, keyspace bool, key []byte, count int, now int64, take func() []string) ([]string, uint64) {
	var snap *scanSnapshot
	id, pos := uint32(cursor>>32), uint64(uint32(cursor))
	if cursor != 0 && d.scans != nil {
		if s, ok := d.scans.snaps[id]; ok && s.keyspace == keyspace && s.key == string(key) {
			snap = s
		}
	}
	if snap == nil {
		// A new iteration, or one whose cursor is not (any longer) ours:
		// start again rather than guess a position.
		snap = &scanSnapshot{keyspace: keyspace, items: take()}
		if !keyspace {
			snap.key = string(key)
		}
		id, pos = 0, 0
	}
	end := min(pos+uint64(count), uint64(len(snap.items)))
	batch := snap.items[min(pos, end):end]
	if end >= uint64(len(snap.items)) {
		if id != 0 {
			d.scans.remove(id)
		}
		return batch, 0
	}
	if id == 0 {
		if len(snap.items) >= math.MaxUint32 {
			// Positions are 32 bits; an iteration that large cannot be
			// resumed and is returned in one reply instead.
			return snap.items[pos:], 0
		}
		if d.scans == nil {
			d.scans = &scanRegistry{snaps: make(map[uint32]*scanSnapshot)}
		}
		id = d.scans.add(snap, now)
	}
	snap.lastUse = now
	return batch, uint64(id)<<32 | end
}

// add registers snap and returns its id (never 0), making room first.
func (r *scanRegistry) add(snap *scanSnapshot, now int64) uint32 {
	if len(r.snaps) >= 64 {
		for id, s := range r.snaps {
			if now-s.lastUse > scanIdleMs {
				r.remove(id)
			}
		}
	}
	for len(r.snaps) > 0 && (len(r.snaps) >= scanMaxSnapshots || r.items+len(snap.items) > scanMaxItems) {
		var oldest uint32
		first := true
		for id, s := range r.snaps {
			if first || s.lastUse < r.snaps[oldest].lastUse {
				oldest, first = id, false
			}
		}
		r.remove(oldest)
	}
	for {
		r.next++
		if _, used := r.snaps[r.next]; r.next != 0 && !used {
			break
		}
	}
	r.snaps[r.next] = snap
	r.items += len(snap.items)
	return r.next
}

func (r *scanRegistry) remove(id uint32) {
	if s, ok := r.snaps[id]; ok {
		r.items -= len(s.items)
		delete(r.snaps, id)
	}
}

// parseScanCursor parses a cursor as Redis's strtoul does: decimal, an
// optional sign ("-1" is ULONG_MAX), leading zeros, no spaces.
func parseScanCursor(b []byte) (uint64, bool) {
	if len(b) > 1 && (b[0] == '-' || b[0] == '+') {
		v, ok := parseUint(b[1:])
		if b[0] == '-' {
			v = -v
		}
		return v, ok
	}
	return parseUint(b)
}

// scanOptions are SCAN's MATCH, COUNT and TYPE.
type scanOptions struct {
	count int
	match []byte // nil: everything
	typ   []byte // nil: every type (SCAN only)
}

// parseScanOptions parses the options from args[i:]; TYPE only for the
// keyspace. It writes the error and returns false on bad input.
func parseScanOptions(c *Client, args [][]byte, i int, keyspace bool) (scanOptions, bool) {
	o := scanOptions{count: 10}
	for ; i < len(args); i += 2 {
		more := len(args) - i
		switch {
		case equalFold(args[i], "count") && more >= 2:
			n, ok := parseInt(args[i+1])
			if !ok {
				c.writeError(errNotInt)
				return o, false
			}
			if n < 1 {
				c.writeError(errSyntax)
				return o, false
			}
			o.count = int(min(n, math.MaxInt32))
		case equalFold(args[i], "match") && more >= 2:
			o.match = args[i+1]
			if len(o.match) == 1 && o.match[0] == '*' {
				o.match = nil
			}
		case equalFold(args[i], "type") && keyspace && more >= 2:
			o.typ = args[i+1]
		default:
			c.writeError(errSyntax)
			return o, false
		}
	}
	return o, true
}

func (o scanOptions) matches(name []byte) bool {
	return o.match == nil || globMatch(o.match, name, false)
}

// writeScanReply writes [cursor, elements].
func (c *Client) writeScanReply(cursor uint64, n int) {
	c.writeArray(2)
	var tmp [24]byte
	c.writeBulk(appendUint(tmp[:0], cursor))
	c.writeArray(n)
}

func cmdScan(c *Client, args [][]byte) {
	cursor, ok := parseScanCursor(args[1])
	if !ok {
		c.writeError("ERR invalid cursor")
		return
	}
	o, ok := parseScanOptions(c, args, 2, true)
	if !ok {
		return
	}
	d := c.db
	batch, next := d.scanStep(cursor, true, nil, o.count, c.now, func() []string {
		keys := make([]string, 0, len(d.keys))
		for k := range d.keys {
			keys = append(keys, k)
		}
		return keys
	})
	out := batch[:0:0]
	for _, k := range batch {
		e, live := d.get(stringView(k), c.now) // expired keys go, as in Redis
		if !live || !o.matches(stringView(k)) || o.typ != nil && !equalFold(o.typ, e.kind().String()) {
			continue
		}
		out = append(out, k)
	}
	c.writeScanReply(next, len(out))
	for _, k := range out {
		c.writeBulkString(k)
	}
}

// scanContainer is SSCAN's, HSCAN's and ZSCAN's common start: the cursor,
// then the key (a missing key is an empty scan, before the options are
// looked at, as in Redis), then the options.
func scanContainer[T object](c *Client, args [][]byte, k kind) (v T, cursor uint64, o scanOptions, ok bool) {
	cursor, ok = parseScanCursor(args[2])
	if !ok {
		c.writeError("ERR invalid cursor")
		return v, 0, o, false
	}
	v, found, err := getObject[T](c, args[1], k)
	if err != nil {
		c.writeErr(err)
		return v, 0, o, false
	}
	if !found {
		c.writeScanReply(0, 0)
		return v, 0, o, false
	}
	o, ok = parseScanOptions(c, args, 3, false)
	return v, cursor, o, ok
}

func cmdSScan(c *Client, args [][]byte) {
	s, cursor, o, ok := scanContainer[*Set](c, args, kindSet)
	if !ok {
		return
	}
	if s.idx == nil {
		// The intset, whole and in order.
		var out []string
		var tmp [24]byte
		for _, v := range s.ints {
			if b := strconv.AppendInt(tmp[:0], v, 10); o.matches(b) {
				out = append(out, string(b))
			}
		}
		c.writeScanReply(0, len(out))
		for _, m := range out {
			c.writeBulkString(m)
		}
		return
	}
	batch, next := c.db.scanStep(cursor, false, args[1], o.count, c.now, func() []string { return slices.Clone(s.members) })
	out := batch[:0:0]
	for _, m := range batch {
		if s.Has(m) && o.matches(stringView(m)) {
			out = append(out, m)
		}
	}
	c.writeScanReply(next, len(out))
	for _, m := range out {
		c.writeBulkString(m)
	}
}

func cmdHScan(c *Client, args [][]byte) {
	h, cursor, o, ok := scanContainer[*Hash](c, args, kindHash)
	if !ok {
		return
	}
	if h.m == nil {
		// The small encoding, whole and in order. Writing the array's
		// length needs the count first.
		n := 0
		h.EachBytes(func(f, _ []byte) bool {
			if o.matches(f) {
				n++
			}
			return true
		})
		c.writeScanReply(0, 2*n)
		h.EachBytes(func(f, v []byte) bool {
			if o.matches(f) {
				c.writeBulk(f)
				c.writeBulk(v)
			}
			return true
		})
		return
	}
	batch, next := c.db.scanStep(cursor, false, args[1], o.count, c.now, func() []string {
		fields := make([]string, 0, len(h.m))
		for f := range h.m {
			fields = append(fields, f)
		}
		return fields
	})
	out := batch[:0:0]
	for _, f := range batch {
		if _, has := h.m[f]; has && o.matches(stringView(f)) {
			out = append(out, f)
		}
	}
	c.writeScanReply(next, 2*len(out))
	for _, f := range out {
		c.writeBulkString(f)
		c.writeBulkString(h.m[f])
	}
}

func cmdZScan(c *Client, args [][]byte) {
	z, cursor, o, ok := scanContainer[*ZSet](c, args, kindZSet)
	if !ok {
		return
	}
	var tmp [32]byte
	if !z.isBig() {
		var out []ZMember
		for _, m := range z.small {
			if o.matches(stringView(m.Member)) {
				out = append(out, m)
			}
		}
		c.writeScanReply(0, 2*len(out))
		for _, m := range out {
			c.writeBulkString(m.Member)
			c.writeBulk(resp.AppendFloat(tmp[:0], m.Score))
		}
		return
	}
	batch, next := c.db.scanStep(cursor, false, args[1], o.count, c.now, func() []string {
		members := make([]string, 0, len(z.b.dict))
		for x := z.b.zsl.header.level[0].forward; x != nil; x = x.level[0].forward {
			members = append(members, x.member)
		}
		return members
	})
	out := batch[:0:0]
	for _, m := range batch {
		if _, has := z.b.dict[m]; has && o.matches(stringView(m)) {
			out = append(out, m)
		}
	}
	c.writeScanReply(next, 2*len(out))
	for _, m := range out {
		c.writeBulkString(m)
		c.writeBulk(resp.AppendFloat(tmp[:0], z.b.dict[m].score))
	}
}
