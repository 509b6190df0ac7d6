package server

import (
	"strconv"
	"strings"
	"testing"
)

func TestSetCommands(t *testing.T) {
	tests := []struct {
		name  string
		proto int
		cases []replyCase
	}{
		{"integer sets reply in ascending order", 2, []replyCase{
			{cmd("SADD", "s", "10", "-1", "3", "3"), ":3"},
			{cmd("SMEMBERS", "s"), `*3[$"-1" $"3" $"10"]`},
			{cmd("SADD", "t", "3", "10", "99"), ":3"},
			{cmd("SINTER", "s", "t"), `*2[$"3" $"10"]`},
			{cmd("SUNION", "s", "t"), `*4[$"-1" $"3" $"10" $"99"]`},
			{cmd("SDIFF", "t", "s"), `*1[$"99"]`},
		}},
		{"RESP3 sets", 3, []replyCase{
			{cmd("SADD", "s", "1"), ":1"},
			{cmd("SMEMBERS", "s"), `~1[$"1"]`},
			{cmd("SPOP", "s", "0"), `~0[]`},
			{cmd("SRANDMEMBER", "s", "2"), `*1[$"1"]`},
			{cmd("SPOP", "nokey"), "_"},
		}},
		{"pop empties the key", 2, []replyCase{
			{cmd("SADD", "s", "a"), ":1"},
			{cmd("SPOP", "s"), `$"a"`},
			{cmd("EXISTS", "s"), ":0"},
			{cmd("SREM", "s", "a"), ":0"},
		}},
		{"errors", 2, []replyCase{
			{cmd("SET", "str", "x"), `+"OK"`},
			{cmd("SUNION", "nokey", "str"), `-"` + errWrongType + `"`},
			{cmd("SPOP", "s", "-1"), `-"ERR value is out of range, must be positive"`},
			{cmd("SRANDMEMBER", "s", "x"), `-"ERR value is not an integer or out of range"`},
			{cmd("SPOP", "s", "1", "2"), `-"ERR syntax error"`},
			{cmd("SADD", "s", "a"), ":1"},
			{cmd("SRANDMEMBER", "s", "-10000001"), `-"ERR count is too large: SRANDMEMBER with a negative count returns at most 10000000 members; ask for fewer"`},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			newTypesConn(t, tt.proto).runCases(tt.cases)
		})
	}
}

// TestSetRandomIsSpread checks SRANDMEMBER and SPOP draw every member,
// not just the first ones (a Go map's iteration order is not a uniform
// draw). With 8 members and 4000 draws, a member drawn fewer than 250 times
// (expected 500) has odds far below one in a billion.
func TestSetRandomIsSpread(t *testing.T) {
	tc := newTypesConn(t, 2)
	for i := 0; i < 8; i++ {
		tc.do("SADD", "s", "m"+strconv.Itoa(i))
	}
	counts := map[string]int{}
	for i := 0; i < 4000; i++ {
		counts[tc.do("SRANDMEMBER", "s")]++
	}
	for m, n := range counts {
		if n < 250 {
			t.Errorf("SRANDMEMBER drew %s %d times of 4000", m, n)
		}
	}
	if len(counts) != 8 {
		t.Errorf("SRANDMEMBER drew %d distinct members of 8: %v", len(counts), counts)
	}
	r := tc.do("SRANDMEMBER", "s", "-20")
	if strings.Count(r, `$"m`) != 20 {
		t.Errorf("SRANDMEMBER -20 = %s", r)
	}
	seen := map[string]bool{}
	for i := 0; i < 8; i++ {
		m := tc.do("SPOP", "s")
		if seen[m] || m == "$nil" {
			t.Fatalf("SPOP #%d returned %s twice or nil", i, m)
		}
		seen[m] = true
	}
	tc.expect(":0", "EXISTS", "s")
}
