package server

import (
	"math"
	"sort"
)

// Consumer groups of a stream, as Redis 7.0 keeps them (t_stream.c): each
// group has a last-delivered ID, an entries-read counter and a pending
// entries list (PEL) of delivered but unacknowledged entries, each owned
// by one consumer. Redis keeps the PELs and the consumers in radix trees,
// ordered by ID and by name; here they are sorted slices and a map, which
// give the same orders.

// invalidEntriesRead is Redis's SCG_INVALID_ENTRIES_READ: a group's read
// counter that is not known.
const invalidEntriesRead = -1

// pendingEntry is one delivered, unacknowledged entry (Redis's streamNACK).
type pendingEntry struct {
	id            StreamID
	consumer      *streamConsumer
	deliveryTime  int64 // unix ms of the last delivery
	deliveryCount int64
}

// pel is a pending entries list in ID order.
type pel []*pendingEntry

// find returns the position of id, or where it would go, and whether it
// is there.
func (p pel) find(id StreamID) (int, bool) {
	i := sort.Search(len(p), func(i int) bool { return !p[i].id.Less(id) })
	return i, i < len(p) && p[i].id == id
}

func (p *pel) insert(e *pendingEntry) {
	i, found := p.find(e.id)
	if found {
		(*p)[i] = e
		return
	}
	if i == len(*p) { // the usual case: a newer ID than any pending
		*p = append(*p, e)
		return
	}
	*p = append(*p, nil)
	copy((*p)[i+1:], (*p)[i:])
	(*p)[i] = e
}

func (p *pel) remove(id StreamID) {
	if i, found := p.find(id); found {
		*p = append((*p)[:i], (*p)[i+1:]...)
	}
}

// streamConsumer is one consumer of a group.
type streamConsumer struct {
	name     string
	seenTime int64 // unix ms of its last interaction (XINFO's idle)
	pending  pel
}

// streamGroup is one consumer group.
type streamGroup struct {
	name        string
	lastID      StreamID
	entriesRead int64
	pending     pel
	consumers   map[string]*streamConsumer
}

// group returns the consumer group called name, or nil.
func (s *Stream) group(name []byte) *streamGroup {
	i := sort.Search(len(s.groups), func(i int) bool { return s.groups[i].name >= string(name) })
	if i < len(s.groups) && s.groups[i].name == string(name) {
		return s.groups[i]
	}
	return nil
}

// createGroup adds a group; false when the name is taken.
func (s *Stream) createGroup(name []byte, last StreamID, entriesRead int64) bool {
	i := sort.Search(len(s.groups), func(i int) bool { return s.groups[i].name >= string(name) })
	if i < len(s.groups) && s.groups[i].name == string(name) {
		return false
	}
	g := &streamGroup{name: string(name), lastID: last, entriesRead: entriesRead, consumers: map[string]*streamConsumer{}}
	s.groups = append(s.groups, nil)
	copy(s.groups[i+1:], s.groups[i:])
	s.groups[i] = g
	return true
}

// destroyGroup removes a group; false when there is none of that name.
func (s *Stream) destroyGroup(name []byte) bool {
	i := sort.Search(len(s.groups), func(i int) bool { return s.groups[i].name >= string(name) })
	if i < len(s.groups) && s.groups[i].name == string(name) {
		s.groups = append(s.groups[:i], s.groups[i+1:]...)
		return true
	}
	return false
}

// consumer returns the consumer called name, creating it when create is
// set (created reports that); touch updates its seen time.
func (g *streamGroup) consumer(name []byte, create, touch bool, now int64) (cons *streamConsumer, created bool) {
	cons = g.consumers[string(name)]
	if cons == nil && create {
		cons = &streamConsumer{name: string(name), seenTime: now}
		g.consumers[cons.name] = cons
		created = true
	}
	if cons != nil && touch {
		cons.seenTime = now
	}
	return cons, created
}

// deleteConsumer removes a consumer and its pending entries; it returns
// how many it had.
func (g *streamGroup) deleteConsumer(name []byte) int {
	cons := g.consumers[string(name)]
	if cons == nil {
		return 0
	}
	n := len(cons.pending)
	for _, e := range cons.pending {
		g.pending.remove(e.id)
	}
	delete(g.consumers, cons.name)
	return n
}

