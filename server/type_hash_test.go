package server

import (
	"math/rand/v2"
	"slices"
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
		{"512 short fields stay small", func(h *Hash) {
			for i := 0; i < 512; i++ {
				h.Set(strconv.Itoa(i), "v")
			}
		}, false},
		{"513 fields convert", func(h *Hash) {
			for i := 0; i < 513; i++ {
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

// TestHashAgainstModel drives Hash and an insertion-ordered model with the
// same random operations, through the conversion to the map encoding.
func TestHashAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, space := range []int{40, 300} {
		var h Hash
		var keys []string
		vals := map[string]string{}
		for step := 0; step < 20000; step++ {
			f := "f" + strconv.Itoa(r.IntN(space))
			if r.IntN(50) == 0 {
				f = strings.Repeat("F", r.IntN(80)) // sometimes too long for the small form
			}
			switch r.IntN(4) {
			case 0, 1:
				v := strconv.Itoa(r.IntN(1000))
				if r.IntN(3) == 0 {
					v = strings.Repeat("v", r.IntN(20))
				}
				_, had := vals[f]
				if h.SetBytes([]byte(f), []byte(v)) == had {
					t.Fatalf("space %d step %d: SetBytes(%q) newness wrong", space, step, f)
				}
				if !had {
					keys = append(keys, f)
				}
				vals[f] = v
			case 2:
				_, had := vals[f]
				if h.Delete(f) != had {
					t.Fatalf("space %d step %d: Delete(%q) wrong", space, step, f)
				}
				if had {
					delete(vals, f)
					keys = slices.DeleteFunc(keys, func(k string) bool { return k == f })
				}
			case 3:
				v, ok := h.GetBytes([]byte(f))
				if want, had := vals[f]; ok != had || ok && string(v) != want {
					t.Fatalf("space %d step %d: Get(%q) = %q %v, want %q %v", space, step, f, v, ok, want, had)
				}
			}
			if h.Len() != len(vals) {
				t.Fatalf("space %d step %d: Len %d, want %d", space, step, h.Len(), len(vals))
			}
			if step%97 != 0 {
				continue
			}
			var got []string
			sum := 0
			h.Each(func(f, v string) bool {
				got = append(got, f)
				sum += len(f) + len(v)
				if vals[f] != v {
					t.Fatalf("space %d step %d: Each gave %q=%q, want %q", space, step, f, v, vals[f])
				}
				return true
			})
			if h.m == nil && !slices.Equal(got, keys) {
				t.Fatalf("space %d step %d: small order %v, want insertion order %v", space, step, got, keys)
			}
			if len(got) != len(keys) {
				t.Fatalf("space %d step %d: Each saw %d fields, want %d", space, step, len(got), len(keys))
			}
		}
	}
}
