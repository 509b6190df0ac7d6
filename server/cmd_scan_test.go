package server

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/dpulab/dpulab/server/resp"
)

// scanReply sends a SCAN-family command and returns the cursor and the
// names it returned (fields or members only, for HSCAN and ZSCAN).
func scanReply(t *testing.T, tc *testConn, pairs bool, args ...string) (string, []string) {
	t.Helper()
	tc.conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := tc.conn.Write(resp.AppendCommand(nil, args...)); err != nil {
		t.Fatal(err)
	}
	v, err := tc.r.ReadReply()
	if err != nil {
		t.Fatal(err)
	}
	if v.IsError() || len(v.Elems) != 2 {
		t.Fatalf("%q: %s", args, v.String())
	}
	var names []string
	for i, e := range v.Elems[1].Elems {
		if !pairs || i%2 == 0 {
			names = append(names, string(e.Str))
		}
	}
	return string(v.Elems[0].Str), names
}

// TestScanGuarantee checks Redis's documented guarantee for every scanned
// collection in its big encoding: an element present from the start to the
// end of a full iteration is returned, while other elements are removed,
// added and (sorted sets) moved between calls, and while the calls
// alternate between two connections (a client's pool).
func TestScanGuarantee(t *testing.T) {
	const n = 2000
	cases := []struct {
		name  string
		cmd   string // SCAN, or SSCAN/HSCAN/ZSCAN with the key
		pairs bool
		add   func(tc *testConn, i int)
		del   func(tc *testConn, i int)
		move  func(tc *testConn, i int)
	}{
		{name: "keys", cmd: "SCAN",
			add: func(tc *testConn, i int) { tc.do("SET", "k"+strconv.Itoa(i), "v") },
			del: func(tc *testConn, i int) { tc.do("DEL", "k"+strconv.Itoa(i)) }},
		{name: "set", cmd: "SSCAN s",
			add: func(tc *testConn, i int) { tc.do("SADD", "s", "k"+strconv.Itoa(i)) },
			// Removing from our big set moves its last member into the gap.
			del: func(tc *testConn, i int) { tc.do("SREM", "s", "k"+strconv.Itoa(i)) }},
		{name: "hash", cmd: "HSCAN h", pairs: true,
			add: func(tc *testConn, i int) { tc.do("HSET", "h", "k"+strconv.Itoa(i), "v") },
			del: func(tc *testConn, i int) { tc.do("HDEL", "h", "k"+strconv.Itoa(i)) }},
		{name: "zset", cmd: "ZSCAN z", pairs: true,
			add: func(tc *testConn, i int) { tc.do("ZADD", "z", strconv.Itoa(i), "k"+strconv.Itoa(i)) },
			del: func(tc *testConn, i int) { tc.do("ZREM", "z", "k"+strconv.Itoa(i)) },
			// A member moving ahead of the iteration must still come.
			move: func(tc *testConn, i int) { tc.do("ZADD", "z", "-"+strconv.Itoa(i), "k"+strconv.Itoa(i)) }},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			a, addr := newTestServer(t)
			b := dialTest(t, addr)
			for i := 0; i < n; i++ {
				tt.add(a, i)
			}
			// Elements below n/2 stay for the whole iteration; those from
			// n/2 are deleted as it goes; new ones from n are added.
			stay := map[string]bool{}
			for i := 0; i < n/2; i++ {
				stay["k"+strconv.Itoa(i)] = true
			}
			seen := map[string]int{}
			cursor := "0"
			for step := 0; ; step++ {
				conn := a
				if step%2 == 1 {
					conn = b
				}
				args := append(splitWords(tt.cmd), cursor, "COUNT", "7")
				next, names := scanReply(t, conn, tt.pairs, args...)
				for _, nm := range names {
					seen[nm]++
				}
				if next == "0" {
					break
				}
				if step > 10*n {
					t.Fatal("the iteration does not end")
				}
				cursor = next
				if d := n/2 + step; d < n {
					tt.del(b, d)
				}
				tt.add(a, n+step)
				if tt.move != nil && step < n/2 {
					tt.move(b, (step*7919)%(n/2))
				}
			}
			for nm := range stay {
				if seen[nm] == 0 {
					t.Errorf("%s present for the whole iteration but not returned", nm)
				}
			}
			for nm, c := range seen {
				if c > 1 {
					t.Errorf("%s returned %d times in an iteration that was never restarted", nm, c)
				}
			}
		})
	}
}

