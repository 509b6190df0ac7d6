package server

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestGoRedisTransactions: go-redis v9's TxPipelined and its optimistic
// locking loop (Watch, retried on redis.TxFailedErr) against our server,
// in RESP2 and RESP3. Concurrent increments through WATCH/MULTI/EXEC must
// lose none.
func TestGoRedisTransactions(t *testing.T) {
	addr := StartTest(t, DefaultConfig())
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("resp%d", proto), func(t *testing.T) {
			ctx := context.Background()
			rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: proto, MaxRetries: -1, PoolSize: 8})
			defer rdb.Close()
			if err := rdb.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			var incr *redis.IntCmd
			var get *redis.StringCmd
			cmds, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Set(ctx, "a", "1", 0)
				incr = p.Incr(ctx, "a")
				get = p.Get(ctx, "a")
				p.HSet(ctx, "h", "f", "v")
				return nil
			})
			if err != nil || len(cmds) != 4 || incr.Val() != 2 || get.Val() != "2" {
				t.Fatalf("TxPipelined: %v, %d cmds, incr %d, get %q", err, len(cmds), incr.Val(), get.Val())
			}
			// A run-time error inside EXEC is that command's error only.
			_, err = rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.LPush(ctx, "a", "x")
				p.Incr(ctx, "a")
				return nil
			})
			if err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") || rdb.Get(ctx, "a").Val() != "3" {
				t.Fatalf("run-time error in EXEC: err %v, a = %q (want WRONGTYPE and 3)", err, rdb.Get(ctx, "a").Val())
			}

			const workers, each = 4, 25
			increment := func() error {
				for {
					err := rdb.Watch(ctx, func(tx *redis.Tx) error {
						n, err := tx.Get(ctx, "counter").Int()
						if err != nil && err != redis.Nil {
							return err
						}
						_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
							p.Set(ctx, "counter", strconv.Itoa(n+1), 0)
							return nil
						})
						return err
					}, "counter")
					if err != redis.TxFailedErr {
						return err
					}
				}
			}
			var wg sync.WaitGroup
			errs := make(chan error, workers*each)
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < each; i++ {
						errs <- increment()
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			if n, err := rdb.Get(ctx, "counter").Int(); err != nil || n != workers*each {
				t.Fatalf("counter = %d, %v; want %d (a lost update means WATCH missed a write)", n, err, workers*each)
			}

			// A conflicting write between WATCH and EXEC fails the
			// transaction with TxFailedErr.
			err = rdb.Watch(ctx, func(tx *redis.Tx) error {
				if err := rdb.Set(ctx, "counter", "0", 0).Err(); err != nil {
					return err
				}
				_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.Incr(ctx, "counter")
					return nil
				})
				return err
			}, "counter")
			if err != redis.TxFailedErr {
				t.Fatalf("Watch with a conflicting write: %v, want redis.TxFailedErr", err)
			}
		})
	}
}

// TestWatchExpiredKey: a watched key whose TTL passes between WATCH and
// EXEC aborts the transaction even though nothing deleted it yet (Redis's
// isWatchedKeyExpired), and one that expired before WATCH does not.
func TestWatchExpiredKey(t *testing.T) {
	loopPaths(t, func(t *testing.T) {
		_, addr := startServer(t, DefaultConfig())
		tc := dialTest(t, addr)
		send := tc.do
		const nullArray = "(nil)"
		send("SET", "k", "v", "PX", "50")
		send("SET", "gone", "v", "PX", "1")
		time.Sleep(60 * time.Millisecond) // both deadlines pass; nothing touches the keys
		send("SET", "k2", "v", "PX", "50")
		if got := send("WATCH", "k2", "gone"); got != `"OK"` {
			t.Fatalf("WATCH: %s", got)
		}
		time.Sleep(60 * time.Millisecond)
		send("MULTI")
		send("PING")
		if got := send("EXEC"); got != nullArray {
			t.Fatalf("EXEC after a watched key expired: %s, want a null reply", got)
		}
		send("WATCH", "gone")
		send("MULTI")
		send("PING")
		if got := send("EXEC"); got == nullArray {
			t.Fatalf("EXEC with a key already expired at WATCH: %s, want the transaction to run", got)
		}
	})
}