// consumerNames returns the consumers' names in Redis's (byte) order.
func (g *streamGroup) consumerNames() []string {
	names := make([]string, 0, len(g.consumers))
	for n := range g.consumers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// deliver records that the entry id went to cons: a new pending entry, or
// one taken over from another consumer (XGROUP SETID can make a group
// deliver an entry twice), as streamReplyWithRange does.
func (g *streamGroup) deliver(id StreamID, cons *streamConsumer, now int64) {
	if i, found := g.pending.find(id); found {
		e := g.pending[i]
		e.consumer.pending.remove(id)
		e.consumer, e.deliveryTime, e.deliveryCount = cons, now, 1
		cons.pending.insert(e)
		return
	}
	e := &pendingEntry{id: id, consumer: cons, deliveryTime: now, deliveryCount: 1}
	g.pending.insert(e)
	cons.pending.insert(e)
}

// ack removes id from the group's and its consumer's pending lists.
func (g *streamGroup) ack(id StreamID) bool {
	i, found := g.pending.find(id)
	if !found {
		return false
	}
	e := g.pending[i]
	g.pending = append(g.pending[:i], g.pending[i+1:]...)
	if e.consumer != nil {
		e.consumer.pending.remove(id)
	}
	return true
}

// firstLiveID is the first entry's ID (0-0 when empty).
func (s *Stream) firstLiveID() StreamID {
	if s.length == 0 {
		return StreamID{}
	}
	return s.idAt(0)
}

// rangeHasTombstones is Redis's streamRangeHasTombstones: whether the
// newest XDEL'd ID may lie between start and the end of the stream.
func (s *Stream) rangeHasTombstones(start StreamID) bool {
	if s.length == 0 || s.maxDeleted == (StreamID{}) || s.maxDeleted.Less(s.firstLiveID()) {
		return false
	}
	return !s.maxDeleted.Less(start)
}

// estimateEntriesRead is Redis's streamEstimateDistanceFromFirstEverEntry:
// the number of entries ever added up to id, when it can be known.
func (s *Stream) estimateEntriesRead(id StreamID) int64 {
	if s.added == 0 {
		return 0
	}
	if s.length == 0 && !s.lastID.Less(id) {
		return int64(s.added)
	}
	switch {
	case id == s.lastID:
		return int64(s.added)
	case s.lastID.Less(id):
		return invalidEntriesRead
	}
	first := s.firstLiveID()
	if s.maxDeleted == (StreamID{}) || s.maxDeleted.Less(first) {
		switch {
		case id.Less(first):
			return int64(s.added) - int64(s.length)
		case id == first:
			return int64(s.added) - int64(s.length) + 1
		}
	}
	return invalidEntriesRead
}

// advance moves a group's last-delivered ID to id after delivering it,
// keeping its read counter as streamReplyWithRange does.
func (s *Stream) advance(g *streamGroup, id StreamID) {
	if !g.lastID.Less(id) {
		return
	}
	if g.entriesRead != invalidEntriesRead && !s.rangeHasTombstones(id) {
		g.entriesRead++
	} else if s.added > 0 {
		g.entriesRead = s.estimateEntriesRead(id)
	}
	g.lastID = id
}

// lag is Redis's streamReplyWithCGLag: how many entries the group has yet
// to read; ok is false when that cannot be known.
func (s *Stream) lag(g *streamGroup) (int64, bool) {
	switch {
	case s.added == 0:
		return 0, true
	case g.entriesRead != invalidEntriesRead && !s.rangeHasTombstones(g.lastID):
		return int64(s.added) - g.entriesRead, true
	}
	if read := s.estimateEntriesRead(g.lastID); read != invalidEntriesRead {
		return int64(s.added) - read, true
	}
	return 0, false
}

// maxStreamID is the largest ID, XREADGROUP's ">".
var maxStreamID = StreamID{math.MaxUint64, math.MaxUint64}
