package benchwire

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/dpulab/dpulab/internal/wire/transportwire"
)

// The connect timeouts when --connect-timeout is not given. An RDMA
// connection is an address and a route resolved, then a connection
// manager exchange (REQ, REP, RTU) whose lost packet is resent only after
// its response timeout (about 4 s); many at once on a loaded host (a
// trainee's VM, a Soft-RoCE guest: 128 connections there timed out at 5 s)
// take longer than TCP's handshake.
const (
	DefaultConnectTimeout = 5 * time.Second
	RDMAConnectTimeout    = 30 * time.Second
)

// ConnectTimeoutFor is how long connecting to ep may take: ConnectTimeout,
// or when it is 0 the default for ep's transport.
func (c *Config) ConnectTimeoutFor(ep transportwire.Endpoint) time.Duration {
	switch {
	case c.ConnectTimeout > 0:
		return c.ConnectTimeout
	case ep.Transport == transportwire.RDMA:
		return RDMAConnectTimeout
	}
	return DefaultConnectTimeout
}

// ClientKind selects the client path of the hot loop.
type ClientKind string

const (
	// ClientAuto picks the lean path.
	ClientAuto ClientKind = "auto"
	// ClientLean is the pipelined path over server/resp: one buffer per
	// connection, no allocation per command.
	ClientLean ClientKind = "lean"
	// ClientGoRedis is github.com/redis/go-redis/v9.
	ClientGoRedis ClientKind = "go-redis"
)

// KeyPattern is memtier's --key-pattern, SET:GET, each side one of R
// (uniform random), S (sequential: each connection walks the whole range
// from --key-minimum, wrapping), G (Gaussian around the middle of the
// range, standard deviation a sixth of it, memtier's defaults) or P
// (parallel: each connection of a target walks its own contiguous slice of
// the range, so together they cover every key once per pass; P must be on
// both sides, as in memtier). Keys are always in [KeyMinimum, KeyMaximum].
type KeyPattern string

const (
	// KeyRandom draws keys uniformly (memtier's default).
	KeyRandom KeyPattern = "R:R"
	// KeySequential has every connection walk the whole key range in order.
	KeySequential KeyPattern = "S:S"
	// KeyGaussian draws keys from a normal distribution: a hot middle,
	// cold edges.
	KeyGaussian KeyPattern = "G:G"
	// KeyParallel splits the range over a target's connections, each
	// walking its slice in order: N requests over N keys write every key
	// exactly once.
	KeyParallel KeyPattern = "P:P"
)

// ParseKeyPattern reads memtier's SET:GET form ("R:R", "S:G", "P:P") and,
// for command lines written for earlier dpulab versions, the single words
// random (R:R), sequential (P:P: what it meant then) and gaussian (G:G).
func ParseKeyPattern(s string) (KeyPattern, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "random":
		return KeyRandom, nil
	case "sequential":
		return KeyParallel, nil
	case "gaussian":
		return KeyGaussian, nil
	}
	set, get, ok := strings.Cut(strings.ToUpper(strings.TrimSpace(s)), ":")
	valid := func(x string) bool { return len(x) == 1 && strings.Contains("RSGP", x) }
	if !ok || !valid(set) || !valid(get) {
		return "", fmt.Errorf("key pattern %q: want SET:GET with R (random), S (sequential), G (gaussian) or P (parallel) on each side, e.g. R:R", s)
	}
	if (set == "P" || get == "P") && set != get {
		return "", fmt.Errorf("key pattern %q: the parallel pattern P must be given for both SET and GET (P:P), as in memtier", s)
	}
	return KeyPattern(set + ":" + get), nil
}

