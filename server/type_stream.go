package server

import (
	"encoding/binary"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// StreamID is a stream entry ID: milliseconds and a sequence number, printed
// as "ms-seq".
type StreamID struct{ Ms, Seq uint64 }

// Less orders IDs as Redis does.
func (a StreamID) Less(b StreamID) bool {
	return a.Ms < b.Ms || (a.Ms == b.Ms && a.Seq < b.Seq)
}

// String formats the ID as "ms-seq".
func (a StreamID) String() string {
	return strconv.FormatUint(a.Ms, 10) + "-" + strconv.FormatUint(a.Seq, 10)
}

// parseStreamID parses a stream ID as Redis's streamGenericParseIDOrReply:
// "-" and "+" (unless strict), "ms" (the sequence is then missingSeq) or
// "ms-seq", each part as string2ull reads it. With allowWild, "ms-*" is
// accepted and seqGiven is false (XADD picks the sequence).
func parseStreamID(s string, missingSeq uint64, strict, allowWild bool) (id StreamID, seqGiven bool, ok bool) {
	if len(s) > 127 {
		return id, false, false
	}
	if strict && (s == "-" || s == "+") {
		return id, false, false
	}
	switch s {
	case "-":
		return StreamID{}, true, true
	case "+":
		return StreamID{math.MaxUint64, math.MaxUint64}, true, true
	}
	msPart, seqPart, hasSeq := strings.Cut(s, "-")
	ms, ok := string2ull(msPart)
	if !ok {
		return id, false, false
	}
	id.Ms = ms
	if !hasSeq {
		id.Seq = missingSeq
		return id, true, true
	}
	if allowWild && seqPart == "*" {
		return id, false, true
	}
	if id.Seq, ok = string2ull(seqPart); !ok {
		return id, false, false
	}
	return id, true, true
}

// string2ull is Redis's: a canonical non-negative integer, or whatever
// strtoull accepts whole (leading blanks, a sign, leading zeros), without
// overflow.
func string2ull(s string) (uint64, bool) {
	if v, ok := parseInt([]byte(s)); ok {
		return uint64(v), v >= 0
	}
	i := 0
	for i < len(s) && cIsSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	if i == len(s) {
		return 0, false
	}
	v, err := strconv.ParseUint(s[i:], 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v // strtoull negates in unsigned arithmetic
	}
	return v, true
}

// StreamEntry is one stream entry as Range returns it: its ID and its
// field/value pairs, still encoded (see Fields and eachField). raw aliases
// the stream's storage: use it before the stream is modified.
type StreamEntry struct {
	ID  StreamID
	raw []byte
}

// Fields returns the entry's field, value, field, value... as strings.
func (e StreamEntry) Fields() []string {
	var out []string
	e.eachField(func(f []byte) { out = append(out, string(f)) })
	return out
}

// numFields returns how many fields and values the entry has.
func (e StreamEntry) numFields() int {
	n, _ := binary.Uvarint(e.raw)
	return int(n)
}

// eachField calls fn with each field and value in order.
func (e StreamEntry) eachField(fn func(f []byte)) {
	b := e.raw
	n, k := binary.Uvarint(b)
	b = b[k:]
	for ; n > 0; n-- {
		l, k := binary.Uvarint(b)
		fn(b[k : k+int(l)])
		b = b[k+int(l):]
	}
}

// streamNodeMaxEntries is Redis's stream-node-max-entries. Redis stores a
// stream as listpack nodes of up to this many entries, and approximate
// trimming ("MAXLEN ~") only drops whole nodes, so replies depend on where
// node boundaries fall. Entries go into nodes by append order, which is
// exact as long as Redis's nodes do not also hit stream-node-max-bytes
// (4096 bytes, i.e. entries of about 40 bytes or less).
const streamNodeMaxEntries = 100

// streamNode holds up to streamNodeMaxEntries entries in append order, like
// a Redis listpack node: the IDs, and the fields of all entries encoded in
// one byte slice (a count, then length-prefixed strings, per entry), which
// costs a fraction of a string header per field. The first del entries have
// been trimmed; XDEL marks others dead in place, as Redis flags them in its
// listpack, and a node whose entries are all dead is removed.
type streamNode struct {
	ids   []StreamID
	ends  []uint32 // end of entry i's fields in data (start: ends[i-1] or 0)
	data  []byte
	del   int
	dead  []bool // entries removed by XDEL; nil until the first one
	ndead int    // dead entries at or after del
}

// live returns how many entries of the node are neither trimmed nor dead.
func (n *streamNode) live() int { return len(n.ids) - n.del - n.ndead }

func (n *streamNode) isDead(i int) bool { return n.dead != nil && n.dead[i] }

func (n *streamNode) entry(i int) StreamEntry {
	start := uint32(0)
	if i > 0 {
		start = n.ends[i-1]
	}
	return StreamEntry{ID: n.ids[i], raw: n.data[start:n.ends[i]]}
}

// Stream is the value of a Redis stream key: entries in ascending ID order
// in nodes of streamNodeMaxEntries, as Redis keeps them. Appending never
// moves earlier entries (one big slice would be copied on every growth,
// which dominated XADD on long streams), and trimming drops whole nodes
// from the front. Only the first node can be partly trimmed and only the
// last partly filled, so entry i is found in O(1) (see at) until XDEL
// leaves holes; then lookups go by ID.
type Stream struct {
	nodes  []*streamNode // oldest first
	length int
	holes  int      // dead entries still in their nodes (XDEL)
	lastID StreamID // the top ID ever added, kept after trimming
	added  uint64   // entries_added, as XINFO reports it
	bytes  int      // bytes of the nodes' data, for memUsage
	// maxDeleted is the greatest ID XDEL removed (Redis's
	// max_deleted_entry_id), which consumer groups' lag depends on.
	maxDeleted StreamID
	groups     []*streamGroup // by name (type_stream_groups.go)
}

// memUsage approximates the bytes the stream holds.
func (s *Stream) memUsage() int {
	return s.bytes + (16+4)*streamNodeMaxEntries*len(s.nodes) + 64
}

// Len returns the number of entries.
func (s *Stream) Len() int { return s.length }

// LastID returns the highest ID ever added (0-0 for a new stream).
func (s *Stream) LastID() StreamID { return s.lastID }

// Add appends an entry with id, which must be greater than LastID().
func (s *Stream) Add(id StreamID, fields []string) {
	addEntry(s, id, fields)
}

// AddArgs is Add for XADD's argument slices, copied into the stream.
func (s *Stream) AddArgs(id StreamID, fields [][]byte) {
	addEntry(s, id, fields)
}

func addEntry[T ~string | ~[]byte](s *Stream, id StreamID, fields []T) {
	var last *streamNode
	if n := len(s.nodes); n > 0 {
		last = s.nodes[n-1]
	}
	if last == nil || len(last.ids) == streamNodeMaxEntries {
		if last != nil {
			// A full node never grows again: give back the slack.
			last.data = slices.Clip(append([]byte(nil), last.data...))
		}
		last = &streamNode{ids: make([]StreamID, 0, streamNodeMaxEntries), ends: make([]uint32, 0, streamNodeMaxEntries)}
		s.nodes = append(s.nodes, last)
	}
	before := len(last.data)
	last.data = binary.AppendUvarint(last.data, uint64(len(fields)))
	for _, f := range fields {
		last.data = binary.AppendUvarint(last.data, uint64(len(f)))
		last.data = append(last.data, f...)
	}
	last.ids = append(last.ids, id)
	if last.dead != nil {
		last.dead = append(last.dead, false)
	}
	last.ends = append(last.ends, uint32(len(last.data)))
	s.bytes += len(last.data) - before
	s.length++
	s.lastID = id
	s.added++
}

// at returns the node and index in it of the i-th live entry
// (0 <= i < Len()).
func (s *Stream) at(i int) (*streamNode, int) {
	if s.holes > 0 {
		for _, n := range s.nodes {
			if live := n.live(); i >= live {
				i -= live
				continue
			}
			for j := n.del; ; j++ {
				if n.isDead(j) {
					continue
				}
				if i == 0 {
					return n, j
				}
				i--
			}
		}
	}
	first := s.nodes[0]
	live := len(first.ids) - first.del
	if i < live {
		return first, first.del + i
	}
	i -= live
	return s.nodes[1+i/streamNodeMaxEntries], i % streamNodeMaxEntries
}

func (s *Stream) idAt(i int) StreamID {
	n, j := s.at(i)
	return n.ids[j]
}

// StreamTrim is a trimming request as XADD and XTRIM take it.
type StreamTrim struct {
	MaxLen  int64    // MAXLEN threshold (when ByMinID is false)
	ByMinID bool     // MINID instead of MAXLEN
	MinID   StreamID // MINID threshold
	Approx  bool     // "~": only whole nodes are removed
	Limit   int64    // at most this many entries (0: no limit)
}

// Trim removes entries from the head as Redis's streamTrim does: whole
// nodes while they are entirely beyond the threshold, then (unless
// approximate) single entries of the next node. It returns how many
// entries were removed.
func (s *Stream) Trim(t StreamTrim) int64 {
	var deleted int64
	for s.length > 0 {
		if !t.ByMinID && int64(s.length) <= t.MaxLen {
			break
		}
		node := s.nodes[0]
		inNode := node.live()
		if t.Limit > 0 && deleted+int64(inNode) > t.Limit {
			break
		}
		var removeNode bool
		if t.ByMinID {
			// The node's last ID, dead or not, as Redis reads it.
			removeNode = node.ids[len(node.ids)-1].Less(t.MinID)
		} else {
			removeNode = int64(s.length-inNode) >= t.MaxLen
		}
		if removeNode {
			s.dropHead(len(node.ids) - node.del)
			deleted += int64(inNode)
			continue
		}
		if t.Approx {
			break
		}
		// Single entries: dead ones are passed over (and go with the
		// live ones trimmed after them).
		positions, drop := 0, 0
		for p := node.del; p < len(node.ids); p++ {
			if !node.isDead(p) {
				if t.ByMinID {
					if !node.ids[p].Less(t.MinID) {
						break
					}
				} else if int64(s.length-drop) <= t.MaxLen {
					break
				}
				drop++
			}
			positions++
		}
		s.dropHead(positions)
		deleted += int64(drop)
		break
	}
	return deleted
}

// dropHead removes the first k untrimmed entries of the first node, live
// or dead (all of them drops the node).
func (s *Stream) dropHead(k int) {
	if k == 0 {
		return
	}
	node := s.nodes[0]
	start := uint32(0)
	if node.del > 0 {
		start = node.ends[node.del-1]
	}
	s.bytes -= int(node.ends[node.del+k-1] - start)
	dead := 0
	if node.dead != nil {
		for p := node.del; p < node.del+k; p++ {
			if node.dead[p] {
				dead++
			}
		}
	}
	node.ndead -= dead
	s.holes -= dead
	node.del += k
	s.length -= k - dead
	if node.del == len(node.ids) {
		s.nodes[0] = nil
		s.nodes = s.nodes[1:]
		if len(s.nodes) == 0 {
			s.nodes = nil
		}
	}
}

// Delete removes the entry with this ID (XDEL) and reports whether it was
// there. The entry is marked dead in its node; a node left without live
// entries is removed, as Redis removes an emptied listpack.
func (s *Stream) Delete(id StreamID) bool {
	ni := sort.Search(len(s.nodes), func(k int) bool {
		n := s.nodes[k]
		return !n.ids[len(n.ids)-1].Less(id)
	})
	if ni == len(s.nodes) {
		return false
	}
	n := s.nodes[ni]
	j := sort.Search(len(n.ids), func(j int) bool { return !n.ids[j].Less(id) })
	if j == len(n.ids) || n.ids[j] != id || j < n.del || n.isDead(j) {
		return false
	}
	if n.dead == nil {
		n.dead = make([]bool, len(n.ids), cap(n.ids))
	}
	n.dead[j] = true
	n.ndead++
	s.holes++
	s.length--
	if n.live() == 0 {
		start := uint32(0)
		if n.del > 0 {
			start = n.ends[n.del-1]
		}
		s.bytes -= int(n.ends[len(n.ends)-1] - start)
		s.holes -= n.ndead
		s.nodes = slices.Delete(s.nodes, ni, ni+1)
		if len(s.nodes) == 0 {
			s.nodes = nil
		}
	}
	return true
}

// Range returns entries with start <= ID <= end, at most count (count < 0:
// all), descending when rev.
func (s *Stream) Range(start, end StreamID, count int, rev bool) []StreamEntry {
	if s.holes > 0 {
		return s.rangeByID(start, end, count, rev)
	}
	lo := sort.Search(s.length, func(i int) bool { return !s.idAt(i).Less(start) })
	hi := sort.Search(s.length, func(i int) bool { return end.Less(s.idAt(i)) })
	if lo >= hi || count == 0 {
		return nil
	}
	n := hi - lo
	if count > 0 && count < n {
		n = count
	}
	out := make([]StreamEntry, n)
	for k := range out {
		i := lo + k
		if rev {
			i = hi - 1 - k
		}
		node, j := s.at(i)
		out[k] = node.entry(j)
	}
	return out
}

// clone returns an independent copy (COPY).
func (s *Stream) clone() *Stream {
	c := *s
	c.nodes = make([]*streamNode, len(s.nodes))
	for i, n := range s.nodes {
		c.nodes[i] = &streamNode{ids: slices.Clone(n.ids), ends: slices.Clone(n.ends), data: slices.Clone(n.data), del: n.del,
			dead: slices.Clone(n.dead), ndead: n.ndead}
	}
	c.groups = make([]*streamGroup, len(s.groups))
	for i, g := range s.groups {
		ng := &streamGroup{name: g.name, lastID: g.lastID, entriesRead: g.entriesRead, consumers: map[string]*streamConsumer{}}
		for name, cons := range g.consumers {
			ng.consumers[name] = &streamConsumer{name: name, seenTime: cons.seenTime}
		}
		for _, e := range g.pending {
			ne := &pendingEntry{id: e.id, deliveryTime: e.deliveryTime, deliveryCount: e.deliveryCount}
			if e.consumer != nil {
				ne.consumer = ng.consumers[e.consumer.name]
				ne.consumer.pending = append(ne.consumer.pending, ne)
			}
			ng.pending = append(ng.pending, ne)
		}
		c.groups[i] = ng
	}
	return &c
}

// rangeByID is Range for a stream with dead entries: the first node that
// can hold start (or end, backwards) is found by binary search, then
// entries are walked in order, skipping the dead ones.
func (s *Stream) rangeByID(start, end StreamID, count int, rev bool) []StreamEntry {
	if count == 0 {
		return nil
	}
	var out []StreamEntry
	full := func() bool { return count > 0 && len(out) >= count }
	if !rev {
		ni := sort.Search(len(s.nodes), func(k int) bool {
			n := s.nodes[k]
			return !n.ids[len(n.ids)-1].Less(start)
		})
		for ; ni < len(s.nodes); ni++ {
			n := s.nodes[ni]
			p := max(n.del, sort.Search(len(n.ids), func(j int) bool { return !n.ids[j].Less(start) }))
			for ; p < len(n.ids); p++ {
				if end.Less(n.ids[p]) {
					return out
				}
				if !n.isDead(p) {
					if out = append(out, n.entry(p)); full() {
						return out
					}
				}
			}
		}
		return out
	}
	ni := sort.Search(len(s.nodes), func(k int) bool {
		n := s.nodes[k]
		return end.Less(n.ids[n.del])
	}) - 1
	for ; ni >= 0; ni-- {
		n := s.nodes[ni]
		p := sort.Search(len(n.ids), func(j int) bool { return end.Less(n.ids[j]) }) - 1
		for ; p >= n.del; p-- {
			if n.ids[p].Less(start) {
				return out
			}
			if !n.isDead(p) {
				if out = append(out, n.entry(p)); full() {
					return out
				}
			}
		}
	}
	return out
}
