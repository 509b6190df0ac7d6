package server

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"
)

func TestZSetCommands(t *testing.T) {
	tests := []struct {
		name  string
		proto int
		cases []replyCase
	}{
		{"RESP2 scores are bulk strings printed %.17g", 2, []replyCase{
			{cmd("ZADD", "z", "1.1", "a", "2", "b"), ":2"},
			{cmd("ZSCORE", "z", "a"), `$"1.1000000000000001"`},
			{cmd("ZRANGE", "z", "0", "-1", "WITHSCORES"), `*4[$"a" $"1.1000000000000001" $"b" $"2"]`},
			{cmd("ZPOPMIN", "z"), `*2[$"a" $"1.1000000000000001"]`},
		}},
		{"RESP3 scores are doubles, WITHSCORES pairs nested", 3, []replyCase{
			{cmd("ZADD", "z", "1", "a", "inf", "b"), ":2"},
			{cmd("ZSCORE", "z", "b"), `,"inf"`},
			{cmd("ZINCRBY", "z", "0.5", "a"), `,"1.5"`},
			{cmd("ZRANGE", "z", "0", "-1", "WITHSCORES"), `*2[*2[$"a" ,"1.5"] *2[$"b" ,"inf"]]`},
			{cmd("ZPOPMAX", "z", "1"), `*1[*2[$"b" ,"inf"]]`},
			{cmd("ZPOPMIN", "z"), `*2[$"a" ,"1.5"]`},
			{cmd("EXISTS", "z"), ":0"},
		}},
		{"options", 2, []replyCase{
			{cmd("ZADD", "z", "5", "a"), ":1"},
			{cmd("ZADD", "z", "GT", "CH", "4", "a", "1", "b"), ":1"},
			{cmd("ZADD", "z", "LT", "CH", "4", "a"), ":1"},
			{cmd("ZADD", "z", "XX", "INCR", "1", "nope"), "$nil"},
			{cmd("ZADD", "z", "NX", "GT", "1", "a"), `-"ERR GT, LT, and/or NX options at the same time are not compatible"`},
			{cmd("ZRANGE", "z", "+inf", "-inf", "BYSCORE", "REV", "LIMIT", "0", "1"), `*1[$"a"]`},
			{cmd("ZRANGE", "z", "0", "-1", "LIMIT", "0", "1"), `-"ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"`},
			{cmd("ZCOUNT", "z", "(1", "4"), ":1"},
			{cmd("ZREVRANK", "z", "b"), ":1"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			newTypesConn(t, tt.proto).runCases(tt.cases)
		})
	}
}

// TestZSetAgainstModelOverTheWire builds a sorted set of 1000 members with
// random updates and removals and checks ranges, ranks and counts against a
// sorted slice.
func TestZSetAgainstModelOverTheWire(t *testing.T) {
	tc := newTypesConn(t, 2)
	r := rand.New(rand.NewPCG(7, 8))
	model := map[string]int{}
	for i := 0; i < 3000; i++ {
		m := "m" + strconv.Itoa(r.IntN(1000))
		if r.IntN(5) == 0 {
			tc.do("ZREM", "z", m)
			delete(model, m)
			continue
		}
		s := r.IntN(100)
		tc.do("ZADD", "z", strconv.Itoa(s), m)
		model[m] = s
	}
	type ms struct {
		m string
		s int
	}
	var sorted []ms
	for m, s := range model {
		sorted = append(sorted, ms{m, s})
	}
	sort.Slice(sorted, func(i, j int) bool {
		return sorted[i].s < sorted[j].s || sorted[i].s == sorted[j].s && sorted[i].m < sorted[j].m
	})
	tc.expect(":"+strconv.Itoa(len(sorted)), "ZCARD", "z")
	var want strings.Builder
	fmt.Fprintf(&want, "*%d[", 20)
	for i, e := range sorted[100:110] {
		if i > 0 {
			want.WriteByte(' ')
		}
		fmt.Fprintf(&want, `$"%s" $"%d"`, e.m, e.s)
	}
	want.WriteByte(']')
	tc.expect(want.String(), "ZRANGE", "z", "100", "109", "WITHSCORES")
	for _, i := range []int{0, 17, len(sorted) / 2, len(sorted) - 1} {
		tc.expect(":"+strconv.Itoa(i), "ZRANK", "z", sorted[i].m)
	}
	n := 0
	for _, e := range sorted {
		if e.s > 10 && e.s <= 50 {
			n++
		}
	}
	tc.expect(":"+strconv.Itoa(n), "ZCOUNT", "z", "(10", "50")
}