// UnmarshalText reads the pattern as ParseKeyPattern does, so that lines of
// earlier versions ("random", "sequential") decode.
func (k *KeyPattern) UnmarshalText(b []byte) error {
	v, err := ParseKeyPattern(string(b))
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// Ratio is memtier's SET:GET convention: 1:10 is one SET per ten GETs. Each
// client issues Set SETs then Get GETs, over and over, so the mix is exact.
type Ratio struct {
	Set int
	Get int
}

// String formats the ratio as SET:GET.
func (r Ratio) String() string { return fmt.Sprintf("%d:%d", r.Set, r.Get) }

// MarshalText writes SET:GET.
func (r Ratio) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText reads SET:GET.
func (r *Ratio) UnmarshalText(b []byte) error {
	v, err := ParseRatio(string(b))
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// ParseRatio reads "SET:GET", e.g. "1:10".
func ParseRatio(s string) (Ratio, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), ":")
	set, err1 := strconv.Atoi(a)
	get, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || set < 0 || get < 0 || set+get == 0 {
		return Ratio{}, fmt.Errorf("ratio %q: want SET:GET with non-negative integers, not both zero (e.g. 1:10 = one SET per ten GETs)", s)
	}
	return Ratio{Set: set, Get: get}, nil
}

// SizeWeight is one entry of a value-size mix.
type SizeWeight struct {
	Size   int `json:"size_bytes"`
	Weight int `json:"weight"`
}

