package server

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Tuning holds Redis settings that test harnesses and tuned redis.conf
// files set: the small encodings' conversion thresholds, honoured by our
// hashes, sets and sorted sets (OBJECT ENCODING answers accordingly), and
// settings kept and reported by CONFIG GET whose mechanism dpulab does not
// have (each field says which).
type Tuning struct {
	// HashMaxListpackEntries and HashMaxListpackValue bound a hash kept
	// in the packed, insertion-ordered encoding (hash-max-listpack-*,
	// alias hash-max-ziplist-*).
	HashMaxListpackEntries int64
	HashMaxListpackValue   int64
	// SetMaxIntsetEntries bounds a set of integers kept as a sorted array
	// (set-max-intset-entries).
	SetMaxIntsetEntries int64
	// ZSetMaxListpackEntries and ZSetMaxListpackValue bound a sorted set
	// kept as one sorted slice (zset-max-listpack-*, alias
	// zset-max-ziplist-*).
	ZSetMaxListpackEntries int64
	ZSetMaxListpackValue   int64
	// ListMaxListpackSize and ListCompressDepth shape Redis's quicklist
	// nodes; a list here is one ring buffer: reported only.
	ListMaxListpackSize int64
	ListCompressDepth   int64
	// StreamNodeMaxBytes and StreamNodeMaxEntries size Redis's stream
	// nodes; ours hold 100 entries each (type_stream.go): reported only.
	StreamNodeMaxBytes   int64
	StreamNodeMaxEntries int64
	// SlowlogLogSlowerThan (microseconds; negative: off, 0: every
	// command) and SlowlogMaxLen: the slow log's (slowlog.go, which says
	// which commands are timed on their own).
	SlowlogLogSlowerThan int64
	SlowlogMaxLen        int64
	// LatencyMonitorThreshold: reported only (LATENCY has no samples).
	LatencyMonitorThreshold int64
	// BusyReplyThreshold (milliseconds; busy-reply-threshold, alias
	// lua-time-limit): past it a running script makes other clients get
	// BUSY and can be killed (script.go).
	BusyReplyThreshold int64
}

// DefaultTuning returns Redis 7.0's built-in defaults.
func DefaultTuning() Tuning {
	return Tuning{
		HashMaxListpackEntries: 512, HashMaxListpackValue: 64,
		SetMaxIntsetEntries:    512,
		ZSetMaxListpackEntries: 128, ZSetMaxListpackValue: 64,
		ListMaxListpackSize: -2, ListCompressDepth: 0,
		StreamNodeMaxBytes: 4096, StreamNodeMaxEntries: 100,
		SlowlogLogSlowerThan: 10000, SlowlogMaxLen: 128,
		BusyReplyThreshold: 5000,
	}
}

// defaultTuning is what containers created without a server (tests of the
// types) use.
var defaultTuning = DefaultTuning()

// strictIntArg parses an integer setting as Redis 7.0 does for its
// integer configs (string2ll: no sign but '-', no leading zeros) within
// [lo, hi].
func strictIntArg(dst func(*Config) *int64, lo, hi int64) func(*Config, []string) error {
	return func(c *Config, a []string) error {
		if len(a) != 1 {
			return errBadArgs
		}
		v, ok := parseInt([]byte(a[0]))
		if !ok {
			return errors.New("argument couldn't be parsed into an integer")
		}
		if v < lo || v > hi {
			return fmt.Errorf("argument must be between %d and %d inclusive", lo, hi)
		}
		*dst(c) = v
		return nil
	}
}

