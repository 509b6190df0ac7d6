package server

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestHLLSparseMatchesDense adds the same elements to a sparse HLL (never
// promoted) and to a dense one: the sparse value, expanded, has the same
// registers, and both estimate the same cardinality.
func TestHLLSparseMatchesDense(t *testing.T) {
	sparse := newHLL()
	dense, ok := hllSparseToDense(newHLL())
	if !ok {
		t.Fatal("empty HLL does not convert")
	}
	for i := 0; i < 5000; i++ {
		ele := []byte(fmt.Sprintf("ele-%d", i))
		sparse, _ = hllAdd(sparse, ele, 1<<30)
		dense, _ = hllAdd(dense, ele, 1<<30)
	}
	if sparse[4] != hllSparse || dense[4] != hllDense {
		t.Fatalf("encodings %d %d", sparse[4], dense[4])
	}
	expanded, ok := hllSparseToDense(sparse)
	if !ok {
		t.Fatal("sparse value corrupted")
	}
	if !bytes.Equal(expanded[hllHdrSize:], dense[hllHdrSize:]) {
		t.Fatal("sparse registers differ from dense ones")
	}
	// hllAdd leaves the cache to PFADD, which invalidates it once.
	hllInvalidateCache(sparse)
	hllInvalidateCache(dense)
	c1, _, ok1 := hllCard(sparse)
	c2, _, ok2 := hllCard(dense)
	if !ok1 || !ok2 || c1 != c2 {
		t.Fatalf("cardinalities %d %v, %d %v", c1, ok1, c2, ok2)
	}
	if c1 < 4800 || c1 > 5200 {
		t.Fatalf("estimate %d for 5000 elements", c1)
	}
}

// TestHLLCorruptValuesNoPanic feeds random and truncated values with a
// valid header to every HLL operation: a client can SET any bytes, so none
// may panic.
func TestHLLCorruptValuesNoPanic(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 1))
	var max [hllRegisters]uint8
	for i := 0; i < 20000; i++ {
		n := hllHdrSize + r.IntN(40)
		if i%50 == 0 {
			n = hllDenseSize
		}
		v := make([]byte, n)
		for j := range v {
			v[j] = byte(r.Uint32())
		}
		copy(v, "HYLL")
		v[4] = byte(r.IntN(2))
		if !isHLL(v) {
			continue
		}
		h := append([]byte(nil), v...)
		for k := 0; k < 5; k++ {
			h, _ = hllAdd(h, []byte{byte(k), byte(i)}, hllSparseMaxBytes)
		}
		hllCard(append([]byte(nil), v...))
		hllMerge(&max, v)
		hllSparseToDense(v)
		if v[4] == hllSparse {
			hllDecode(v)
			for k := 0; k < 20; k++ {
				h, _ = hllSparseSet(h, r.IntN(hllRegisters), uint8(1+r.IntN(40)), hllSparseMaxBytes)
				if h[4] != hllSparse {
					break
				}
			}
		}
	}
}

// TestGoRedisHLL drives PFADD, PFCOUNT and PFMERGE through go-redis.
func TestGoRedisHLL(t *testing.T) {
	addr := StartTest(t, DefaultConfig())
	for _, proto := range []int{3, 2} {
		t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: proto, MaxRetries: -1})
			defer rdb.Close()
			if err := rdb.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			if n, err := rdb.PFAdd(ctx, "h1", "a", "b", "c").Result(); err != nil || n != 1 {
				t.Fatalf("PFADD = %d, %v", n, err)
			}
			if n := rdb.PFAdd(ctx, "h1", "a").Val(); n != 0 {
				t.Errorf("PFADD of a seen element = %d, want 0", n)
			}
			if n := rdb.PFCount(ctx, "h1").Val(); n != 3 {
				t.Errorf("PFCOUNT = %d, want 3", n)
			}
			elems := make([]any, 10000)
			for i := range elems {
				elems[i] = fmt.Sprint("e", i)
			}
			rdb.PFAdd(ctx, "h2", elems...)
			if n := rdb.PFCount(ctx, "h2").Val(); n < 9800 || n > 10200 {
				t.Errorf("PFCOUNT of 10000 = %d", n)
			}
			if err := rdb.PFMerge(ctx, "m", "h1", "h2").Err(); err != nil {
				t.Fatal(err)
			}
			if a, b := rdb.PFCount(ctx, "m").Val(), rdb.PFCount(ctx, "h1", "h2").Val(); a != b {
				t.Errorf("PFCOUNT of the merge %d, of the union %d", a, b)
			}
			rdb.Set(ctx, "s", "not an hll", 0)
			if err := rdb.PFAdd(ctx, "s", "x").Err(); err == nil || err.Error() != errNotHLL {
				t.Errorf("PFADD on a string: %v", err)
			}
		})
	}
}

// TestHLLValuesMoveBetweenServers: an HLL made by redis-server, SET on
// ours, counts the same and grows into the same bytes; one made by ours
// counts the same on redis-server.
func TestHLLValuesMoveBetweenServers(t *testing.T) {
	sock := startRedisPeer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	peer := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, Protocol: 2, MaxRetries: -1})
	defer peer.Close()
	ours := redis.NewClient(&redis.Options{Addr: StartTest(t, DefaultConfig()), Protocol: 2, MaxRetries: -1})
	defer ours.Close()

	for _, n := range []int{10, 300, 5000} {
		key := fmt.Sprint("h", n)
		elems := make([]any, n)
		for i := range elems {
			elems[i] = fmt.Sprint(key, "-", i)
		}
		if err := peer.PFAdd(ctx, key, elems...).Err(); err != nil {
			t.Fatal(err)
		}
		theirs := peer.Get(ctx, key).Val()
		if err := ours.Set(ctx, key, theirs, 0).Err(); err != nil {
			t.Fatal(err)
		}
		if a, b := ours.PFCount(ctx, key).Val(), peer.PFCount(ctx, key).Val(); a != b {
			t.Errorf("%s: PFCOUNT of redis-server's value: ours %d, redis-server %d", key, a, b)
		}
		more := []any{"x", "y", "z", key}
		peer.PFAdd(ctx, key, more...)
		ours.PFAdd(ctx, key, more...)
		peer.PFCount(ctx, key)
		ours.PFCount(ctx, key)
		if a, b := ours.Get(ctx, key).Val(), peer.Get(ctx, key).Val(); a != b {
			t.Errorf("%s: values differ after the same PFADD and PFCOUNT (%d and %d bytes)", key, len(a), len(b))
		}

		// And back: our value on redis-server.
		back := key + "-ours"
		ours.PFAdd(ctx, back, elems...)
		peer.Set(ctx, back, ours.Get(ctx, back).Val(), 0)
		if a, b := ours.PFCount(ctx, back).Val(), peer.PFCount(ctx, back).Val(); a != b {
			t.Errorf("%s: PFCOUNT of our value: ours %d, redis-server %d", back, a, b)
		}
	}
}

// TestHLLUnpack checks the unrolled decoder against the register reader.
func TestHLLUnpack(t *testing.T) {
	r := make([]byte, hllDenseSize-hllHdrSize)
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < hllRegisters; i++ {
		hllDenseSetReg(r, i, uint8(rnd.IntN(64)))
	}
	var regs [hllRegisters]uint8
	hllUnpack(r, &regs)
	for i, v := range regs {
		if w := hllDenseGet(r, i); v != w {
			t.Fatalf("register %d: unpacked %d, read %d", i, v, w)
		}
	}
}
