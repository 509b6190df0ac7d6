package server

import (
	"net"
	"testing"

	"github.com/dpulab/dpulab/server/resp"
)

// benchCommand measures one command over a pipelined in-process
// connection (100 per round trip) and reports allocations per command, the
// figure that decides how the type commands scale on a busy server.
func benchCommand(b *testing.B, setup [][]string, args ...string) {
	addr := StartTest(b, DefaultConfig())
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	rd := resp.NewReader(conn)
	for _, s := range setup {
		conn.Write(resp.AppendCommand(nil, s...))
		if _, err := rd.ReadReply(); err != nil {
			b.Fatal(err)
		}
	}
	const depth = 100
	var batch []byte
	for i := 0; i < depth; i++ {
		batch = resp.AppendCommand(batch, args...)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += depth {
		if _, err := conn.Write(batch); err != nil {
			b.Fatal(err)
		}
		for j := 0; j < depth; j++ {
			v, err := rd.ReadReply()
			if err != nil || v.IsError() {
				b.Fatalf("%v %v", err, v)
			}
		}
	}
}

func BenchmarkTypeCommands(b *testing.B) {
	member := "element:__rand_int__"
	tests := []struct {
		name  string
		setup [][]string
		args  []string
	}{
		{"SADD existing", nil, []string{"SADD", "myset", member}},
		{"HSET same", nil, []string{"HSET", "myhash", member, member}},
		{"ZADD same", nil, []string{"ZADD", "myzset", "0", member}},
		{"LPUSH", nil, []string{"LPUSH", "mylist", member}},
		{"LRANGE_100", [][]string{{"RPUSH", "l", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j",
			"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j",
			"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j",
			"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}}, []string{"LRANGE", "l", "0", "99"}},
		{"XADD", nil, []string{"XADD", "s", "*", "myfield", "myvalue"}},
		{"ZSCORE", [][]string{{"ZADD", "z", "1.5", "m"}}, []string{"ZSCORE", "z", "m"}},
		{"HGET", [][]string{{"HSET", "h", "f", "v"}}, []string{"HGET", "h", "f"}},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) { benchCommand(b, tt.setup, tt.args...) })
	}
}
