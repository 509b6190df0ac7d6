package server

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestParseStreamID(t *testing.T) {
	tests := []struct {
		in      string
		missing uint64
		want    StreamID
		wild    bool
		ok      bool
	}{
		{"5", 0, StreamID{5, 0}, false, true},
		{"5", math.MaxUint64, StreamID{5, math.MaxUint64}, false, true},
		{"5-7", 0, StreamID{5, 7}, false, true},
		{"5-*", 0, StreamID{5, 0}, true, true},
		{"18446744073709551615-18446744073709551615", 0, StreamID{math.MaxUint64, math.MaxUint64}, false, true},
		{"18446744073709551616", 0, StreamID{}, false, false},
		{"-1", 0, StreamID{}, false, false},
		{"+1", 0, StreamID{1, 0}, false, true},    // strtoull accepts a sign
		{" 1-01", 0, StreamID{1, 1}, false, true}, // and blanks and zeros
		{"-", 0, StreamID{}, false, true},
		{"+", 0, StreamID{math.MaxUint64, math.MaxUint64}, false, true},
		{"a-1", 0, StreamID{}, false, false},
		{"1-", 0, StreamID{}, false, false},
		{"", 0, StreamID{}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			id, seqGiven, ok := parseStreamID(tt.in, tt.missing, false, true)
			if ok != tt.ok || (ok && (id != tt.want || seqGiven == tt.wild)) {
				t.Fatalf("parseStreamID(%q) = %v %v %v, want %v %v %v", tt.in, id, !seqGiven, ok, tt.want, tt.wild, tt.ok)
			}
		})
	}
}

func TestStreamRangeAndTrim(t *testing.T) {
	var s Stream
	for i := uint64(1); i <= 200; i++ {
		s.Add(StreamID{i, 0}, []string{"f", "v"})
	}
	if got := s.Range(StreamID{10, 0}, StreamID{12, math.MaxUint64}, -1, false); len(got) != 3 || got[0].ID != (StreamID{10, 0}) {
		t.Fatalf("Range 10..12 = %v", got)
	}
	if got := s.Range(StreamID{}, StreamID{math.MaxUint64, math.MaxUint64}, 2, true); len(got) != 2 || got[0].ID.Ms != 200 || got[1].ID.Ms != 199 {
		t.Fatalf("reverse COUNT 2 = %v", got)
	}
	if n := s.Trim(StreamTrim{MaxLen: 50, Approx: true}); n != 100 || s.Len() != 100 {
		t.Fatalf("Trim(MAXLEN ~ 50) dropped %d, len %d; want whole nodes: 100, 100", n, s.Len())
	}
	if n := s.Trim(StreamTrim{MaxLen: 50}); n != 50 || s.Len() != 50 {
		t.Fatalf("Trim(MAXLEN 50) dropped %d, len %d", n, s.Len())
	}
	if got := s.Range(StreamID{}, StreamID{math.MaxUint64, math.MaxUint64}, 1, false); got[0].ID.Ms != 151 {
		t.Fatalf("first after trim = %v, want 151-0", got[0].ID)
	}
	if n := s.Trim(StreamTrim{ByMinID: true, MinID: StreamID{190, 0}}); n != 39 || s.Len() != 11 {
		t.Fatalf("Trim(MINID 190) dropped %d, len %d", n, s.Len())
	}
	if s.LastID() != (StreamID{200, 0}) {
		t.Fatalf("LastID = %v", s.LastID())
	}
}

// TestStreamAgainstSlice appends and trims at random and checks ranges
// against a plain slice, across node boundaries.
func TestStreamAgainstSlice(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	var s Stream
	var model []StreamID
	next := uint64(1)
	for step := 0; step < 3000; step++ {
		switch r.IntN(10) {
		case 0:
			keep := r.IntN(len(model) + 1)
			s.Trim(StreamTrim{MaxLen: int64(keep)})
			model = model[len(model)-keep:]
		case 1:
			if len(model) > 0 {
				min := model[r.IntN(len(model))]
				s.Trim(StreamTrim{ByMinID: true, MinID: min})
				for len(model) > 0 && model[0].Less(min) {
					model = model[1:]
				}
			}
		default:
			id := StreamID{next, uint64(r.IntN(3))}
			next += uint64(1 + r.IntN(3))
			s.Add(id, []string{"f", "v"})
			model = append(model, id)
		}
		if s.Len() != len(model) {
			t.Fatalf("step %d: Len %d, want %d", step, s.Len(), len(model))
		}
		if len(model) == 0 || step%7 != 0 {
			continue
		}
		lo, hi := model[r.IntN(len(model))], model[r.IntN(len(model))]
		count := r.IntN(20) - 1
		rev := r.IntN(2) == 0
		var want []StreamID
		for _, id := range model {
			if !id.Less(lo) && !hi.Less(id) {
				want = append(want, id)
			}
		}
		if rev {
			slices.Reverse(want)
		}
		if count >= 0 && count < len(want) {
			want = want[:count]
		}
		got := s.Range(lo, hi, count, rev)
		if len(got) != len(want) {
			t.Fatalf("step %d: Range(%v, %v, %d, %v) = %d entries, want %d", step, lo, hi, count, rev, len(got), len(want))
		}
		for i := range want {
			if got[i].ID != want[i] {
				t.Fatalf("step %d: Range[%d] = %v, want %v", step, i, got[i].ID, want[i])
			}
		}
	}
}

// TestStreamFieldsRoundTrip checks the packed field encoding with empty
// and long (multi-byte length) values.
func TestStreamFieldsRoundTrip(t *testing.T) {
	var s Stream
	long := strings.Repeat("x", 300)
	want := []string{"", "v", long, "", "f", long + "y"}
	s.Add(StreamID{1, 0}, want)
	s.AddArgs(StreamID{2, 0}, [][]byte{[]byte("a"), []byte("")})
	got := s.Range(StreamID{}, StreamID{math.MaxUint64, math.MaxUint64}, -1, false)
	if len(got) != 2 || !slices.Equal(got[0].Fields(), want) || !slices.Equal(got[1].Fields(), []string{"a", ""}) {
		t.Fatalf("fields = %q", got)
	}
	if got[0].numFields() != 6 {
		t.Fatalf("numFields = %d", got[0].numFields())
	}
	if s.bytes <= 600 {
		t.Fatalf("tracked bytes %d, want the data size", s.bytes)
	}
	s.Trim(StreamTrim{MaxLen: 0})
	if s.bytes != 0 || s.Len() != 0 {
		t.Fatalf("after trimming everything: bytes %d, len %d", s.bytes, s.Len())
	}
}
