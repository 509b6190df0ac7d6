package server

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestGoRedisIssue19 drives issue 19's commands through go-redis v9's
// typed API in both protocols: its parsers must accept our replies, and a
// SCAN iterator on a pool (each call may take another connection) must
// see every key.
func TestGoRedisIssue19(t *testing.T) {
	addr := StartTest(t, DefaultConfig())
	for _, proto := range []int{3, 2} {
		t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: proto, MaxRetries: -1, PoolSize: 4})
			defer rdb.Close()
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(rdb.FlushAll(ctx).Err())

			// Bitmaps.
			must(rdb.SetBit(ctx, "b", 7, 1).Err())
			if n := rdb.BitCount(ctx, "b", &redis.BitCount{Start: 0, End: -1}).Val(); n != 1 {
				t.Errorf("BITCOUNT = %d", n)
			}
			if got := rdb.BitField(ctx, "bf", "SET", "u8", 0, 200, "INCRBY", "u8", 0, 100, "GET", "u8", 0).Val(); !slices.Equal(got, []int64{0, 44, 44}) {
				t.Errorf("BITFIELD = %v", got)
			}
			if p := rdb.BitPos(ctx, "b", 1).Val(); p != 7 {
				t.Errorf("BITPOS = %d", p)
			}

			// SCAN through the pool, and the container scans.
			for i := 0; i < 500; i++ {
				must(rdb.Set(ctx, fmt.Sprint("k", i), "v", 0).Err())
			}
			seen := map[string]bool{}
			it := rdb.Scan(ctx, 0, "k*", 7).Iterator()
			for it.Next(ctx) {
				seen[it.Val()] = true
			}
			must(it.Err())
			if len(seen) != 500 {
				t.Errorf("SCAN iterator saw %d of 500 keys", len(seen))
			}
			for i := 0; i < 300; i++ {
				must(rdb.SAdd(ctx, "s", fmt.Sprint("m", i)).Err())
				must(rdb.HSet(ctx, "h", fmt.Sprint("f", i), i).Err())
				must(rdb.ZAdd(ctx, "z", redis.Z{Score: float64(i), Member: fmt.Sprint("m", i)}).Err())
			}
			count := func(it *redis.ScanIterator, pairs bool) int {
				n := 0
				for it.Next(ctx) {
					n++
				}
				must(it.Err())
				if pairs {
					n /= 2
				}
				return n
			}
			if n := count(rdb.SScan(ctx, "s", 0, "", 10).Iterator(), false); n != 300 {
				t.Errorf("SSCAN saw %d of 300", n)
			}
			if n := count(rdb.HScan(ctx, "h", 0, "", 10).Iterator(), true); n != 300 {
				t.Errorf("HSCAN saw %d of 300", n)
			}
			if n := count(rdb.ZScan(ctx, "z", 0, "", 10).Iterator(), true); n != 300 {
				t.Errorf("ZSCAN saw %d of 300", n)
			}

			// Keys.
			if ok := rdb.Copy(ctx, "s", "s2", 0, false).Val(); ok != 1 {
				t.Errorf("COPY = %d", ok)
			}
			must(rdb.RPush(ctx, "nums", 3, 1, 2).Err())
			if got := rdb.SortRO(ctx, "nums", &redis.Sort{Order: "DESC"}).Val(); !slices.Equal(got, []string{"3", "2", "1"}) {
				t.Errorf("SORT_RO = %v", got)
			}
			if got := rdb.LPos(ctx, "nums", "2", redis.LPosArgs{}).Val(); got != 2 {
				t.Errorf("LPOS = %d", got)
			}
			if got := rdb.LMove(ctx, "nums", "nums", "LEFT", "RIGHT").Val(); got != "3" {
				t.Errorf("LMOVE = %q", got)
			}
			if key, vals, err := rdb.LMPop(ctx, "RIGHT", 2, "nosuch", "nums").Result(); err != nil || key != "nums" || !slices.Equal(vals, []string{"3", "2"}) {
				t.Errorf("LMPOP = %q %v %v", key, vals, err)
			}
			if got := rdb.ZMScore(ctx, "z", "m1", "nope").Val(); len(got) != 2 || got[0] != 1 || got[1] != 0 {
				t.Errorf("ZMSCORE = %v", got)
			}
			if got := rdb.ZInterWithScores(ctx, &redis.ZStore{Keys: []string{"z", "z"}, Aggregate: "MAX"}).Val(); len(got) != 300 || got[1].Score != 1 {
				t.Errorf("ZINTER WITHSCORES: %d members, second %v", len(got), got[1])
			}
			if key, zs, err := rdb.ZMPop(ctx, "min", 2, "z").Result(); err != nil || key != "z" || len(zs) != 2 || zs[1].Member != "m1" {
				t.Errorf("ZMPOP = %q %v %v", key, zs, err)
			}
			if got := rdb.HRandFieldWithValues(ctx, "h", 3).Val(); len(got) != 3 {
				t.Errorf("HRANDFIELD WITHVALUES = %v", got)
			}
			if got := rdb.SInterCard(ctx, 0, "s", "s2").Val(); got != 300 {
				t.Errorf("SINTERCARD = %d", got)
			}
			if got := rdb.LCS(ctx, &redis.LCSQuery{Key1: "lcs1", Key2: "lcs2"}).Val(); got == nil || got.MatchString != "" {
				t.Errorf("LCS of missing keys = %+v", got)
			}

			// Consumer groups.
			must(rdb.XGroupCreateMkStream(ctx, "st", "g", "0").Err())
			for i := 1; i <= 3; i++ {
				must(rdb.XAdd(ctx, &redis.XAddArgs{Stream: "st", ID: fmt.Sprintf("%d-1", i), Values: []string{"f", "v"}}).Err())
			}
			streams, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "alice", Streams: []string{"st", ">"}, Count: 2}).Result()
			if err != nil || len(streams) != 1 || len(streams[0].Messages) != 2 || streams[0].Messages[0].Values["f"] != "v" {
				t.Fatalf("XREADGROUP = %v %v", streams, err)
			}
			if p := rdb.XPending(ctx, "st", "g").Val(); p == nil || p.Count != 2 || p.Consumers["alice"] != 2 {
				t.Errorf("XPENDING = %+v", p)
			}
			ext := rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: "st", Group: "g", Start: "-", End: "+", Count: 10}).Val()
			if len(ext) != 2 || ext[0].Consumer != "alice" || ext[0].RetryCount != 1 {
				t.Errorf("XPENDING extended = %+v", ext)
			}
			if ids := rdb.XClaimJustID(ctx, &redis.XClaimArgs{Stream: "st", Group: "g", Consumer: "bob", Messages: []string{"1-1"}}).Val(); !slices.Equal(ids, []string{"1-1"}) {
				t.Errorf("XCLAIM JUSTID = %v", ids)
			}
			msgs, start, err := rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: "st", Group: "g", Consumer: "carol", Start: "0"}).Result()
			if err != nil || len(msgs) != 2 || start != "0-0" {
				t.Errorf("XAUTOCLAIM = %v %q %v", msgs, start, err)
			}
			if n := rdb.XAck(ctx, "st", "g", "1-1", "2-1").Val(); n != 2 {
				t.Errorf("XACK = %d", n)
			}
			groups := rdb.XInfoGroups(ctx, "st").Val()
			if len(groups) != 1 || groups[0].Name != "g" || groups[0].Pending != 0 || groups[0].LastDeliveredID != "2-1" || groups[0].Lag != 1 {
				t.Errorf("XINFO GROUPS = %+v", groups)
			}
			cons := rdb.XInfoConsumers(ctx, "st", "g").Val()
			names := []string{}
			for _, c := range cons {
				names = append(names, c.Name)
			}
			sort.Strings(names)
			if !slices.Equal(names, []string{"alice", "bob", "carol"}) {
				t.Errorf("XINFO CONSUMERS = %+v", cons)
			}
			if info, err := rdb.XInfoStream(ctx, "st").Result(); err != nil || info.Length != 3 || info.Groups != 1 || info.LastGeneratedID != "3-1" {
				t.Errorf("XINFO STREAM = %+v %v", info, err)
			}
			if full, err := rdb.XInfoStreamFull(ctx, "st", 0).Result(); err != nil || len(full.Entries) != 3 || len(full.Groups) != 1 {
				t.Errorf("XINFO STREAM FULL = %+v %v", full, err)
			}
			if n := rdb.XDel(ctx, "st", "3-1").Val(); n != 1 {
				t.Errorf("XDEL = %d", n)
			}
			if n := rdb.XTrimMaxLen(ctx, "st", 0).Val(); n != 2 {
				t.Errorf("XTRIM = %d", n)
			}

			// Housekeeping a harness runs.
			must(rdb.FunctionFlush(ctx).Err())
			if libs, err := rdb.FunctionList(ctx, redis.FunctionListQuery{}).Result(); err != nil || len(libs) != 0 {
				t.Errorf("FUNCTION LIST = %v %v", libs, err)
			}
			must(rdb.ScriptFlush(ctx).Err())
			if ex := rdb.ScriptExists(ctx, "abc").Val(); !slices.Equal(ex, []bool{false}) {
				t.Errorf("SCRIPT EXISTS = %v", ex)
			}
			must(rdb.ConfigSet(ctx, "hash-max-ziplist-entries", "2").Err())
			if got := rdb.ConfigGet(ctx, "hash-max-listpack-entries").Val(); got["hash-max-listpack-entries"] != "2" {
				t.Errorf("CONFIG GET = %v", got)
			}
			must(rdb.ConfigSet(ctx, "hash-max-ziplist-entries", "512").Err())
			if n, err := rdb.Eval(ctx, "return 1", nil).Int(); err != nil || n != 1 {
				t.Errorf("EVAL = %d %v", n, err)
			}
			if n, err := rdb.MemoryUsage(ctx, "s").Result(); err != nil || n <= 0 {
				t.Errorf("MEMORY USAGE = %d %v", n, err)
			}
		})
	}
}