// memValueArg parses a memory setting as Redis's memtoull: digits with an
// optional b/k/kb/m/mb/g/gb unit (any case), no sign; too large for the
// range is a range error.
func memValueArg(dst func(*Config) *int64, hi int64) func(*Config, []string) error {
	return func(c *Config, a []string) error {
		if len(a) != 1 {
			return errBadArgs
		}
		s := strings.ToLower(a[0])
		mult := uint64(1)
		for _, u := range []struct {
			suffix string
			mult   uint64
		}{{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1000}, {"m", 1000 * 1000}, {"g", 1000 * 1000 * 1000}, {"b", 1}} {
			if strings.HasSuffix(s, u.suffix) {
				s, mult = strings.TrimSuffix(s, u.suffix), u.mult
				break
			}
		}
		v, ok := parseUint([]byte(s))
		if !ok && len(s) > 0 && strings.Trim(s, "0123456789") == "" {
			v, ok = 1<<64-1, true // overflow: refused by the range below
		}
		if !ok {
			return errors.New("argument must be a memory value")
		}
		if v > uint64(hi)/mult {
			return fmt.Errorf("argument must be between 0 and %d inclusive", hi)
		}
		*dst(c) = int64(v * mult)
		return nil
	}
}

// tuningDirectives are the Tuning settings, under Redis's names and, for
// the encodings, their older ziplist aliases (CONFIG GET * lists both, as
// Redis does).
func tuningDirectives() []directive {
	const maxLong = 1<<63 - 1
	const maxInt, minInt = 1<<31 - 1, -1 << 31
	num := func(names []string, f func(*Config) *int64, lo, hi int64, mem bool) []directive {
		set := strictIntArg(f, lo, hi)
		if mem {
			set = memValueArg(f, hi)
		}
		var out []directive
		for _, n := range names {
			out = append(out, directive{name: n, runtime: true, set: set,
				get: func(c *Config) string { return strconv.FormatInt(*f(c), 10) }})
		}
		return out
	}
	t := func(f func(*Tuning) *int64) func(*Config) *int64 {
		return func(c *Config) *int64 { return f(&c.Tuning) }
	}
	var ds []directive
	for _, d := range [][]directive{
		num([]string{"hash-max-listpack-entries", "hash-max-ziplist-entries"}, t(func(t *Tuning) *int64 { return &t.HashMaxListpackEntries }), 0, maxLong, false),
		num([]string{"hash-max-listpack-value", "hash-max-ziplist-value"}, t(func(t *Tuning) *int64 { return &t.HashMaxListpackValue }), 0, maxLong, true),
		num([]string{"set-max-intset-entries"}, t(func(t *Tuning) *int64 { return &t.SetMaxIntsetEntries }), 0, maxLong, false),
		num([]string{"zset-max-listpack-entries", "zset-max-ziplist-entries"}, t(func(t *Tuning) *int64 { return &t.ZSetMaxListpackEntries }), 0, maxLong, false),
		num([]string{"zset-max-listpack-value", "zset-max-ziplist-value"}, t(func(t *Tuning) *int64 { return &t.ZSetMaxListpackValue }), 0, maxLong, true),
		num([]string{"list-max-listpack-size", "list-max-ziplist-size"}, t(func(t *Tuning) *int64 { return &t.ListMaxListpackSize }), minInt, maxInt, false),
		num([]string{"list-compress-depth"}, t(func(t *Tuning) *int64 { return &t.ListCompressDepth }), 0, maxInt, false),
		num([]string{"stream-node-max-bytes"}, t(func(t *Tuning) *int64 { return &t.StreamNodeMaxBytes }), 0, maxLong, true),
		num([]string{"stream-node-max-entries"}, t(func(t *Tuning) *int64 { return &t.StreamNodeMaxEntries }), 0, maxLong, false),
		num([]string{"slowlog-log-slower-than"}, t(func(t *Tuning) *int64 { return &t.SlowlogLogSlowerThan }), -1, maxLong, false),
		num([]string{"slowlog-max-len"}, t(func(t *Tuning) *int64 { return &t.SlowlogMaxLen }), 0, maxLong, false),
		num([]string{"busy-reply-threshold", "lua-time-limit"}, t(func(t *Tuning) *int64 { return &t.BusyReplyThreshold }), 0, maxLong, false),
		num([]string{"latency-monitor-threshold"}, t(func(t *Tuning) *int64 { return &t.LatencyMonitorThreshold }), 0, maxLong, false),
	} {
		ds = append(ds, d...)
	}
	return ds
}
