package server

import "testing"

func TestStringCommands(t *testing.T) {
	c, _ := newTestServer(t)
	steps := []struct {
		args []string
		want string
	}{
		{[]string{"GET", "k"}, "(nil)"},
		{[]string{"SET", "k", "v"}, `"OK"`},
		{[]string{"GET", "k"}, `"v"`},
		{[]string{"SET", "k", "w", "GET"}, `"v"`},
		{[]string{"SET", "k", "x", "NX"}, "(nil)"},
		{[]string{"SET", "k2", "x", "XX"}, "(nil)"},
		{[]string{"SET", "k", "x", "NX", "XX"}, "(error) ERR syntax error"},
		{[]string{"SET", "k", "x", "EX", "0"}, "(error) ERR invalid expire time in 'set' command"},
		{[]string{"SET", "k", "x", "EX", "a"}, "(error) ERR value is not an integer or out of range"},
		{[]string{"SET", "k", "x", "EX"}, "(error) ERR syntax error"},
		{[]string{"SET", "k", "x", "EX", "100", "KEEPTTL"}, "(error) ERR syntax error"},
		{[]string{"SET", "k"}, "(error) ERR wrong number of arguments for 'set' command"},
		{[]string{"INCR", "n"}, "(integer) 1"},
		{[]string{"INCRBY", "n", "10"}, "(integer) 11"},
		{[]string{"DECRBY", "n", "20"}, "(integer) -9"},
		{[]string{"INCR", "k"}, "(error) ERR value is not an integer or out of range"},
		{[]string{"SET", "big", "9223372036854775807"}, `"OK"`},
		{[]string{"INCR", "big"}, "(error) ERR increment or decrement would overflow"},
		{[]string{"INCRBYFLOAT", "f", "10.5"}, `"10.5"`},
		{[]string{"INCRBYFLOAT", "f", "0.1"}, `"10.6"`},
		{[]string{"APPEND", "s", "ab"}, "(integer) 2"},
		{[]string{"APPEND", "s", "cd"}, "(integer) 4"},
		{[]string{"STRLEN", "s"}, "(integer) 4"},
		{[]string{"GETRANGE", "s", "1", "-2"}, `"bc"`},
		{[]string{"SETRANGE", "s", "6", "xy"}, "(integer) 8"},
		{[]string{"GET", "s"}, `"abcd\x00\x00xy"`},
		{[]string{"MSET", "a", "1", "b", "2"}, `"OK"`},
		{[]string{"MGET", "a", "b", "nope"}, `*["1" "2" (nil)]`},
		{[]string{"MSETNX", "a", "1", "c", "3"}, "(integer) 0"},
		{[]string{"GETDEL", "a"}, `"1"`},
		{[]string{"GET", "a"}, "(nil)"},
		{[]string{"GETSET", "b", "3"}, `"2"`},
		{[]string{"SETNX", "b", "4"}, "(integer) 0"},
		{[]string{"SETEX", "e", "100", "v"}, `"OK"`},
		{[]string{"TTL", "e"}, "(integer) 100"},
		{[]string{"GETEX", "e", "PERSIST"}, `"v"`},
		{[]string{"TTL", "e"}, "(integer) -1"},
		{[]string{"NOSUCH", "a", "b"}, "(error) ERR unknown command 'NOSUCH', with args beginning with: 'a' 'b' "},
	}
	for _, s := range steps {
		c.must(s.want, s.args...)
	}
}
