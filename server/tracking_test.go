package server

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/server/resp"
	"github.com/redis/go-redis/v9"
)

// TestGoRedisClientSideCaching: go-redis's client-side cache (RESP3,
// CLIENT TRACKING, invalidate pushes) serves a value from its cache and
// drops it when another client changes the key, against our server and,
// when installed, redis-server.
func TestGoRedisClientSideCaching(t *testing.T) {
	targets := map[string]struct{ network, addr string }{
		"ours": {"tcp", StartTest(t, DefaultConfig())},
	}
	if _, err := exec.LookPath("redis-server"); err == nil {
		targets["redis-server"] = struct{ network, addr string }{"unix", startRedisPeer(t)}
	}
	for name, tg := range targets {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			opt := &redis.Options{Network: tg.network, Addr: tg.addr, Protocol: 3, MaxRetries: -1,
				ClientSideCacheConfig: &redis.ClientSideCacheConfig{MaxEntries: 100}}
			rdb := redis.NewClient(opt)
			defer rdb.Close()
			other := redis.NewClient(&redis.Options{Network: tg.network, Addr: tg.addr, Protocol: 3, MaxRetries: -1})
			defer other.Close()
			key := "csc:" + name
			if err := other.Set(ctx, key, "v1", 0).Err(); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 3; i++ {
				if v, err := rdb.Get(ctx, key).Result(); err != nil || v != "v1" {
					t.Fatalf("GET = %q, %v; want v1", v, err)
				}
			}
			// The cache is server-assisted: some connection tracks.
			if list := other.ClientList(ctx).Val(); !strings.Contains(list, " flags=t") {
				t.Fatalf("no tracking client in CLIENT LIST:\n%s", list)
			}
			if err := other.Set(ctx, key, "v2", 0).Err(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(5 * time.Second)
			for {
				v, err := rdb.Get(ctx, key).Result()
				if err != nil {
					t.Fatal(err)
				}
				if v == "v2" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("GET still %q 5s after another client's SET: no invalidation", v)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

// TestTrackingClientFlags: CLIENT LIST's t, R and B flags and redir, and
// the tracking-redir-broken push when the redirect client has gone.
func TestTrackingClientFlags(t *testing.T) {
	c, addr := newTestServer(t)
	c.must(`"OK"`, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a")
	if info := c.do("CLIENT", "INFO"); !strings.Contains(info, " flags=tB ") || !strings.Contains(info, " redir=0 ") {
		t.Errorf("CLIENT INFO with BCAST tracking: %s", info)
	}
	c.must(`"OK"`, "CLIENT", "TRACKING", "off")
	if info := c.do("CLIENT", "INFO"); !strings.Contains(info, " flags=N ") || !strings.Contains(info, " redir=-1 ") {
		t.Errorf("CLIENT INFO without tracking: %s", info)
	}

	r := dialTest(t, addr)
	rid := strings.TrimPrefix(r.do("CLIENT", "ID"), "(integer) ")
	c.must(`%["server" "redis" "version" "7.0.15" "proto" (integer) 3 "id" (integer) 1 "mode" "standalone" "role" "master" "modules" *[]]`, "HELLO", "3")
	c.must(`"OK"`, "CLIENT", "TRACKING", "on", "REDIRECT", rid)
	if info := c.do("CLIENT", "INFO"); !strings.Contains(info, " flags=t ") || !strings.Contains(info, " redir="+rid+" ") {
		t.Errorf("CLIENT INFO with REDIRECT %s: %s", rid, info)
	}
	c.do("GET", "k")
	r.conn.Close()
	waitFor(t, "the redirect client gone", func() bool { return !strings.Contains(c.do("CLIENT", "LIST"), "id="+rid+" ") })
	o := dialTest(t, addr)
	o.must(`"OK"`, "SET", "k", "v")
	if got := c.read(); got != fmt.Sprintf(">[\"tracking-redir-broken\" (integer) %s]", rid) {
		t.Errorf("after the redirect client left: %s", got)
	}
	if info := c.do("CLIENT", "INFO"); !strings.Contains(info, " flags=tR ") {
		t.Errorf("CLIENT INFO with a broken redirect: %s", info)
	}
	c.must(`%["flags" ~["on" "broken_redirect"] "redirect" (integer) `+rid+` "prefixes" *[]]`, "CLIENT", "TRACKINGINFO")
}

// TestTrackingTableMaxKeys: past tracking-table-max-keys the server
// forgets keys, invalidating them first, before the next command.
func TestTrackingTableMaxKeys(t *testing.T) {
	c, _ := newTestServer(t)
	c.do("HELLO", "3")
	c.must(`"OK"`, "CONFIG", "SET", "tracking-table-max-keys", "10")
	c.must(`"OK"`, "CLIENT", "TRACKING", "on")
	// The bound is kept before each command, so pushes come as the
	// reads go: 50 nils, 40 pushes (the last one after PING's reply) and
	// PONG, in some order.
	for i := 0; i < 50; i++ {
		c.conn.Write(resp.AppendCommand(nil, "GET", fmt.Sprint("key", i)))
	}
	c.conn.Write(resp.AppendCommand(nil, "PING"))
	count := map[string]int{}
	for i := 0; i < 91; i++ {
		got := c.read()
		if strings.HasPrefix(got, `>["invalidate" *["key`) {
			got = "push"
		}
		count[got]++
	}
	if count["(nil)"] != 50 || count["push"] != 40 || count[`"PONG"`] != 1 {
		t.Errorf("replies: %v", count)
	}
	c.must(`"PONG"`, "PING") // nothing more came before it
	info := c.do("INFO", "all")
	for _, want := range []string{"tracking_clients:1", "tracking_total_keys:10", "tracking_total_items:10", "tracking_total_prefixes:0"} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO lacks %s", want)
		}
	}
}

// TestTrackingExpiry: a key that expires (active expiry, no command
// touching it) is invalidated.
func TestTrackingExpiry(t *testing.T) {
	c, addr := newTestServer(t)
	c.do("HELLO", "3")
	c.must(`"OK"`, "CLIENT", "TRACKING", "on")
	o := dialTest(t, addr)
	o.must(`"OK"`, "SET", "k", "v", "PX", "300")
	c.must(`"v"`, "GET", "k")
	if got := c.read(); got != `>["invalidate" *["k"]]` {
		t.Errorf("after expiry: %s", got)
	}
}
