package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dpulab/dpulab/server/resp"
)

// blockedCount is the number of clients CLIENT LIST shows blocked.
func blockedCount(tc *testConn) int {
	n := 0
	for _, f := range strings.Fields(tc.do("CLIENT", "LIST")) {
		if flags, ok := strings.CutPrefix(f, "flags="); ok && strings.Contains(flags, "b") {
			n++
		}
	}
	return n
}

// waitBlocked waits until n clients are blocked.
func waitBlocked(t *testing.T, admin *testConn, n int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d blocked clients", n), func() bool { return blockedCount(admin) == n })
}

// TestBlockedAcrossPaths wakes blocked clients of the event loop and of
// the goroutine path with pushes from either, in arrival order, and lets
// them time out (a timer's goroutine answers): each gets its reply, then
// the command it sent while it waited runs.
func TestBlockedAcrossPaths(t *testing.T) {
	srv, addr := startServer(t, DefaultConfig())
	admin := dialTest(t, addr)
	for _, waiter := range []string{"loop", "pipe"} {
		for _, pusher := range []string{"loop", "pipe"} {
			t.Run(waiter+"-woken-by-"+pusher, func(t *testing.T) {
				key := "q-" + waiter + pusher
				a := dialKind(t, srv, addr, waiter)
				b := dialKind(t, srv, addr, waiter)
				p := dialKind(t, srv, addr, pusher)
				a.send("BLPOP", key, "0")
				waitBlocked(t, admin, 1)
				b.send("BLPOP", key, "0")
				waitBlocked(t, admin, 2)
				a.send("ECHO", "a-after")
				b.send("ECHO", "b-after")
				p.must("(integer) 2", "RPUSH", key, "first", "second")
				for _, w := range []struct {
					c    *testConn
					want string
				}{{a, "first"}, {b, "second"}} {
					if got := w.c.read(); got != fmt.Sprintf(`*["%s" "%s"]`, key, w.want) {
						t.Errorf("woken client: %s, want %s", got, w.want)
					}
				}
				if got := a.read(); got != `"a-after"` {
					t.Errorf("command queued behind BLPOP: %s", got)
				}
				if got := b.read(); got != `"b-after"` {
					t.Errorf("command queued behind BLPOP: %s", got)
				}
				admin.must("(integer) 0", "EXISTS", key)
			})
		}
		t.Run(waiter+"-timeout", func(t *testing.T) {
			a := dialKind(t, srv, addr, waiter)
			a.send("BRPOP", "never", "0.01")
			a.send("PING")
			if got := a.read(); got != "(nil)" {
				t.Errorf("timed out BRPOP: %s", got)
			}
			a.must(`"PONG"`, "PING")
			if got := a.read(); got != `"PONG"` {
				t.Errorf("command queued behind BRPOP: %s", got)
			}
		})
	}
}

