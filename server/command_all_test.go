package server

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/server/resp"
	"github.com/redis/go-redis/v9"
)

// Bare COMMAND is every command's COMMAND INFO entry, and bare COMMAND
// DOCS every command's COMMAND DOCS entry, in RESP2 and RESP3.
func TestCommandBare(t *testing.T) {
	addr := StartTest(t, DefaultConfig())
	for _, proto := range []string{"2", "3"} {
		t.Run("resp"+proto, func(t *testing.T) {
			d := dialDiff(t, "tcp", addr)
			raw := func(v resp.Value) string { return v.String() }
			if _, err := d.do([]string{"HELLO", proto}, raw); err != nil {
				t.Fatal(err)
			}
			var all, docs resp.Value
			count := 0
			get := func(args []string, into *resp.Value) {
				if _, err := d.do(args, func(v resp.Value) string { *into = cloneValue(v); return "" }); err != nil {
					t.Fatal(err)
				}
			}
			var n resp.Value
			get([]string{"COMMAND", "COUNT"}, &n)
			count = int(n.Int)
			get([]string{"COMMAND"}, &all)
			if all.Type != resp.Array || len(all.Elems) != count {
				t.Fatalf("COMMAND: %v with %d elements, want an array of COMMAND COUNT = %d", all.Type, len(all.Elems), count)
			}
			for _, e := range all.Elems {
				name := string(e.Elems[0].Str)
				var info resp.Value
				get([]string{"COMMAND", "INFO", name}, &info)
				if got, want := e.String(), info.Elems[0].String(); got != want {
					t.Errorf("COMMAND's %s entry:\n got %s\nwant %s (COMMAND INFO)", name, got, want)
				}
			}
			get([]string{"COMMAND", "DOCS"}, &docs)
			wantType := resp.Map
			if proto == "2" {
				wantType = resp.Array
				count *= 2
			} else {
				count *= 2 // a map's Elems hold keys and values
			}
			if docs.Type != wantType || len(docs.Elems) != count {
				t.Fatalf("COMMAND DOCS: %v with %d elements, want %v of %d", docs.Type, len(docs.Elems), wantType, count)
			}
			for i := 0; i < len(docs.Elems); i += 2 {
				name := string(docs.Elems[i].Str)
				var one resp.Value
				get([]string{"COMMAND", "DOCS", name}, &one)
				if got, want := docs.Elems[i+1].String(), one.Elems[1].String(); got != want {
					t.Errorf("COMMAND DOCS's %s entry:\n got %s\nwant %s (COMMAND DOCS %s)", name, got, want, name)
				}
			}
		})
	}
}

// replyShape renders v's types only: aggregates with their elements'
// shapes, sorted (Redis lists subcommands in hash order), a map's with its
// keys; strings and numbers as their type. Two servers whose command sets
// and texts differ still agree on it. COMMAND DOCS's "history" is left
// out: we do not carry Redis's change history of each command.
func replyShape(v resp.Value) string {
	switch v.Type {
	case resp.Map:
		var kv []string
		for i := 0; i+1 < len(v.Elems); i += 2 {
			if string(v.Elems[i].Str) == "history" {
				continue
			}
			kv = append(kv, string(v.Elems[i].Str)+"="+replyShape(v.Elems[i+1]))
		}
		sort.Strings(kv)
		return "%{" + strings.Join(kv, " ") + "}"
	case resp.Array, resp.Set, resp.Push:
		var es []string
		for _, e := range v.Elems {
			es = append(es, replyShape(e))
		}
		sort.Strings(es)
		return fmt.Sprintf("%c[%s]", v.Type, strings.Join(es, " "))
	}
	return string(rune(v.Type))
}

// COMMAND's and COMMAND DOCS's entries have redis-server's shape: the
// same fields of the same types (texts and the command sets differ).
func TestCommandShapeVsRedis(t *testing.T) {
	sock := startRedisPeer(t)
	addr := StartTest(t, DefaultConfig())
	for _, proto := range []string{"2", "3"} {
		t.Run("resp"+proto, func(t *testing.T) {
			ours, theirs := dialDiff(t, "tcp", addr), dialDiff(t, "unix", sock)
			for _, d := range []*diffConn{ours, theirs} {
				if _, err := d.do([]string{"HELLO", proto}, replyShape); err != nil {
					t.Fatal(err)
				}
			}
			for _, args := range [][]string{
				{"COMMAND", "INFO", "get"}, {"COMMAND", "INFO", "lpush"}, {"COMMAND", "INFO", "config"},
				{"COMMAND", "DOCS", "get"}, {"COMMAND", "DOCS", "echo"}, {"COMMAND", "DOCS", "command|info"},
				{"COMMAND", "DOCS", "lpush"}, {"COMMAND", "DOCS", "nosuch"},
			} {
				if proto == "2" && args[1] == "DOCS" {
					continue // RESP2 flattens the maps: compared in RESP3
				}
				got, err := ours.do(args, replyShape)
				if err != nil {
					t.Fatal(err)
				}
				want, err := theirs.do(args, replyShape)
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Errorf("%v:\n ours         %s\n redis-server %s", args, got, want)
				}
			}
			// The whole replies: same type, and every COMMAND entry has
			// the shape of redis-server's entry for GET.
			for _, args := range [][]string{{"COMMAND"}, {"COMMAND", "DOCS"}} {
				top := func(v resp.Value) string { return string(rune(v.Type)) }
				got, _ := ours.do(args, top)
				want, _ := theirs.do(args, top)
				if got != want {
					t.Errorf("%v: reply type %s, redis-server %s", args, got, want)
				}
			}
		})
	}
}

// go-redis's Command (what its cluster client and ioredis-like clients
// call) parses our bare COMMAND reply.
func TestGoRedisCommand(t *testing.T) {
	addr := StartTest(t, DefaultConfig())
	for _, proto := range []int{2, 3} {
		rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: proto, MaxRetries: -1})
		cmds, err := rdb.Command(context.Background()).Result()
		rdb.Close()
		if err != nil {
			t.Fatalf("RESP%d: Command: %v", proto, err)
		}
		get := cmds["get"]
		if get == nil || get.Arity != 2 || !get.ReadOnly || get.FirstKeyPos != 1 {
			t.Fatalf("RESP%d: get is %+v", proto, get)
		}
		if len(cmds) != len(table().list) {
			t.Errorf("RESP%d: %d commands, want %d", proto, len(cmds), len(table().list))
		}
	}
}

// cloneValue copies v out of the reader's buffers.
func cloneValue(v resp.Value) resp.Value {
	v.Str = append([]byte(nil), v.Str...)
	if v.Elems != nil {
		es := make([]resp.Value, len(v.Elems))
		for i, e := range v.Elems {
			es[i] = cloneValue(e)
		}
		v.Elems = es
	}
	return v
}
