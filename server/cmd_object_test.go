package server

import (
	"strconv"
	"testing"
	"time"
)

// TestObjectIdleTime checks that reads refresh a key's clock under the
// default policy (noeviction), as Redis's do, and that OBJECT and TYPE do
// not.
func TestObjectIdleTime(t *testing.T) {
	tc, _ := newTestServer(t)
	tc.must(`"OK"`, "SET", "read", "v")
	tc.must(`"OK"`, "SET", "idle", "v")
	tc.must("(integer) 0", "OBJECT", "IDLETIME", "idle")
	time.Sleep(2100 * time.Millisecond)
	tc.must(`"v"`, "GET", "read")
	tc.must(`"string"`, "TYPE", "idle")
	tc.must("(integer) 0", "OBJECT", "IDLETIME", "read")
	got := tc.do("OBJECT", "IDLETIME", "idle")
	if got != "(integer) 2" && got != "(integer) 3" {
		t.Fatalf("OBJECT IDLETIME idle after 2.1s = %s, want 2 (or 3 on a slow machine)", got)
	}
	tc.must("(error) ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.",
		"OBJECT", "FREQ", "idle")
}

// TestObjectFreq runs OBJECT FREQ under allkeys-lfu: a new key starts at
// Redis's LFU_INIT_VAL, accesses raise the logarithmic counter, and
// IDLETIME is refused.
func TestObjectFreq(t *testing.T) {
	tc, _ := newTestServer(t)
	tc.must(`"OK"`, "CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")
	tc.must(`"OK"`, "SET", "k", "v")
	tc.must("(integer) 5", "OBJECT", "FREQ", "k")
	for i := 0; i < 200; i++ {
		tc.do("GET", "k")
	}
	// With lfu-log-factor 10 the first accesses above 5 count with
	// probability 1, 1/11, 1/21, ...: 200 reads reach 7 or more almost
	// surely, and never 255.
	n, err := strconv.Atoi(tc.do("OBJECT", "FREQ", "k")[len("(integer) "):])
	if err != nil || n < 7 || n > 30 {
		t.Fatalf("OBJECT FREQ after 200 reads = %d (%v), want 7..30", n, err)
	}
	// OBJECT itself does not count as an access.
	tc.must("(integer) "+strconv.Itoa(n), "OBJECT", "FREQ", "k")
	// An overwrite keeps the key's frequency, as in Redis.
	tc.must(`"OK"`, "SET", "k", "other value")
	if got := tc.do("OBJECT", "FREQ", "k"); got != "(integer) "+strconv.Itoa(n) && got != "(integer) "+strconv.Itoa(n+1) {
		t.Fatalf("OBJECT FREQ after SET = %s, want %d or %d", got, n, n+1)
	}
	tc.must("(error) ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.",
		"OBJECT", "IDLETIME", "k")
	tc.must("(nil)", "OBJECT", "FREQ", "nokey")
}

func TestLFUCounter(t *testing.T) {
	const m = 1000 // minutes
	tests := []struct {
		name    string
		bits    uint32
		minutes uint32
		want    uint32
	}{
		{"new key", lfuInit(m), m, lfuInitVal},
		{"one minute decays by one", m<<8 | 10, m + 1, 9},
		{"decay stops at zero", m<<8 | 3, m + 10, 0},
		{"the 16-bit minutes clock wraps (as Redis counts it)", 65530<<8 | 20, 4, 11},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lfuCounter(tt.bits, tt.minutes); got != tt.want {
				t.Fatalf("lfuCounter = %d, want %d", got, tt.want)
			}
		})
	}
	// At or below LFU_INIT_VAL every access counts.
	if got := lfuAccess(m<<8|2, m) & 255; got != 3 {
		t.Fatalf("lfuAccess(2) = %d, want 3", got)
	}
	if got := lfuAccess(m<<8|255, m+0) & 255; got != 255 {
		t.Fatalf("lfuAccess(255) = %d, want 255", got)
	}
	if got := lfuAccess(m<<8|7, m+5) >> 8; got != m+5 {
		t.Fatalf("lfuAccess records minute %d, want %d", got, m+5)
	}
}

// TestEvictLFU checks that allkeys-lfu evicts the least frequently used
// key, not the least recently used one.
func TestEvictLFU(t *testing.T) {
	now := time.Now().UnixMilli()
	m := lfuMinutes(now)
	d := newDB()
	d.put([]byte("hot"), stringEntry([]byte("v"), m<<8|50))
	d.put([]byte("cold"), stringEntry([]byte("v"), m<<8|2))
	d.put([]byte("warm"), stringEntry([]byte("v"), m<<8|20))
	if !evictOne([]*db{d}, "allkeys-lfu", 10, now) {
		t.Fatal("nothing evicted")
	}
	if _, ok := d.keys["cold"]; ok || len(d.keys) != 2 {
		t.Fatalf("keys left %v, want hot and warm", d.keys)
	}
}

// TestObjectEncodingConversions follows values across Redis's encoding
// thresholds (the diff scripts check the same against redis-server).
func TestObjectEncodingConversions(t *testing.T) {
	tc := newTypesConn(t, 2)
	for i := 0; i < 512; i++ {
		tc.do("SADD", "s", strconv.Itoa(i))
	}
	tc.expect(`$"intset"`, "OBJECT", "ENCODING", "s")
	tc.do("SADD", "s", "512")
	tc.expect(`$"hashtable"`, "OBJECT", "ENCODING", "s")
	for i := 0; i < 128; i++ {
		tc.do("ZADD", "z", strconv.Itoa(i), "m"+strconv.Itoa(i))
	}
	tc.expect(`$"listpack"`, "OBJECT", "ENCODING", "z")
	tc.do("ZADD", "z", "0", "one more")
	tc.expect(`$"skiplist"`, "OBJECT", "ENCODING", "z")
	for i := 0; i < 1000; i++ {
		tc.do("RPUSH", "l", "x")
	}
	tc.expect(`$"quicklist"`, "OBJECT", "ENCODING", "l")
}
