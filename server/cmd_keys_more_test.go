package server

import (
	"strings"
	"testing"
)

// TestSwapDBWatchAndSelection: a client keeps its database number across
// SWAPDB and sees the other data; WATCH of a key that existed on either
// side fails the transaction, as Redis's touchAllWatchedKeysInDb does.
func TestSwapDBWatchAndSelection(t *testing.T) {
	a, addr := newTestServer(t)
	b := dialTest(t, addr)
	a.must(`"OK"`, "SET", "k0", "zero")
	b.must(`"OK"`, "SELECT", "1")
	b.must(`"OK"`, "SET", "k1", "one")
	a.must(`"OK"`, "WATCH", "k1") // missing in 0, present in 1
	w := dialTest(t, addr)
	w.must(`"OK"`, "WATCH", "untouched")
	b.must(`"OK"`, "SWAPDB", "0", "1")
	a.must(`"one"`, "GET", "k1")
	b.must(`"zero"`, "GET", "k0")
	a.must(`"OK"`, "MULTI")
	a.must(`"QUEUED"`, "PING")
	a.must("(nil)", "EXEC")
	w.must(`"OK"`, "MULTI")
	w.must(`"QUEUED"`, "PING")
	w.must(`*["PONG"]`, "EXEC")
}

// TestCopyIsDeep: the copy of every container type is independent of the
// source, in both encodings.
func TestCopyIsDeep(t *testing.T) {
	c, _ := newTestServer(t)
	long := strings.Repeat("x", 100) // forces the big encodings
	c.do("HSET", "h", "f", long)
	c.do("ZADD", "z", "1", long)
	c.do("SADD", "s", long)
	for _, k := range []string{"h", "z", "s"} {
		c.must("(integer) 1", "COPY", k, k+"2")
	}
	c.do("HSET", "h2", "g", "1")
	c.do("ZADD", "z2", "2", "m")
	c.do("SADD", "s2", "m")
	c.must("(integer) 1", "HLEN", "h")
	c.must("(integer) 1", "ZCARD", "z")
	c.must("(integer) 1", "SCARD", "s")
	c.must(`"hashtable"`, "OBJECT", "ENCODING", "h2")
	c.must(`"skiplist"`, "OBJECT", "ENCODING", "z2")
	c.must(`*["`+long+`" "1" "m" "2"]`, "ZRANGE", "z2", "0", "-1", "WITHSCORES")
	// A copied string is not shared with the source: SETBIT writes in place.
	c.do("SET", "str", "a")
	c.must("(integer) 1", "COPY", "str", "str2")
	c.do("SETBIT", "str2", "7", "0")
	c.must(`"a"`, "GET", "str")
}
