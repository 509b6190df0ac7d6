package server

import (
	"math/rand/v2"
	"strings"
	"time"
	"unsafe"
)

// kind is the type of value a key holds (what TYPE reports).
type kind uint8

// The kinds of value. kindNone is "no such key".
const (
	kindNone kind = iota
	kindString
	kindList
	kindHash
	kindSet
	kindZSet
	kindStream
)

// typeNames are TYPE's replies, indexed by kind.
var typeNames = [...]string{"none", "string", "list", "hash", "set", "zset", "stream"}

func (k kind) String() string { return typeNames[k] }

// object is a non-string value (list, hash, set, zset, stream). Implementations
// live in type_<kind>.go.
type object interface {
	// memUsage returns the approximate bytes the value holds (elements plus
	// per-element overhead). It is called after every write command that
	// touched the value, so it must be O(1): keep a running total.
	memUsage() int
}

// objBox holds a non-string value behind the entry's single pointer. The
// extra small allocation per container key is cheap next to the container,
// and it keeps the per-key entry of the common case (strings) at 16 bytes.
type objBox struct {
	o    object
	mem  int  // memUsage() when last accounted into db.used
	gone bool // removed from the keyspace: no longer accounted
}

// entry is one key's value, 16 bytes: for strings p points at the first byte
// of the value (n bytes; nil when empty); for other kinds p is an *objBox.
// meta packs the kind (top 8 bits) and a 24-bit LRU clock in seconds, as
// Redis does, so that no per-key pointer or interface header is needed.
type entry struct {
	p    unsafe.Pointer
	n    uint32
	meta uint32
}

func (e entry) kind() kind   { return kind(e.meta >> 24) }
func (e entry) lru() uint32  { return e.meta & lruMask }
func (e entry) box() *objBox { return (*objBox)(e.p) }

// bytes returns a string entry's value. The slice aliases the stored value:
// copy it before the keyspace lock is released, and never modify it.
func (e entry) bytes() []byte {
	if e.p == nil {
		return nil
	}
	return unsafe.Slice((*byte)(e.p), e.n)
}

const lruMask = 1<<24 - 1

// entryOverhead approximates the bytes a key costs beyond its key and value:
// its map slot (key header + entry) at typical load plus allocator rounding.
const entryOverhead = 64

func stringEntry(v []byte, lru uint32) entry {
	e := entry{n: uint32(len(v)), meta: uint32(kindString)<<24 | lru&lruMask}
	if len(v) > 0 {
		e.p = unsafe.Pointer(unsafe.SliceData(v))
	}
	return e
}

func objectEntry(b *objBox, k kind, lru uint32) entry {
	return entry{p: unsafe.Pointer(b), meta: uint32(k)<<24 | lru&lruMask}
}

// db is one numbered database. Every access happens under the owning
// Server's mu.
type db struct {
	keys    map[string]entry
	expires map[string]int64 // unix milliseconds; keys share their string with keys
	used    int64            // approximate bytes held (see entryOverhead)

	watched  map[string][]*Client // WATCHing clients by key (cmd_multi.go)
	blocking *dbBlocking          // clients blocked on keys (blocking.go); nil while none
	scans    *scanRegistry        // SCAN-family iterations in progress (cmd_scan.go)
	trk      *trackingState       // the server's, while clients track keys (tracking.go); else nil
}

func newDB() *db {
	return &db{keys: make(map[string]entry), expires: make(map[string]int64)}
}

func (d *db) entryMem(key string, e entry) int64 {
	if e.kind() == kindString {
		return int64(len(key)) + int64(e.n) + entryOverhead
	}
	return int64(len(key)) + int64(e.box().mem) + entryOverhead + 32
}

// get returns key's entry, deleting it first if it has expired (lazy
// expiry). now is unix milliseconds.
func (d *db) get(key []byte, now int64) (entry, bool) {
	e, ok := d.keys[string(key)]
	if !ok {
		return e, false
	}
	if len(d.expires) > 0 {
		if at, has := d.expires[string(key)]; has && at <= now {
			d.remove(string(key), e)
			return entry{}, false
		}
	}
	return e, true
}

// put stores e under key (copying the key if it is new) and keeps the
// memory total; the caller owns TTL handling. It returns the map's own copy
// of the key when it inserted one (else ""), so a TTL set right after can
// share it instead of copying the key again.
func (d *db) put(key []byte, e entry) string {
	d.touch(string(key))
	if old, ok := d.keys[string(key)]; ok {
		if old.kind() != kindString {
			old.box().gone = true
		}
		d.used += d.entryMem(string(key), e) - d.entryMem(string(key), old)
		d.keys[string(key)] = e
		return ""
	}
	k := string(key)
	d.keys[k] = e
	d.used += d.entryMem(k, e)
	return k
}

// remove deletes key and its TTL.
func (d *db) remove(key string, e entry) {
	d.touch(key)
	if e.kind() != kindString {
		e.box().gone = true
	}
	d.used -= d.entryMem(key, e)
	delete(d.keys, key)
	if len(d.expires) > 0 {
		delete(d.expires, key)
	}
}

// setExpire sets key's deadline (unix ms); key must exist. shared is the
// keys map's copy of the key from put, or "" (then the key is copied once).
func (d *db) setExpire(key []byte, shared string, at int64) {
	d.touch(string(key))
	if _, ok := d.expires[string(key)]; ok {
		d.expires[string(key)] = at
		return
	}
	if shared == "" {
		shared = string(key)
	}
	d.expires[shared] = at
}

