package server

import (
	"strconv"
	"strings"
	"testing"
)

func TestHashCommands(t *testing.T) {
	tests := []struct {
		name  string
		proto int
		cases []replyCase
	}{
		{"set get delete", 2, []replyCase{
			{cmd("HSET", "h", "b", "1", "a", "2"), ":2"},
			{cmd("HMSET", "h", "c", "3"), `+"OK"`},
			{cmd("HGETALL", "h"), `*6[$"b" $"1" $"a" $"2" $"c" $"3"]`},
			{cmd("HSETNX", "h", "a", "x"), ":0"},
			{cmd("HDEL", "h", "a", "b", "c", "zz"), ":3"},
			{cmd("EXISTS", "h"), ":0"},
		}},
		{"RESP3 map and nulls", 3, []replyCase{
			{cmd("HSET", "h", "f", "v"), ":1"},
			{cmd("HGETALL", "h"), `%2[$"f" $"v"]`},
			{cmd("HGETALL", "nokey"), `%0[]`},
			{cmd("HGET", "h", "nope"), "_"},
			{cmd("HMGET", "h", "f", "nope"), `*2[$"v" _]`},
		}},
		{"increments", 2, []replyCase{
			{cmd("HINCRBY", "h", "n", "-5"), ":-5"},
			{cmd("HINCRBY", "h", "n", "9223372036854775807"), ":9223372036854775802"},
			{cmd("HINCRBY", "h", "n", "10"), `-"ERR increment or decrement would overflow"`},
			{cmd("HINCRBYFLOAT", "h", "f", "0.1"), `$"0.1"`},
			{cmd("HINCRBYFLOAT", "h", "f", "0.2"), `$"0.3"`}, // long double, as Redis
			{cmd("HINCRBYFLOAT", "h", "f", "1e5000"), `-"ERR value is not a valid float"`},
			{cmd("HINCRBYFLOAT", "h", "f", "-inf"), `-"ERR value is NaN or Infinity"`},
			{cmd("HSET", "h", "s", "abc"), ":1"},
			{cmd("HINCRBY", "h", "s", "1"), `-"ERR hash value is not an integer"`},
			{cmd("HINCRBYFLOAT", "h", "s", "1"), `-"ERR hash value is not a float"`},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			newTypesConn(t, tt.proto).runCases(tt.cases)
		})
	}
}

// TestHashOutgrowsSmallEncoding writes past the 512-field threshold and
// checks nothing is lost in the conversion.
func TestHashOutgrowsSmallEncoding(t *testing.T) {
	tc := newTypesConn(t, 2)
	for i := 0; i < 600; i++ {
		tc.do("HSET", "h", "f"+strconv.Itoa(i), strconv.Itoa(i*i))
	}
	tc.expect(":600", "HLEN", "h")
	tc.expect(`$"22201"`, "HGET", "h", "f149")
	tc.expect(`$"hashtable"`, "OBJECT", "ENCODING", "h")
	r := tc.do("HKEYS", "h")
	if !strings.HasPrefix(r, "*600[") || !strings.Contains(r, `$"f299"`) {
		t.Fatalf("HKEYS = %.60s...", r)
	}
	for i := 0; i < 600; i += 2 {
		tc.do("HDEL", "h", "f"+strconv.Itoa(i))
	}
	tc.expect(":300", "HLEN", "h")
	tc.expect(":0", "HEXISTS", "h", "f0")
	tc.expect(":5", "HSTRLEN", "h", "f299") // 89401
}