// TestBlockedClientLeaves: a client that disconnects while blocked is
// forgotten: the next push stays in the list, and the next waiter is
// served.
func TestBlockedClientLeaves(t *testing.T) {
	srv, addr := startServer(t, DefaultConfig())
	admin := dialTest(t, addr)
	for _, kind := range []string{"loop", "pipe"} {
		t.Run(kind, func(t *testing.T) {
			key := "gone-" + kind
			a := dialKind(t, srv, addr, kind)
			a.send("BLPOP", key, "0")
			b := dialKind(t, srv, addr, kind)
			waitBlocked(t, admin, 1)
			b.send("BLPOP", key, "other", "0")
			waitBlocked(t, admin, 2)
			a.conn.Close()
			waitBlocked(t, admin, 1)
			admin.must("(integer) 1", "RPUSH", key, "v")
			if got := b.read(); got != fmt.Sprintf(`*["%s" "v"]`, key) {
				t.Errorf("second waiter: %s", got)
			}
			b.conn.Close()
			waitBlocked(t, admin, 0)
			admin.must("(integer) 1", "RPUSH", key, "kept")
			admin.must(`*["kept"]`, "LRANGE", key, "0", "-1")
		})
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.blk.blocked != 0 {
		t.Errorf("blocked count %d after every blocked client left", srv.blk.blocked)
	}
	for i, d := range srv.dbs {
		if d.blocking != nil {
			t.Errorf("db %d keeps waiters %v after every blocked client left", i, d.blocking.clients)
		}
	}
}

// TestGoRedisBlocking drives BLPOP, BLMOVE, BZPOPMIN and XREAD BLOCK
// through go-redis v9 while another go-redis client writes.
func TestGoRedisBlocking(t *testing.T) {
	addr := StartTest(t, DefaultConfig())
	for _, proto := range []int{3, 2} {
		t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			opts := &redis.Options{Addr: addr, Protocol: proto, MaxRetries: -1}
			waiter, writer := redis.NewClient(opts), redis.NewClient(opts)
			defer waiter.Close()
			defer writer.Close()
			admin := dialTest(t, addr)
			writer.FlushAll(ctx)

			type result struct {
				v   any
				err error
			}
			run := func(f func() (any, error)) chan result {
				ch := make(chan result, 1)
				go func() { v, err := f(); ch <- result{v, err} }()
				waitBlocked(t, admin, 1)
				return ch
			}
			get := func(ch chan result) any {
				t.Helper()
				select {
				case r := <-ch:
					if r.err != nil {
						t.Fatal(r.err)
					}
					return r.v
				case <-ctx.Done():
					t.Fatal("blocked command never answered")
				}
				return nil
			}

			ch := run(func() (any, error) { return waiter.BLPop(ctx, 0, "l1", "l2").Result() })
			writer.RPush(ctx, "l2", "x")
			if v := get(ch).([]string); len(v) != 2 || v[0] != "l2" || v[1] != "x" {
				t.Errorf("BLPOP = %v", v)
			}
			ch = run(func() (any, error) { return waiter.BLMove(ctx, "src", "dst", "LEFT", "RIGHT", 0).Result() })
			writer.RPush(ctx, "src", "m")
			if v := get(ch).(string); v != "m" || writer.LIndex(ctx, "dst", 0).Val() != "m" {
				t.Errorf("BLMOVE = %q", v)
			}
			ch = run(func() (any, error) { return waiter.BZPopMin(ctx, 0, "z").Result() })
			writer.ZAdd(ctx, "z", redis.Z{Score: 2.5, Member: "a"})
			if v := get(ch).(*redis.ZWithKey); v.Key != "z" || v.Member != "a" || v.Score != 2.5 {
				t.Errorf("BZPOPMIN = %+v", v)
			}
			writer.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: "1-1", Values: []string{"f", "v"}})
			ch = run(func() (any, error) {
				return waiter.XRead(ctx, &redis.XReadArgs{Streams: []string{"s", "$"}, Block: 0}).Result()
			})
			writer.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: "2-1", Values: []string{"g", "w"}})
			v := get(ch).([]redis.XStream)
			if len(v) != 1 || v[0].Stream != "s" || len(v[0].Messages) != 1 || v[0].Messages[0].ID != "2-1" || v[0].Messages[0].Values["g"] != "w" {
				t.Errorf("XREAD BLOCK = %+v", v)
			}
			if _, err := waiter.BLPop(ctx, time.Second, "none").Result(); err != redis.Nil {
				t.Errorf("BLPOP timeout: err %v, want redis.Nil", err)
			}
		})
	}
}