// randomKey returns a random live key ("" and false if empty). Go's map
// iteration starts at a random position, which is what Redis's RANDOMKEY
// promises (some key, not a uniform draw).
func (d *db) randomKey(now int64) (string, bool) {
	for tries := 0; tries < 100; tries++ {
		var key string
		var e entry
		found := false
		for k, v := range d.keys {
			key, e, found = k, v, true
			break
		}
		if !found {
			return "", false
		}
		if at, ok := d.expires[key]; ok && at <= now {
			d.remove(key, e)
			continue
		}
		return key, true
	}
	return "", false
}

// activeExpire samples keys with a TTL and deletes expired ones, repeating
// while more than a quarter of a sample had expired, as Redis's
// activeExpireCycle does; bounded by budget.
func (d *db) activeExpire(now int64, budget time.Duration) int {
	deadline := time.Now().Add(budget)
	removed := 0
	for {
		if len(d.expires) == 0 {
			return removed
		}
		sampled, expired := 0, 0
		for k, at := range d.expires {
			sampled++
			if at <= now {
				if e, ok := d.keys[k]; ok {
					d.remove(k, e)
				} else {
					delete(d.expires, k)
				}
				expired++
			}
			if sampled >= 20 {
				break
			}
		}
		removed += expired
		if expired*4 <= sampled || time.Now().After(deadline) {
			return removed
		}
	}
}

// lruClock is Redis's 24-bit seconds clock.
func lruClock(now int64) uint32 { return uint32(now/1000) & lruMask }

// Under an LFU maxmemory policy an entry's 24 clock bits hold what Redis
// keeps there instead: the minute of the last decrement (16 bits) and a
// logarithmic access counter (8 bits). Switching policy at runtime
// reinterprets the bits, as in Redis. lfu-log-factor and lfu-decay-time
// are not configurable: Redis's defaults are used.
const (
	lfuInitVal   = 5  // a new key's counter, so it is not evicted at once
	lfuLogFactor = 10 // lfu-log-factor
	lfuDecayTime = 1  // lfu-decay-time, minutes per counter decrement
)

// lfuMinutes is Redis's LFUGetTimeInMinutes: a 16-bit minutes clock.
func lfuMinutes(now int64) uint32 { return uint32(now/60000) & 0xffff }

// lfuInit is the clock bits of a key created at minutes.
func lfuInit(minutes uint32) uint32 { return minutes<<8 | lfuInitVal }

// lfuCounter is Redis's LFUDecrAndReturn: bits' counter after the decay
// due by minutes, without updating anything.
func lfuCounter(bits, minutes uint32) uint32 {
	ldt, counter := bits>>8, bits&255
	elapsed := minutes - ldt
	if minutes < ldt {
		elapsed = 65535 - ldt + minutes
	}
	if periods := elapsed / lfuDecayTime; periods > 0 {
		if periods > counter {
			return 0
		}
		counter -= periods
	}
	return counter
}

// lfuAccess is Redis's updateLFU: decay, then a logarithmic increment
// (the more accesses so far, the less likely another one counts).
func lfuAccess(bits, minutes uint32) uint32 {
	counter := lfuCounter(bits, minutes)
	if counter < 255 {
		base := float64(counter) - lfuInitVal
		if base < 0 {
			base = 0
		}
		if rand.Float64() < 1/(base*lfuLogFactor+1) {
			counter++
		}
	}
	return minutes<<8 | counter
}

// idleSeconds is how long ago (seconds) an entry was last touched.
func idleSeconds(e entry, clock uint32) uint32 {
	l := e.lru()
	if clock >= l {
		return clock - l
	}
	return clock + (lruMask - l)
}

// evictOne removes one key chosen by policy across dbs, sampling like Redis
// (maxmemory-samples). It reports false when nothing can be evicted.
func evictOne(dbs []*db, policy string, samples int, now int64) bool {
	clock, minutes := lruClock(now), lfuMinutes(now)
	lfu := strings.HasSuffix(policy, "-lfu")
	// idle is Redis's eviction score for the LRU and LFU policies: the
	// larger, the better a candidate.
	idle := func(e entry) int64 {
		if lfu {
			return 255 - int64(lfuCounter(e.lru(), minutes))
		}
		return int64(idleSeconds(e, clock))
	}
	var bestDB *db
	var bestKey string
	var bestScore int64
	volatile := strings.HasPrefix(policy, "volatile-")
	start := rand.IntN(len(dbs))
	for i := range dbs {
		d := dbs[(start+i)%len(dbs)]
		if volatile && len(d.expires) == 0 || len(d.keys) == 0 {
			continue
		}
		n := 0
		if volatile {
			for k, at := range d.expires {
				var score int64
				switch policy {
				case "volatile-ttl":
					score = -at
				case "volatile-random":
					score = rand.Int64()
				default:
					score = idle(d.keys[k])
				}
				if bestDB == nil || score > bestScore {
					bestDB, bestKey, bestScore = d, k, score
				}
				if n++; n >= samples {
					break
				}
			}
		} else {
			for k, e := range d.keys {
				var score int64
				if policy == "allkeys-random" {
					score = rand.Int64()
				} else {
					score = idle(e)
				}
				if bestDB == nil || score > bestScore {
					bestDB, bestKey, bestScore = d, k, score
				}
				if n++; n >= samples {
					break
				}
			}
		}
		if policy == "allkeys-random" || policy == "volatile-random" {
			break
		}
	}
	if bestDB == nil {
		return false
	}
	bestDB.remove(bestKey, bestDB.keys[bestKey])
	return true
}
