package server

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestGoRedisPauseSlowlogWait: go-redis v9's ClientPause (an ALL pause)
// holds a SET back until the pause ends, never failing it; its SlowLogGet
// parses our entries; its Wait gets 0 replicas.
func TestGoRedisPauseSlowlogWait(t *testing.T) {
	addr := StartTest(t, DefaultConfig())
	for _, proto := range []int{3, 2} {
		t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: proto, MaxRetries: -1, PoolSize: 2, ReadTimeout: 10 * time.Second})
			defer rdb.Close()
			if err := rdb.ClientPause(ctx, 50*time.Millisecond).Err(); err != nil {
				t.Fatal(err)
			}
			if err := rdb.Set(ctx, "paused", "v", 0).Err(); err != nil {
				t.Fatalf("SET during a pause failed: %v", err)
			}
			if err := rdb.ClientUnpause(ctx).Err(); err != nil {
				t.Fatal(err)
			}

			if err := rdb.ConfigSet(ctx, "slowlog-log-slower-than", "0").Err(); err != nil {
				t.Fatal(err)
			}
			rdb.Do(ctx, "SLOWLOG", "RESET")
			if err := rdb.Get(ctx, "paused").Err(); err != nil {
				t.Fatal(err)
			}
			logs, err := rdb.SlowLogGet(ctx, -1).Result()
			if err != nil {
				t.Fatalf("SLOWLOG GET: %v", err)
			}
			if len(logs) == 0 || !slices.Equal(logs[0].Args, []string{"get", "paused"}) || logs[0].ClientAddr == "" || logs[0].Time.IsZero() {
				t.Errorf("SLOWLOG GET: %+v", logs)
			}
			if err := rdb.ConfigSet(ctx, "slowlog-log-slower-than", "10000").Err(); err != nil {
				t.Fatal(err)
			}

			if n, err := rdb.Wait(ctx, 0, 0).Result(); err != nil || n != 0 {
				t.Errorf("WAIT 0 0: %d %v", n, err)
			}
		})
	}
}
