package bench

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dpulab/dpulab/server"
)

// startOurs starts the bundled server in-process on a free loopback port.
func startOurs(t *testing.T) string {
	t.Helper()
	addr, stop, err := server.StartLocal(server.DefaultConfig())
	if err != nil {
		t.Fatalf("start the bundled server: %v", err)
	}
	t.Cleanup(stop)
	return addr
}

// TestAgainstOurServer: the same counts, ratio and key space against the
// bundled server, over both client paths and both protocols. (It has no
// INFO commandstats to compare with, so the key space is the server-side
// witness: sequential SETs over KEY-MAXIMUM keys leave exactly that many.)
func TestAgainstOurServer(t *testing.T) {
	addr := startOurs(t)
	rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true})
	defer rdb.Close()
	ctx := context.Background()
	for _, client := range []ClientKind{ClientLean, ClientGoRedis} {
		for _, proto := range []int{2, 3} {
			t.Run(string(client)+"/RESP"+strconv.Itoa(proto), func(t *testing.T) {
				if err := rdb.FlushAll(ctx).Err(); err != nil {
					t.Fatal(err)
				}
				cfg := testConfig(addr)
				cfg.Client, cfg.Protocol, cfg.Clients, cfg.Pipeline = client, proto, 5, 8
				cfg.KeyPattern, cfg.KeyMaximum, cfg.Ratio, cfg.Requests = KeyParallel, 1002, Ratio{Set: 1, Get: 0}, 1003
				got, err := runCollect(t, ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				if r := got.runs[0]; r.Ops != 1003 || r.Errors != 0 {
					t.Fatalf("ops=%d errors=%d, want 1003 replies", r.Ops, r.Errors)
				}
				if n := rdb.DBSize(ctx).Val(); n != 1003 {
					t.Fatalf("DBSIZE = %d, want 1003", n)
				}
				// Now GETs over the filled key space: every one hits, and
				// the ratio is honoured.
				cfg.KeyPattern, cfg.Ratio, cfg.Requests = KeyRandom, Ratio{Set: 1, Get: 10}, 2011
				got, err = runCollect(t, ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				r := got.runs[0]
				sets := expectedSets(2011, cfg.Clients, cfg.Ratio)
				if r.Ops != 2011 || r.OpsByCmd["set"] != sets || r.Hits != 2011-sets || r.Misses != 0 {
					t.Errorf("ops=%d set=%d hits=%d misses=%d; want 2011, %d, %d, 0", r.Ops, r.OpsByCmd["set"], r.Hits, r.Misses, sets, 2011-sets)
				}
				checkLatency(t, "ours", r.LatencyMs)
			})
		}
	}
	t.Run("rate", func(t *testing.T) {
		cfg := testConfig(addr)
		cfg.Rate, cfg.Duration = 2000, 2*time.Second
		got, err := runCollect(t, ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if r := got.runs[0]; r.OpsPerSec < 1900 || r.OpsPerSec > 2100 {
			t.Errorf("achieved %.1f ops/s, want 2000 ± 5%%", r.OpsPerSec)
		}
	})
}

// TestEightyTargets is the whitepaper's scale: 80 instances (in-process
// here), clients spread over all of them, a result kept per target.
func TestEightyTargets(t *testing.T) {
	var addrs []string
	for i := 0; i < 80; i++ {
		addrs = append(addrs, startOurs(t))
	}
	cfg := testConfig(addrs[0])
	cfg.Endpoints, cfg.Clients, cfg.Requests, cfg.Pipeline = tcpEndpoints(addrs...), 2, 16000, 4
	got, err := runCollect(t, context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := got.runs[0]
	if got.start.Connections != 160 || len(r.Targets) != 80 || r.Ops != 16000 {
		t.Fatalf("connections=%d targets=%d ops=%d, want 160, 80, 16000", got.start.Connections, len(r.Targets), r.Ops)
	}
	var sum int64
	for i, tr := range r.Targets {
		if tr.Target != addrs[i] || tr.Ops != 200 {
			t.Errorf("target %d: %s ops=%d, want %s with 200", i, tr.Target, tr.Ops, addrs[i])
		}
		sum += tr.Ops
	}
	if sum != r.Ops {
		t.Errorf("per-target ops add up to %d, run has %d", sum, r.Ops)
	}
}
