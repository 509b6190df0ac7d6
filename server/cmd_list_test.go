package server

import (
	"strconv"
	"testing"
)

func TestListCommands(t *testing.T) {
	tests := []struct {
		name  string
		proto int
		cases []replyCase
	}{
		{"push pop and empty keys vanish", 2, []replyCase{
			{cmd("RPUSH", "q", "1", "2", "3"), ":3"},
			{cmd("LPUSH", "q", "0"), ":4"},
			{cmd("RPOP", "q", "3"), `*3[$"3" $"2" $"1"]`},
			{cmd("LPOP", "q"), `$"0"`},
			{cmd("EXISTS", "q"), ":0"},
			{cmd("LPOP", "q"), "$nil"},
			{cmd("LPOP", "q", "2"), "*nil"},
			{cmd("LPUSHX", "q", "x"), ":0"},
			{cmd("EXISTS", "q"), ":0"},
		}},
		{"RESP3 nulls", 3, []replyCase{
			{cmd("LPOP", "q"), "_"},
			{cmd("LPOP", "q", "2"), "_"},
			{cmd("LINDEX", "q", "0"), "_"},
		}},
		{"index trim remove insert", 2, []replyCase{
			{cmd("RPUSH", "l", "a", "b", "a", "c", "a"), ":5"},
			{cmd("LINDEX", "l", "-1"), `$"a"`},
			{cmd("LSET", "l", "-2", "C"), "+\"OK\""},
			{cmd("LREM", "l", "-2", "a"), ":2"},
			{cmd("LRANGE", "l", "0", "-1"), `*3[$"a" $"b" $"C"]`},
			{cmd("LINSERT", "l", "after", "b", "b2"), ":4"},
			{cmd("LTRIM", "l", "1", "-2"), "+\"OK\""},
			{cmd("LRANGE", "l", "-100", "100"), `*2[$"b" $"b2"]`},
			{cmd("LTRIM", "l", "5", "1"), "+\"OK\""},
			{cmd("EXISTS", "l"), ":0"},
		}},
		{"errors", 2, []replyCase{
			{cmd("SET", "s", "x"), "+\"OK\""},
			{cmd("RPUSH", "s", "a"), `-"` + errWrongType + `"`},
			{cmd("LSET", "nokey", "0", "a"), `-"ERR no such key"`},
			{cmd("LPOP", "l", "-1"), `-"ERR value is out of range, must be positive"`},
			{cmd("LPOP", "l", "1", "2"), `-"ERR wrong number of arguments for 'lpop' command"`},
			{cmd("LINSERT", "l", "middle", "a", "b"), `-"ERR syntax error"`},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			newTypesConn(t, tt.proto).runCases(tt.cases)
		})
	}
}

// TestListLargeRanges checks LRANGE across the ring buffer's wrap-around
// with a list long enough for redis-benchmark's LRANGE_600.
func TestListLargeRanges(t *testing.T) {
	tc := newTypesConn(t, 2)
	for i := 0; i < 700; i++ {
		tc.do("LPUSH", "big", strconv.Itoa(i))
		if i%3 == 0 {
			tc.do("RPOP", "big")
		}
	}
	tc.expect(":466", "LLEN", "big")
	r := tc.do("LRANGE", "big", "0", "599")
	if want := `*466[$"699" $"698"`; r[:len(want)] != want {
		t.Fatalf("LRANGE 0 599 starts %q, want %q", r[:40], want)
	}
	tc.expect(`$"234"`, "LINDEX", "big", "-1") // the 234 RPOPs took 0..233
}