// TestIdleTimeoutSparesWaiters: with `timeout` set, an idle client is
// closed but a subscriber and a blocked client idle as long are not, as in
// Redis; INFO counts the blocked client and the channel.
func TestIdleTimeoutSparesWaiters(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Timeout = time.Second
	srv, addr := startServer(t, cfg)
	for _, kind := range []string{"loop", "pipe"} {
		t.Run(kind, func(t *testing.T) {
			sub := dialKind(t, srv, addr, kind)
			sub.must(`*["subscribe" "idle" (integer) 1]`, "SUBSCRIBE", "idle")
			waiter := dialKind(t, srv, addr, kind)
			waiter.send("BLPOP", "idle-list", "0")
			idle := dialKind(t, srv, addr, kind)
			idle.must(`"PONG"`, "PING")
			admin := dialTest(t, addr)
			waitBlocked(t, admin, 1)
			info := admin.do("INFO", "clients")
			for _, want := range []string{`blocked_clients:1\r`, `clients_in_timeout_table:0\r`} {
				if !strings.Contains(info, want) {
					t.Errorf("INFO clients lacks %q:\n%s", want, info)
				}
			}
			if info := admin.do("INFO", "stats"); !strings.Contains(info, `pubsub_channels:1\r`) {
				t.Errorf("INFO stats lacks pubsub_channels:1:\n%s", info)
			}
			// Wait for the idle client's end (the admin's too: it idles
			// meanwhile), then check on the others with a new one.
			idle.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
			if _, err := idle.r.ReadReply(); err == nil {
				t.Fatal("the idle client got a reply instead of being closed")
			}
			admin = dialTest(t, addr)
			admin.must("(integer) 1", "PUBLISH", "idle", "still here")
			if got := sub.read(); got != `*["message" "idle" "still here"]` {
				t.Errorf("subscriber: %s", got)
			}
			admin.must("(integer) 1", "RPUSH", "idle-list", "v")
			if got := waiter.read(); got != `*["idle-list" "v"]` {
				t.Errorf("blocked client: %s", got)
			}
		})
	}
}

// TestBlockingConservation: producers on both paths push distinct values
// to a few lists while consumers on both paths BLPOP/BRPOP/BLMOVE them;
// every value comes out exactly once, none is lost in a wake-up or
// served twice.
func TestBlockingConservation(t *testing.T) {
	srv, addr := startServer(t, DefaultConfig())
	const producers, consumers, per = 4, 6, 300
	keys := []string{"c1", "c2", "c3"}
	total := producers * per
	got := make(chan string, total)
	errs := make(chan error, consumers+producers)
	done := make(chan struct{})
	for i := 0; i < consumers; i++ {
		kind := []string{"loop", "pipe"}[i%2]
		c := dialKind(t, srv, addr, kind)
		go func(i int, c *testConn) {
			for {
				var args []string
				switch i % 3 {
				case 0:
					args = []string{"BLPOP", keys[0], keys[1], keys[2], "0"}
				case 1:
					args = []string{"BRPOP", keys[2], keys[0], "0"}
				default:
					// Through a private list, popped at once.
					args = []string{"BLMOVE", keys[1], fmt.Sprint("own", i), "LEFT", "RIGHT", "0"}
				}
				if _, err := c.conn.Write(respCommand(args...)); err != nil {
					select {
					case <-done:
					default:
						errs <- err
					}
					return
				}
				v, err := c.r.ReadReply()
				if err != nil {
					select {
					case <-done:
					default:
						errs <- err
					}
					return
				}
				switch {
				case len(v.Elems) == 2:
					got <- string(v.Elems[1].Str)
				case v.Type == '$' && !v.Null:
					got <- string(v.Str)
				default:
					errs <- fmt.Errorf("%v: %s", args, v.String())
					return
				}
			}
		}(i, c)
	}
	for p := 0; p < producers; p++ {
		c := dialKind(t, srv, addr, []string{"pipe", "loop"}[p%2])
		go func(p int, c *testConn) {
			for j := 0; j < per; j++ {
				k := keys[(p+j)%len(keys)]
				if _, err := c.conn.Write(respCommand("RPUSH", k, fmt.Sprintf("p%d-%d", p, j))); err != nil {
					errs <- err
					return
				}
				if _, err := c.r.ReadReply(); err != nil {
					errs <- err
					return
				}
			}
		}(p, c)
	}
	seen := map[string]bool{}
	deadline := time.After(60 * time.Second)
	for len(seen) < total {
		select {
		case v := <-got:
			if seen[v] {
				t.Fatalf("%s served twice", v)
			}
			seen[v] = true
		case err := <-errs:
			t.Fatal(err)
		case <-deadline:
			t.Fatalf("%d of %d values came out", len(seen), total)
		}
	}
	close(done)
	admin := dialTest(t, addr)
	for _, k := range keys {
		admin.must("(integer) 0", "LLEN", k)
	}
}

func respCommand(args ...string) []byte { return resp.AppendCommand(nil, args...) }
