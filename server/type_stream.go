package server

import (
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

// parseStreamID parses "ms", "ms-seq" (and, when seqWild is allowed, "ms-*";
// then wildSeq is true). A missing sequence takes missingSeq, which is 0 for
// a range start and max uint64 for a range end, as in Redis.
func parseStreamID(s string, missingSeq uint64, allowWild bool) (id StreamID, wildSeq bool, ok bool) {
	if s == "" || len(s) > 127 {
		return id, false, false
	}
	msPart, seqPart, hasSeq := strings.Cut(s, "-")
	ms, err := strconv.ParseUint(msPart, 10, 64)
	if err != nil || msPart == "" || msPart[0] == '+' {
		return id, false, false
	}
	id.Ms = ms
	if !hasSeq {
		id.Seq = missingSeq
		return id, false, true
	}
	if allowWild && seqPart == "*" {
		return id, true, true
	}
	seq, err := strconv.ParseUint(seqPart, 10, 64)
	if err != nil || seqPart == "" || seqPart[0] == '+' {
		return id, false, false
	}
	id.Seq = seq
	return id, false, true
}

// StreamEntry is one stream entry: its ID and field/value pairs in order.
type StreamEntry struct {
	ID     StreamID
	Fields []string // field, value, field, value, ...
}

// Stream is the value of a Redis stream key: entries in ascending ID order
// in a slice (XADD appends; trimming by MAXLEN drops from the front, so a
// head offset avoids moving the rest until enough has been dropped).
type Stream struct {
	entries []StreamEntry
	head    int
	lastID  StreamID // the top ID ever added, kept after trimming
	added   uint64   // entries_added, as XINFO reports it
	bytes   int      // sum of live field and value lengths, for memUsage
}

// memUsage approximates the bytes the stream holds.
func (s *Stream) memUsage() int { return s.bytes + 48*len(s.entries) + 64 }

func fieldBytes(fields []string) int {
	n := 16 * len(fields)
	for _, f := range fields {
		n += len(f)
	}
	return n
}

// Len returns the number of entries.
func (s *Stream) Len() int { return len(s.entries) - s.head }

// LastID returns the highest ID ever added (0-0 for a new stream).
func (s *Stream) LastID() StreamID { return s.lastID }

// Add appends an entry with id, which must be greater than LastID().
func (s *Stream) Add(id StreamID, fields []string) {
	s.entries = append(s.entries, StreamEntry{ID: id, Fields: fields})
	s.bytes += fieldBytes(fields)
	s.lastID = id
	s.added++
}

// TrimMaxLen drops the oldest entries until at most maxLen remain and
// returns how many were dropped.
func (s *Stream) TrimMaxLen(maxLen int) int {
	drop := s.Len() - maxLen
	if drop <= 0 {
		return 0
	}
	for _, e := range s.entries[s.head : s.head+drop] {
		s.bytes -= fieldBytes(e.Fields)
	}
	clear(s.entries[s.head : s.head+drop])
	s.head += drop
	s.compact()
	return drop
}

// TrimMinID drops entries with an ID lower than min and returns how many.
func (s *Stream) TrimMinID(min StreamID) int {
	live := s.entries[s.head:]
	drop := sort.Search(len(live), func(i int) bool { return !live[i].ID.Less(min) })
	for _, e := range live[:drop] {
		s.bytes -= fieldBytes(e.Fields)
	}
	clear(live[:drop])
	s.head += drop
	s.compact()
	return drop
}

// compact moves the live entries down once the dropped prefix dominates, so
// a capped stream does not grow without bound.
func (s *Stream) compact() {
	if s.head > 64 && s.head > len(s.entries)/2 {
		n := copy(s.entries, s.entries[s.head:])
		clear(s.entries[n:])
		s.entries = s.entries[:n]
		s.head = 0
	}
}

// Range returns entries with start <= ID <= end, at most count (count < 0:
// all), descending when rev.
func (s *Stream) Range(start, end StreamID, count int, rev bool) []StreamEntry {
	live := s.entries[s.head:]
	lo := sort.Search(len(live), func(i int) bool { return !live[i].ID.Less(start) })
	hi := sort.Search(len(live), func(i int) bool { return end.Less(live[i].ID) })
	if lo >= hi || count == 0 {
		return nil
	}
	sel := live[lo:hi]
	if count > 0 && count < len(sel) {
		if rev {
			sel = sel[len(sel)-count:]
		} else {
			sel = sel[:count]
		}
	}
	out := make([]StreamEntry, len(sel))
	copy(out, sel)
	if rev {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out
}
