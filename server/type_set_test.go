package server

import (
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"testing"
)

func TestParseSetInt(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{"0", true}, {"-5", true}, {"9223372036854775807", true}, {"-9223372036854775808", true},
		{"9223372036854775808", false}, {"01", false}, {"+1", false}, {"-0", false}, {" 1", false}, {"", false}, {"1.0", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if _, ok := parseSetInt(tt.in); ok != tt.ok {
				t.Fatalf("parseSetInt(%q) ok = %v, want %v", tt.in, ok, tt.ok)
			}
		})
	}
}

func TestSetIntsetOrderAndConversion(t *testing.T) {
	var s Set
	for _, m := range []string{"10", "-3", "7", "10"} {
		s.Add(m)
	}
	if got := s.Members(); !slices.Equal(got, []string{"-3", "7", "10"}) {
		t.Fatalf("intset members %v, want ascending -3 7 10", got)
	}
	if !s.Has("7") || s.Has("07") || s.Has("x") {
		t.Fatal("Has on intset is wrong")
	}
	s.Add("x")
	if s.idx == nil || s.Len() != 4 || !s.Has("7") || !s.Has("x") {
		t.Fatalf("after adding a non-integer: len %d, members %v", s.Len(), s.Members())
	}
}

// TestSetAgainstMap drives Set and a map with the same random operations.
func TestSetAgainstMap(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var s Set
	model := map[string]bool{}
	for step := 0; step < 20000; step++ {
		var m string
		if step < 10000 {
			m = strconv.Itoa(r.IntN(700)) // intset, then converts past 512
		} else {
			m = "m" + strconv.Itoa(r.IntN(300))
		}
		switch r.IntN(4) {
		case 0, 1:
			if s.Add(m) == model[m] {
				t.Fatalf("step %d: Add(%s) newness wrong", step, m)
			}
			model[m] = true
		case 2:
			if s.Remove(m) != model[m] {
				t.Fatalf("step %d: Remove(%s) wrong", step, m)
			}
			delete(model, m)
		case 3:
			if s.Len() > 0 {
				p := s.Pop()
				if !model[p] {
					t.Fatalf("step %d: Pop returned non-member %s", step, p)
				}
				delete(model, p)
			}
		}
		if s.Len() != len(model) {
			t.Fatalf("step %d: Len %d, want %d", step, s.Len(), len(model))
		}
	}
	got := s.Members()
	sort.Strings(got)
	var want []string
	for m := range model {
		want = append(want, m)
	}
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Fatalf("members differ: got %d, want %d", len(got), len(want))
	}
	sum := 0
	for m := range model {
		sum += len(m)
	}
	if s.bytes != sum {
		t.Fatalf("tracked bytes %d, want %d", s.bytes, sum)
	}
	d := s.RandomDistinct(10)
	seen := map[string]bool{}
	for _, m := range d {
		if seen[m] || !model[m] {
			t.Fatalf("RandomDistinct returned %v: duplicate or non-member", d)
		}
		seen[m] = true
	}
}
