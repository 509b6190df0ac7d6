package server

import (
	"context"
	"errors"
	"math"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestGoRedisTypes drives the data-type commands through go-redis v9 over
// RESP3 (its default: HELLO 3, CLIENT SETINFO on every connection) and
// RESP2, checking the typed results its parsers build from our replies.
func TestGoRedisTypes(t *testing.T) {
	addr := StartTest(t, DefaultConfig())
	for _, proto := range []int{3, 2} {
		t.Run("resp"+string(rune('0'+proto)), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: proto, MaxRetries: -1})
			defer rdb.Close()
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(rdb.FlushAll(ctx).Err())

			// Lists.
			must(rdb.RPush(ctx, "l", "a", "b", "c").Err())
			must(rdb.LPush(ctx, "l", "z").Err())
			if got := rdb.LRange(ctx, "l", 0, -1).Val(); !slices.Equal(got, []string{"z", "a", "b", "c"}) {
				t.Errorf("LRANGE = %v", got)
			}
			if got := rdb.LPopCount(ctx, "l", 2).Val(); !slices.Equal(got, []string{"z", "a"}) {
				t.Errorf("LPOP 2 = %v", got)
			}
			if _, err := rdb.LPop(ctx, "nolist").Result(); !errors.Is(err, redis.Nil) {
				t.Errorf("LPOP missing: err %v, want redis.Nil", err)
			}
			if n := rdb.LInsertBefore(ctx, "l", "c", "bb").Val(); n != 3 {
				t.Errorf("LINSERT = %d, want 3", n)
			}

			// Hashes: HGETALL is a map in RESP3, a flat array in RESP2.
			must(rdb.HSet(ctx, "h", "f1", "v1", "f2", "v2").Err())
			if got := rdb.HGetAll(ctx, "h").Val(); len(got) != 2 || got["f1"] != "v1" || got["f2"] != "v2" {
				t.Errorf("HGETALL = %v", got)
			}
			if f := rdb.HIncrByFloat(ctx, "h", "n", 0.1).Val(); f != 0.1 {
				t.Errorf("HINCRBYFLOAT = %v", f)
			}
			if got := rdb.HMGet(ctx, "h", "f1", "nope").Val(); len(got) != 2 || got[0] != "v1" || got[1] != nil {
				t.Errorf("HMGET = %#v", got)
			}

			// Sets: SMEMBERS is a RESP3 set.
			must(rdb.SAdd(ctx, "s", "x", "y", "z").Err())
			got := rdb.SMembers(ctx, "s").Val()
			sort.Strings(got)
			if !slices.Equal(got, []string{"x", "y", "z"}) {
				t.Errorf("SMEMBERS = %v", got)
			}
			if got := rdb.SMIsMember(ctx, "s", "x", "q").Val(); !slices.Equal(got, []bool{true, false}) {
				t.Errorf("SMISMEMBER = %v", got)
			}
			if got := rdb.SPopN(ctx, "s", 5).Val(); len(got) != 3 {
				t.Errorf("SPOP 5 = %v", got)
			}
			if n := rdb.Exists(ctx, "s").Val(); n != 0 {
				t.Error("set still exists after popping every member")
			}

			// Sorted sets: scores are RESP3 doubles.
			must(rdb.ZAdd(ctx, "z", redis.Z{Score: 1.5, Member: "a"}, redis.Z{Score: math.Inf(1), Member: "top"}, redis.Z{Score: -2, Member: "b"}).Err())
			if s := rdb.ZScore(ctx, "z", "a").Val(); s != 1.5 {
				t.Errorf("ZSCORE = %v", s)
			}
			if s := rdb.ZIncrBy(ctx, "z", 1, "a").Val(); s != 2.5 {
				t.Errorf("ZINCRBY = %v", s)
			}
			zs := rdb.ZRangeWithScores(ctx, "z", 0, -1).Val()
			if len(zs) != 3 || zs[0].Member != "b" || zs[0].Score != -2 || zs[2].Member != "top" || !math.IsInf(zs[2].Score, 1) {
				t.Errorf("ZRANGE WITHSCORES = %v", zs)
			}
			byScore := rdb.ZRangeArgs(ctx, redis.ZRangeArgs{Key: "z", Start: "(-2", Stop: "+inf", ByScore: true, Rev: false}).Val()
			if !slices.Equal(byScore, []string{"a", "top"}) {
				t.Errorf("ZRANGE BYSCORE = %v", byScore)
			}
			if r := rdb.ZRank(ctx, "z", "top").Val(); r != 2 {
				t.Errorf("ZRANK = %d", r)
			}
			if p := rdb.ZPopMin(ctx, "z").Val(); len(p) != 1 || p[0].Member != "b" {
				t.Errorf("ZPOPMIN = %v", p)
			}
			if p := rdb.ZPopMax(ctx, "z", 5).Val(); len(p) != 2 || p[0].Member != "top" || p[1].Score != 2.5 {
				t.Errorf("ZPOPMAX 5 = %v", p)
			}

			// Streams.
			id, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: "x", Values: []string{"f", "v"}}).Result()
			must(err)
			must(rdb.XAdd(ctx, &redis.XAddArgs{Stream: "x", ID: "*", MaxLen: 10, Values: map[string]any{"g": "w"}}).Err())
			msgs := rdb.XRange(ctx, "x", "-", "+").Val()
			if len(msgs) != 2 || msgs[0].ID != id || msgs[0].Values["f"] != "v" || msgs[1].Values["g"] != "w" {
				t.Errorf("XRANGE = %v", msgs)
			}
			if n := rdb.XLen(ctx, "x").Val(); n != 2 {
				t.Errorf("XLEN = %d", n)
			}

			// Errors come back as errors, and the connection survives them.
			if err := rdb.HSet(ctx, "l", "f", "v").Err(); err == nil || err.Error() != errWrongType {
				t.Errorf("HSET on a list: err %v, want WRONGTYPE", err)
			}
			if err := rdb.ZAdd(ctx, "z", redis.Z{Score: math.NaN(), Member: "n"}).Err(); err == nil {
				t.Error("ZADD nan succeeded")
			}

			// A pipeline of every type in one round trip.
			cmds, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				p.LLen(ctx, "l")
				p.HLen(ctx, "h")
				p.SCard(ctx, "nope")
				p.ZCard(ctx, "z")
				p.XLen(ctx, "x")
				return nil
			})
			must(err)
			var lens []int64
			for _, c := range cmds {
				lens = append(lens, c.(*redis.IntCmd).Val())
			}
			if !slices.Equal(lens, []int64{3, 3, 0, 0, 2}) {
				t.Errorf("pipelined lengths = %v, want [3 3 0 0 2]", lens)
			}
		})
	}
}
