package server

import (
	"strconv"
	"strings"
	"testing"
)

func TestHashKeepsInsertionOrderWhileSmall(t *testing.T) {
	var h Hash
	for _, f := range []string{"c", "a", "b"} {
		if !h.Set(f, "v"+f) {
			t.Fatalf("Set(%s) reported an existing field", f)
		}
	}
	if h.Set("a", "new") {
		t.Fatal("Set(a) again reported a new field")
	}
	h.Delete("c")
	h.Set("c", "again")
	var order []string
	h.Each(func(f, v string) bool { order = append(order, f+"="+v); return true })
	if got := strings.Join(order, ","); got != "a=new,b=vb,c=again" {
		t.Fatalf("order %s, want a=new,b=vb,c=again (Redis's listpack order)", got)
	}
}

func TestHashConvertsWhenLarge(t *testing.T) {
	tests := []struct {
		name  string
		fill  func(h *Hash)
		large bool
	}{
		{"128 short fields stay small", func(h *Hash) {
			for i := 0; i < 128; i++ {
				h.Set(strconv.Itoa(i), "v")
			}
		}, false},
		{"129 fields convert", func(h *Hash) {
			for i := 0; i < 129; i++ {
				h.Set(strconv.Itoa(i), "v")
			}
		}, true},
		{"a 65-byte value converts", func(h *Hash) { h.Set("f", strings.Repeat("x", 65)) }, true},
		{"a 65-byte field converts", func(h *Hash) { h.Set(strings.Repeat("x", 65), "v") }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h Hash
			tt.fill(&h)
			if (h.m != nil) != tt.large {
				t.Fatalf("map encoding = %v, want %v", h.m != nil, tt.large)
			}
			n := h.Len()
			seen := 0
			h.Each(func(f, v string) bool {
				if got, ok := h.Get(f); !ok || got != v {
					t.Fatalf("Get(%q) = %q %v, want %q", f, got, ok, v)
				}
				seen++
				return true
			})
			sum := 0
			h.Each(func(f, v string) bool { sum += len(f) + len(v); return true })
			if sum != h.bytes {
				t.Fatalf("tracked bytes %d, want %d", h.bytes, sum)
			}
			if seen != n {
				t.Fatalf("Each saw %d fields, Len %d", seen, n)
			}
			if !h.Delete("f") && tt.name == "a 65-byte value converts" {
				t.Fatal("Delete(f) after conversion failed")
			}
		})
	}
}