// UnmarshalJSON also reads the "size" of lines written before sizes carried
// their unit in the name.
func (sw *SizeWeight) UnmarshalJSON(b []byte) error {
	var v struct {
		Size   *int `json:"size_bytes"`
		Old    *int `json:"size"`
		Weight int  `json:"weight"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*sw = SizeWeight{Weight: v.Weight}
	if v.Size != nil {
		sw.Size = *v.Size
	} else if v.Old != nil {
		sw.Size = *v.Old
	}
	return nil
}

// Range is an inclusive MIN-MAX range, memtier's syntax for
// --data-size-range and --expiry-range.
type Range struct {
	Min int `json:"min"`
	Max int `json:"max"`
}

// IsZero reports whether the range is unset (0-0, memtier's "off").
func (r Range) IsZero() bool { return r.Min == 0 && r.Max == 0 }

// String formats the range as MIN-MAX.
func (r Range) String() string { return fmt.Sprintf("%d-%d", r.Min, r.Max) }

// ParseRange reads MIN-MAX (non-negative integers, MIN <= MAX).
func ParseRange(s string) (Range, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "-")
	lo, err1 := strconv.Atoi(strings.TrimSpace(a))
	hi, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || lo < 0 || hi < lo {
		return Range{}, fmt.Errorf("range %q: want MIN-MAX, non-negative integers with MIN <= MAX (e.g. 32-1024)", s)
	}
	return Range{Min: lo, Max: hi}, nil
}

// ParseSizeList reads memtier's --data-size-list syntax, "SIZE[:WEIGHT],...",
// e.g. "32,256,4096" (equal weights) or "32:7,4096:1". Weights default to 1.
func ParseSizeList(s string) ([]SizeWeight, error) {
	var out []SizeWeight
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		sz, wt, hasW := strings.Cut(part, ":")
		size, err := strconv.Atoi(sz)
		if err != nil || size < 1 {
			return nil, fmt.Errorf("data size list %q: %q is not a size in bytes ≥ 1", s, sz)
		}
		weight := 1
		if hasW {
			weight, err = strconv.Atoi(wt)
			if err != nil || weight < 1 {
				return nil, fmt.Errorf("data size list %q: weight %q must be an integer ≥ 1", s, wt)
			}
		}
		out = append(out, SizeWeight{Size: size, Weight: weight})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("data size list %q is empty; give sizes like 32,256,4096", s)
	}
	return out, nil
}

// FormatSizeList is the inverse of ParseSizeList.
func FormatSizeList(l []SizeWeight) string {
	parts := make([]string, len(l))
	for i, sw := range l {
		parts[i] = fmt.Sprintf("%d:%d", sw.Size, sw.Weight)
	}
	return strings.Join(parts, ",")
}

// Config is what one `dpulab bench` invocation does. Fill it from
// DefaultConfig, override fields (flags), then call Validate.
//
// The names and meanings follow memtier_benchmark: a target gets Threads ×
// Clients connections, RequestsPerClient is per connection, RateLimiting
// per connection. Requests (a total) and Rate (a total) are dpulab's own.
type Config struct {
	// Endpoints are the servers, each with its transport (tcp://HOST:PORT,
	// unix:///PATH, rdma://HOST:PORT). Every endpoint gets Threads ×
	// Clients connections. JSON carries them as "endpoints" (URLs) and, as
	// before transports had names, the TCP ones as "targets" and the Unix
	// ones as "unix_sockets" (MarshalJSON).
	Endpoints []transportwire.Endpoint `json:"endpoints"`
	// RDMA holds the settings of connections over rdma (--rdma-mode and
	// the --rdma-* flags); zero values are the transport's defaults.
	RDMA transportwire.RDMAOptions `json:"rdma,omitzero"`
	// SourceAddr is the local IP address every connection is made from
	// (--source-address): over RDMA it picks the device the connection
	// leaves by (rdma_resolve_addr's source), over TCP the interface. ""
	// lets the route choose.
	SourceAddr string `json:"source_address,omitempty"`
	// Threads multiplies Clients, as memtier's --threads does (default 1:
	// the connections are goroutines, so threads only count them).
	Threads int `json:"threads"`
	// Clients is the number of connections per thread and target (default
	// 50, memtier's).
	Clients int `json:"clients"`
	// Pipeline is how many requests each connection keeps in flight
	// (default 1: send, wait for the reply, send the next).
	Pipeline int `json:"pipeline"`
	// Ratio is SET:GET (default 1:10, memtier's).
	Ratio Ratio `json:"ratio"`
	// DataSize is the SET value size in bytes (default 32, memtier's).
	DataSize int `json:"data_size_bytes"`
	// DataSizeRange, when set, draws each SET's size from MIN-MAX bytes,
	// as DataSizePattern says.
	DataSizeRange Range `json:"data_size_range_bytes,omitzero"`
	// DataSizePattern is memtier's: R (default) draws a uniform size from
	// DataSizeRange, S makes the size grow with the key number from MIN at
	// KeyMinimum to MAX at KeyMaximum.
	DataSizePattern string `json:"data_size_pattern,omitempty"`
	// DataSizeList, when set, overrides DataSize with a weighted mix of value
	// sizes within every run, as memtier's --data-size-list does: each SET
	// draws its size with probability weight/sum(weights). For one run per
	// size, invoke bench once per size (the lab's compare sweep does that).
	DataSizeList []SizeWeight `json:"data_size_list,omitempty"`
	// ExpirySeconds, when set, gives every SET an expiry drawn uniformly
	// from MIN-MAX seconds (SET key value EX n; 0 drawn = no expiry), as
	// memtier's --expiry-range.
	ExpirySeconds Range `json:"expiry_range_seconds,omitzero"`
	// KeyMinimum and KeyMaximum bound the key numbers, both included, as
	// in memtier: keys are KeyPrefix + decimal number (default 0 and
	// 999,999: a million keys).
	KeyMinimum int64 `json:"key_minimum"`
	KeyMaximum int64 `json:"key_maximum"`
	// KeyPrefix prefixes every key (default "memtier-", memtier's, so that
	// key spaces written by either tool are the same).
	KeyPrefix string `json:"key_prefix"`
	// KeyPattern is memtier's SET:GET pattern (default R:R).
	KeyPattern KeyPattern `json:"key_pattern"`
	// Duration is how long each run is measured (default 10s). Ignored
	// when Requests or RequestsPerClient is set.
	Duration time.Duration `json:"duration_ns"`
	// RequestsPerClient, when > 0, makes every connection send exactly this
	// many requests per run, as memtier's --requests: a run then gets
	// RequestsPerClient × Threads × Clients × targets replies.
	RequestsPerClient int64 `json:"requests_per_client,omitempty"`
	// Requests, when > 0, makes each run exactly this many requests in total
	// across all connections (and as many replies), split evenly.
	Requests int64 `json:"requests_total,omitempty"`
	// Warmup runs load for this long before each run's measurement starts;
	// nothing of it is counted.
	Warmup time.Duration `json:"warmup_ns,omitempty"`
	// Rate, when > 0, holds the total request rate (ops/s across all
	// connections) fixed. Latency is then measured from the moment each
	// request was due, not when it was sent, so a stalled server shows up in
	// the latency instead of hiding (coordinated omission).
	Rate float64 `json:"rate_ops_per_sec,omitempty"`
	// RateLimiting, when > 0, holds every connection at this many ops/s,
	// as memtier's --rate-limiting (measured like Rate).
	RateLimiting int `json:"rate_limiting_ops_per_sec_per_connection,omitempty"`
	// Prefill writes every key of the key space once (sequential SETs, not
	// measured) before the first run, so that GETs hit.
	Prefill bool `json:"prefill,omitempty"`
	// Runs repeats the whole run (default 1), memtier's --run-count; the
	// summary gives mean, stddev, min and max across runs.
	Runs int `json:"runs"`
	// Percentiles are the latency percentiles reported per run besides the
	// fixed ones (memtier's --print-percentiles, default 50, 99, 99.9).
	Percentiles []float64 `json:"print_percentiles,omitempty"`
	// User is the ACL user AUTH names (none: the default user).
	User string `json:"user,omitempty"`
	// Password is sent with AUTH on every connection. Never printed or
	// encoded; see PasswordEnv.
	Password string `json:"-"`
	// SelectDB is the database every connection SELECTs (default 0).
	SelectDB int `json:"select_db,omitempty"`
	// Client selects the client path (default auto = lean).
	Client ClientKind `json:"client"`
	// Protocol is the RESP version, 2 (default, what redis-benchmark and
	// memtier speak) or 3 (HELLO 3 on connect).
	Protocol int `json:"protocol"`
	// ConnectTimeout bounds connecting (and AUTH/HELLO) to each target;
	// an unreachable target fails the bench within it. 0 (the default)
	// is DefaultConnectTimeout, or RDMAConnectTimeout for an rdma://
	// target (ConnectTimeoutFor).
	ConnectTimeout time.Duration `json:"connect_timeout_ns"`
	// Interval is the sampling interval (default 1s).
	Interval time.Duration `json:"interval_ns"`
	// TargetSamples adds a per-target sample per interval to the totals.
	TargetSamples bool `json:"target_samples,omitempty"`
	// StartAtUnixMs, when set, is the instant (Unix time in milliseconds,
	// on this host's clock) the first request is sent: the connections
	// are made first, then the bench waits for it (--start-at). Several
	// client hosts given one instant start together. Run refuses an
	// instant more than StartAtPast behind or StartAtFuture ahead.
	StartAtUnixMs int64 `json:"start_at_unix_ms,omitempty"`
	// Seed seeds the key and size choices; 0 picks one from the clock.
	Seed int64 `json:"seed,omitempty"`
	// JSONOutFile, when set, is where the results are written at the end
	// in memtier's --json-out-file shape (see memtier.go).
	JSONOutFile string `json:"json_out_file,omitempty"`
	// HDRFilePrefix, when set, makes every run write its latency
	// histograms as HdrHistogram log files PREFIX_FULL_RUN_N.hgrm (and per
	// command, _SET_command_run_N, _GET_command_run_N), with a percentile
	// table PREFIX_FULL_RUN_N.txt, as memtier's --hdr-file-prefix.
	HDRFilePrefix string `json:"hdr_file_prefix,omitempty"`
	// Capacity, when set, makes the bench a capacity search (capacity.go,
	// --capacity p99<=1ms): the highest --rate that keeps the latency
	// percentile under the cap, probed with this load shape, Duration per
	// probe.
	Capacity *CapacitySpec `json:"capacity,omitempty"`
}

// MarshalJSON writes the Config with its endpoints twice: all of them as
// "endpoints", and the TCP and Unix ones under the names they had before
// (FORMATS.md), so that readers of either keep working.
func (c Config) MarshalJSON() ([]byte, error) {
	type plain Config
	var v struct {
		Targets     []string `json:"targets,omitempty"`
		UnixSockets []string `json:"unix_sockets,omitempty"`
		plain
	}
	v.plain = plain(c)
	for _, ep := range c.Endpoints {
		switch ep.Transport {
		case transportwire.TCP:
			v.Targets = append(v.Targets, ep.Address)
		case transportwire.Unix:
			v.UnixSockets = append(v.UnixSockets, ep.Address)
		}
	}
	return json.Marshal(v)
}

// UnmarshalJSON reads a Config as encoded; lines without "endpoints" by
// their "targets" and "unix_sockets"; and the names of lines written
// before sizes, counts and rates carried their unit in the name (schema 1):
// "requests" (the total), "data_size", "rate".
func (c *Config) UnmarshalJSON(b []byte) error {
	type plain Config
	var v struct {
		plain
		Targets     []string `json:"targets"`
		UnixSockets []string `json:"unix_sockets"`
		OldRequests *int64   `json:"requests"`
		OldDataSize *int     `json:"data_size"`
		OldRate     *float64 `json:"rate"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*c = Config(v.plain)
	if c.Endpoints == nil {
		for _, t := range v.Targets {
			c.Endpoints = append(c.Endpoints, transportwire.TCPEndpoint(t))
		}
		for _, p := range v.UnixSockets {
			c.Endpoints = append(c.Endpoints, transportwire.UnixEndpoint(p))
		}
	}
	if v.OldRequests != nil && c.Requests == 0 {
		c.Requests = *v.OldRequests
	}
	if v.OldDataSize != nil && c.DataSize == 0 {
		c.DataSize = *v.OldDataSize
	}
	if v.OldRate != nil && c.Rate == 0 {
		c.Rate = *v.OldRate
	}
	return nil
}

// DefaultConfig returns the defaults documented on Config's fields (no
// target: the caller must name one).
func DefaultConfig() Config {
	return Config{
		Threads:     1,
		Clients:     50,
		Pipeline:    1,
		Ratio:       Ratio{Set: 1, Get: 10},
		DataSize:    32,
		KeyMinimum:  0,
		KeyMaximum:  999_999,
		KeyPrefix:   "memtier-",
		KeyPattern:  KeyRandom,
		Duration:    10 * time.Second,
		Runs:        1,
		Percentiles: []float64{50, 99, 99.9},
		Client:      ClientAuto,
		Protocol:    2,
		Interval:    time.Second,
	}
}

// Limits that keep a typo from exhausting the machine.
const (
	maxClients  = 10_000
	maxPipeline = 100_000
	maxDataSize = 512 << 20
	maxTargets  = 4096
)

// ConnsPerTarget is Threads × Clients.
func (c *Config) ConnsPerTarget() int { return max(c.Threads, 1) * c.Clients }

// Validate checks the configuration and says how to fix what is wrong.
// Whether a binary has each endpoint's transport is not its question
// (ValidateWith is, for the bench itself).
func (c *Config) Validate() error { return c.ValidateWith(nil) }

// ValidateWith is Validate that also asks available (server/transport's
// Available, in the bench) whether each endpoint's transport can be used:
// one message per transport that cannot.
func (c *Config) ValidateWith(available func(transportwire.Name) error) error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if len(c.Endpoints) == 0 {
		bad("no target: give -s HOST -p PORT, --target HOST:PORT[,HOST:PORT...] (or rdma://HOST:PORT) or -S/--unix-socket PATH")
	}
	if len(c.Endpoints) > maxTargets {
		bad("%d targets is more than the %d supported", len(c.Endpoints), maxTargets)
	}
	unavailable := map[transportwire.Name]bool{}
	for _, ep := range c.Endpoints {
		if err := ep.Validate(); err != nil {
			bad("target %s: %v", ep, err)
			continue
		}
		// One message per transport this build cannot use, not one per
		// endpoint: the transport seam says why and what to do.
		if available == nil {
			continue
		}
		if err := available(ep.Transport); err != nil && !unavailable[ep.Transport] {
			unavailable[ep.Transport] = true
			bad("target %s: %v", ep, err)
		}
	}
	if r := &c.RDMA; r.RxSize != 0 && (r.RxSize < 64<<10 || r.RxSize > 16<<20) {
		bad("--rdma-rx-size %d: want 65536..16777216 bytes (64 KiB..16 MiB), or 0 for the default", r.RxSize)
	}
	if r := &c.RDMA; r.InlineSize < 0 || r.InlineSize > 1024 {
		bad("--rdma-inline-size %d: want 0..1024 bytes", r.InlineSize)
	}
	if r := &c.RDMA; r.SQSize < 0 || r.SQSize > 65536 || r.RQSize < 0 || r.RQSize > 65536 {
		bad("--rdma-sq-size %d / --rdma-rq-size %d: want 1..65536, or 0 for the default", r.SQSize, r.RQSize)
	}
	if r := &c.RDMA; r.Poll < 0 || r.Poll > time.Second {
		bad("--rdma-poll-us %d: want 0..1000000", r.Poll/time.Microsecond)
	}
	if c.SourceAddr != "" && net.ParseIP(c.SourceAddr) == nil {
		bad("--source-address %q: want a numeric IPv4 or IPv6 address of this host (a name is not resolved)", c.SourceAddr)
	}
	if r := &c.RDMA; r.RetryCount < 0 || r.RetryCount > 7 {
		bad("--rdma-retry-count %d: want 0..7", r.RetryCount)
	}
	if r := &c.RDMA; r.CompletionVector < -1 || r.CompletionVector > 1023 {
		bad("--rdma-completion-vector %d: want -1 (automatic) or 0..1023", r.CompletionVector)
	}
	if c.Threads < 1 || c.Threads > maxClients {
		bad("--threads %d: want 1..%d", c.Threads, maxClients)
	}
	if c.Clients < 1 || c.Clients > maxClients {
		bad("--clients %d: want 1..%d connections per thread", c.Clients, maxClients)
	} else if c.Threads >= 1 && c.ConnsPerTarget() > maxClients {
		bad("--threads %d × --clients %d = %d connections per target; at most %d", c.Threads, c.Clients, c.ConnsPerTarget(), maxClients)
	}
	if c.Pipeline < 1 || c.Pipeline > maxPipeline {
		bad("--pipeline %d: want 1..%d requests in flight per connection", c.Pipeline, maxPipeline)
	}
	if c.Ratio.Set < 0 || c.Ratio.Get < 0 || c.Ratio.Set+c.Ratio.Get == 0 {
		bad("--ratio %s: want SET:GET, non-negative, not both zero", c.Ratio)
	}
	sizeModes := 0
	if len(c.DataSizeList) > 0 {
		sizeModes++
	}
	if !c.DataSizeRange.IsZero() {
		sizeModes++
		if c.DataSizeRange.Min < 1 || c.DataSizeRange.Max > maxDataSize {
			bad("--data-size-range %s: want sizes 1..%d bytes", c.DataSizeRange, maxDataSize)
		}
	}
	if sizeModes > 1 {
		bad("give one of --data-size, --data-size-range and --data-size-list")
	}
	if sizeModes == 0 && (c.DataSize < 1 || c.DataSize > maxDataSize) {
		bad("--data-size %d: want 1..%d bytes", c.DataSize, maxDataSize)
	}
	switch c.DataSizePattern {
	case "", "R", "S":
	default:
		bad("--data-size-pattern %q: want R (random within the range) or S (growing with the key)", c.DataSizePattern)
	}
	for _, sw := range c.DataSizeList {
		if sw.Size < 1 || sw.Size > maxDataSize || sw.Weight < 1 {
			bad("--data-size-list entry %d:%d: want size 1..%d and weight ≥ 1", sw.Size, sw.Weight, maxDataSize)
		}
	}
	if c.ExpirySeconds.Min < 0 || c.ExpirySeconds.Max < c.ExpirySeconds.Min {
		bad("--expiry-range %s: want MIN-MAX seconds, MIN <= MAX", c.ExpirySeconds)
	}
	if c.KeyMinimum < 0 || c.KeyMaximum < c.KeyMinimum {
		bad("--key-minimum %d / --key-maximum %d: want 0 <= minimum <= maximum", c.KeyMinimum, c.KeyMaximum)
	}
	if _, err := ParseKeyPattern(string(c.KeyPattern)); err != nil {
		bad("--key-pattern: %v", err)
	}
	if c.Requests < 0 || c.RequestsPerClient < 0 {
		bad("--requests / --requests-total: want a positive count")
	}
	if c.Requests > 0 && c.RequestsPerClient > 0 {
		bad("give --requests (per client, memtier's) or --requests-total, not both")
	}
	if c.Requests == 0 && c.RequestsPerClient == 0 && c.Duration <= 0 {
		bad("--test-time/--duration %s: want a positive duration (e.g. 30s), or give --requests N", c.Duration)
	}
	if c.Warmup < 0 {
		bad("--warmup %s: want 0 or a positive duration", c.Warmup)
	}
	if c.Rate < 0 {
		bad("--rate %g: want ops/s > 0, or 0 for as fast as possible", c.Rate)
	}
	if c.RateLimiting < 0 {
		bad("--rate-limiting %d: want ops/s per connection > 0, or 0 for as fast as possible", c.RateLimiting)
	}
	if c.Rate > 0 && c.RateLimiting > 0 {
		bad("give --rate (total) or --rate-limiting (per connection), not both")
	}
	if c.Runs < 1 {
		bad("--run-count %d: want at least 1", c.Runs)
	}
	for _, p := range c.Percentiles {
		if !(p > 0 && p <= 100) {
			bad("--print-percentiles: %g is not a percentile in (0, 100]", p)
		}
	}
	if c.SelectDB < 0 {
		bad("--select-db %d: want a database number ≥ 0", c.SelectDB)
	}
	switch c.Client {
	case ClientAuto, ClientLean, ClientGoRedis:
	default:
		bad("--client %q: want lean, go-redis or auto", c.Client)
	}
	if c.Protocol != 2 && c.Protocol != 3 {
		bad("--protocol %d: want resp2 or resp3", c.Protocol)
	}
	if c.ConnectTimeout < 0 {
		bad("--connect-timeout %s: want a positive duration (or 0: %v, %v for rdma:// targets)", c.ConnectTimeout, DefaultConnectTimeout, RDMAConnectTimeout)
	}
	if c.Interval < 10*time.Millisecond {
		bad("sample interval %s: want at least 10ms", c.Interval)
	}
	if k := c.Capacity; k != nil {
		if err := k.Validate(); err != nil {
			errs = append(errs, err)
		}
		if c.Rate > 0 || c.RateLimiting > 0 {
			bad("--capacity searches for the rate: give no --rate or --rate-limiting (--capacity-start-rate sets the first probe's)")
		}
		if c.Requests > 0 || c.RequestsPerClient > 0 {
			bad("--capacity probes for --duration each: give no request count")
		}
		if c.Runs != 1 {
			bad("--capacity runs probes, not --run-count runs: leave --run-count at 1 and repeat the search")
		}
		if c.JSONOutFile != "" || c.HDRFilePrefix != "" {
			bad("--capacity writes no --json-out-file or --hdr-file-prefix files: use --json for the probes and the result")
		}
		if k.Cap*2 > c.Duration {
			bad("--capacity cap %s with --duration %s: probes must last at least twice the cap", k.Cap, c.Duration)
		}
	}
	return errors.Join(errs...)
}

// Labels lists every target as it is named in results: "host:port" for
// TCP, "unix:/path" for sockets, the URL for others (rdma://host:port).
func (c *Config) Labels() []string {
	out := make([]string, len(c.Endpoints))
	for i, ep := range c.Endpoints {
		out[i] = ep.Label()
	}
	return out
}

// PasswordFromEnv fills Password from PasswordEnv when it is empty.
func (c *Config) PasswordFromEnv() {
	if c.Password == "" {
		c.Password = os.Getenv(PasswordEnv)
	}
}

// StartAt is the instant StartAtUnixMs names (zero when unset).
func (c *Config) StartAt() time.Time {
	if c.StartAtUnixMs == 0 {
		return time.Time{}
	}
	return time.UnixMilli(c.StartAtUnixMs)
}