func splitWords(s string) []string {
	var out []string
	for _, w := range []byte(s) {
		if w == ' ' {
			out = append(out, "")
			continue
		}
		if len(out) == 0 {
			out = append(out, "")
		}
		out[len(out)-1] += string(w)
	}
	return out
}

// TestScanCursorNotOurs: a cursor the server does not know (never issued,
// dropped from the registry, or from another key) restarts the iteration:
// duplicates are allowed, a miss is not.
func TestScanCursorNotOurs(t *testing.T) {
	tc, _ := newTestServer(t)
	for i := 0; i < 100; i++ {
		tc.do("SADD", "s", fmt.Sprint("m", i))
		tc.do("SADD", "t", fmt.Sprint("m", i))
	}
	cur, _ := scanReply(t, tc, false, "SSCAN", "s", "0", "COUNT", "10")
	for _, start := range []string{"12345", "18446744073709551615", cur} {
		// cur belongs to s: on t it is not ours.
		seen := map[string]bool{}
		c := start
		for i := 0; ; i++ {
			next, names := scanReply(t, tc, false, "SSCAN", "t", c, "COUNT", "10")
			for _, nm := range names {
				seen[nm] = true
			}
			if next == "0" || i > 100 {
				break
			}
			c = next
		}
		if len(seen) != 100 {
			t.Errorf("from cursor %s: %d of 100 members", start, len(seen))
		}
	}
}

// TestScanRegistryBounds: past scanMaxSnapshots the least recently used
// iteration is dropped, and resuming it starts over; a finished one
// leaves nothing behind.
func TestScanRegistryBounds(t *testing.T) {
	d := newDB()
	items := []string{"a", "b", "c"}
	take := func() []string { return items }
	var first uint64
	for i := 0; i < scanMaxSnapshots+5; i++ {
		_, cur := d.scanStep(0, true, nil, 1, int64(i), take)
		if cur == 0 {
			t.Fatal("a 3-item iteration by 1 ended after one step")
		}
		if i == 0 {
			first = cur
		}
	}
	if got := len(d.scans.snaps); got != scanMaxSnapshots {
		t.Fatalf("%d iterations held, want the bound %d", got, scanMaxSnapshots)
	}
	if got := d.scans.items; got != 3*scanMaxSnapshots {
		t.Fatalf("items %d, want %d", got, 3*scanMaxSnapshots)
	}
	// The first was dropped: resuming it restarts at "a".
	batch, _ := d.scanStep(first, true, nil, 1, 10_000, take)
	if len(batch) != 1 || batch[0] != "a" {
		t.Fatalf("resumed a dropped iteration: %q, want a restart at a", batch)
	}
	// Finishing an iteration removes it.
	d2 := newDB()
	_, cur := d2.scanStep(0, true, nil, 2, 0, take)
	if _, cur = d2.scanStep(cur, true, nil, 2, 0, take); cur != 0 || len(d2.scans.snaps) != 0 || d2.scans.items != 0 {
		t.Fatalf("finished iteration: cursor %d, %d held, %d items", cur, len(d2.scans.snaps), d2.scans.items)
	}
	// Idle iterations go once there are many.
	d3 := newDB()
	for i := 0; i < 70; i++ {
		d3.scanStep(0, true, nil, 1, 0, take)
	}
	d3.scanStep(0, true, nil, 1, scanIdleMs+1, take)
	if got := len(d3.scans.snaps); got != 1 {
		t.Fatalf("%d iterations after the idle ones expired, want 1", got)
	}
}
