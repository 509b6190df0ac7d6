package server

import (
	"strings"
	"testing"
	"time"
)

// Redis's answers (redis-server 7.0.15) to the cases where a plain
// backtracking matcher differs or takes exponential time; glob.txt
// compares the rest through KEYS, SCAN and PSUBSCRIBE.
func TestGlobRedisQuirks(t *testing.T) {
	for _, tt := range []struct {
		pat, s string
		want   bool
	}{
		{"*", "", false}, // KEYS and SCAN answer "*" without matching
		{"**", "", false},
		{"", "", true},
		{"a*", "a", true},
		{"a**", "a", true},
		{"a[", "ab", false},
		{"a[b", "ab", true},
		{"a[^", "ab", true},
		{"[a-\xff]", "b", false}, // C's signed char: 'a'..-1 swaps to -1..'a'
		{"[a-\xff]", "\xfe", false},
		{"[a-\xff]", "\xff", true},
		{"[\x80-\xff]", "\xc0", true},
		{"h\\", "h\\", true},
		{strings.Repeat("*a", 999), strings.Repeat("a", 2000), true},
		{strings.Repeat("*a", 1001), strings.Repeat("a", 2000), false}, // nesting limit
	} {
		if got := globMatch([]byte(tt.pat), []byte(tt.s), false); got != tt.want {
			t.Errorf("globMatch(%.40q, %.20q) = %v, want %v", tt.pat, tt.s, got, tt.want)
		}
	}
}

// The CVE-2022-36021 pattern against a long run of 'a' answers no match in
// bounded time (redis-server 7.0.15: 2.5 ms per KEYS, round trip included, with a
// 100 kB key); a
// backtracking matcher without skipLongerMatches runs for hours.
func TestGlobCVE202236021(t *testing.T) {
	pat := []byte("a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b")
	key := []byte(strings.Repeat("a", 100000))
	start := time.Now()
	if globMatch(pat, key, false) {
		t.Fatal("matched")
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("took %v", d)
	}
	// Over the network too, in KEYS and SCAN MATCH.
	tc, _ := newTestServer(t)
	tc.must(`"OK"`, "SET", string(key), "v")
	start = time.Now()
	tc.must("*[]", "KEYS", string(pat))
	tc.must(`*["0" *[]]`, "SCAN", "0", "MATCH", string(pat))
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("KEYS and SCAN took %v", d)
	}
}

func BenchmarkGlobCVE(b *testing.B) {
	pat := []byte("a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b")
	key := []byte(strings.Repeat("a", 100000))
	for b.Loop() {
		globMatch(pat, key, false)
	}
}
