package bench

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// PasswordEnv is the environment variable `dpulab bench` reads the password
// from when --password is not given, so that it never has to appear in argv
// (visible in ps on a shared lab host). The step engine uses it.
const PasswordEnv = "DPULAB_BENCH_PASSWORD"

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

// KeyPattern is how keys are chosen from [0, KeyMaximum).
type KeyPattern string

const (
	// KeyRandom draws keys uniformly.
	KeyRandom KeyPattern = "random"
	// KeySequential walks the key space in order; each client walks its own
	// contiguous slice of it, so together they cover every key once per pass.
	KeySequential KeyPattern = "sequential"
	// KeyGaussian draws keys from a normal distribution centred on the middle
	// of the key space with a standard deviation of a sixth of it (memtier's
	// defaults), clamped to the key space: a hot middle, cold edges.
	KeyGaussian KeyPattern = "gaussian"
)

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
	Size   int `json:"size"`
	Weight int `json:"weight"`
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
type Config struct {
	// firstReplyLatency gives every request of a pipeline the latency of
	// its first reply, as redis-benchmark does: the perf test's like-for-
	// like check of the two tools' latency figures. Never set otherwise.
	firstReplyLatency bool

	// Targets are TCP endpoints, HOST:PORT. Clients are spread over them:
	// every target gets Clients connections.
	Targets []string `json:"targets,omitempty"`
	// UnixSockets are Unix socket paths, used like Targets.
	UnixSockets []string `json:"unix_sockets,omitempty"`
	// Clients is the number of connections per target (default 50,
	// redis-benchmark's default and memtier's per thread).
	Clients int `json:"clients"`
	// Pipeline is how many requests each connection keeps in flight
	// (default 1: send, wait for the reply, send the next).
	Pipeline int `json:"pipeline"`
	// Ratio is SET:GET (default 1:10, memtier's).
	Ratio Ratio `json:"ratio"`
	// DataSize is the SET value size in bytes (default 32, memtier's).
	DataSize int `json:"data_size"`
	// DataSizeList, when set, overrides DataSize with a weighted mix of value
	// sizes within every run, as memtier's --data-size-list does: each SET
	// draws its size with probability weight/sum(weights). For one run per
	// size, invoke bench once per size (the lab's compare sweep does that).
	DataSizeList []SizeWeight `json:"data_size_list,omitempty"`
	// KeyMaximum is the size of the key space: keys are
	// KeyPrefix + decimal number in [0, KeyMaximum) (default 1,000,000).
	KeyMaximum int64 `json:"key_maximum"`
	// KeyPrefix prefixes every key (default "memtier-", memtier's, so that
	// key spaces written by either tool are the same).
	KeyPrefix string `json:"key_prefix"`
	// KeyPattern is random (default), sequential or gaussian.
	KeyPattern KeyPattern `json:"key_pattern"`
	// Duration is how long each run is measured (default 10s). Ignored
	// when Requests is set.
	Duration time.Duration `json:"duration_ns"`
	// Requests, when > 0, makes each run exactly this many requests in total
	// across all connections (and as many replies) instead of a duration.
	Requests int64 `json:"requests,omitempty"`
	// Warmup runs load for this long before each run's measurement starts;
	// nothing of it is counted.
	Warmup time.Duration `json:"warmup_ns,omitempty"`
	// Rate, when > 0, holds the total request rate (ops/s across all
	// connections) fixed. Latency is then measured from the moment each
	// request was due, not when it was sent, so a stalled server shows up in
	// the latency instead of hiding (coordinated omission).
	Rate float64 `json:"rate,omitempty"`
	// Prefill writes every key of the key space once (sequential SETs, not
	// measured) before the first run, so that GETs hit.
	Prefill bool `json:"prefill,omitempty"`
	// Runs repeats the whole run (default 1); the summary gives mean,
	// stddev, min and max across runs.
	Runs int `json:"runs"`
	// Password is sent with AUTH on every connection. Never printed or
	// encoded; see PasswordEnv.
	Password string `json:"-"`
	// Client selects the client path (default auto = lean).
	Client ClientKind `json:"client"`
	// Protocol is the RESP version, 2 (default, what redis-benchmark and
	// memtier speak) or 3 (HELLO 3 on connect).
	Protocol int `json:"protocol"`
	// ConnectTimeout bounds connecting (and AUTH/HELLO) to each target
	// (default 5s); an unreachable target fails the bench within it.
	ConnectTimeout time.Duration `json:"connect_timeout_ns"`
	// Interval is the sampling interval (default 1s).
	Interval time.Duration `json:"interval_ns"`
	// TargetSamples adds a per-target sample per interval to the totals.
	TargetSamples bool `json:"target_samples,omitempty"`
	// Seed seeds the key and size choices; 0 picks one from the clock.
	Seed int64 `json:"seed,omitempty"`
}

// DefaultConfig returns the defaults documented on Config's fields (no
// target: the caller must name one).
func DefaultConfig() Config {
	return Config{
		Clients:        50,
		Pipeline:       1,
		Ratio:          Ratio{Set: 1, Get: 10},
		DataSize:       32,
		KeyMaximum:     1_000_000,
		KeyPrefix:      "memtier-",
		KeyPattern:     KeyRandom,
		Duration:       10 * time.Second,
		Runs:           1,
		Client:         ClientAuto,
		Protocol:       2,
		ConnectTimeout: 5 * time.Second,
		Interval:       time.Second,
	}
}

// Limits that keep a typo from exhausting the machine.
const (
	maxClients  = 10_000
	maxPipeline = 100_000
	maxDataSize = 512 << 20
	maxTargets  = 4096
)

// Validate checks the configuration and says how to fix what is wrong.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if len(c.Targets)+len(c.UnixSockets) == 0 {
		bad("no target: give --target HOST:PORT[,HOST:PORT...] or --unixsocket PATH")
	}
	if len(c.Targets)+len(c.UnixSockets) > maxTargets {
		bad("%d targets is more than the %d supported", len(c.Targets)+len(c.UnixSockets), maxTargets)
	}
	for _, t := range c.Targets {
		host, port, err := net.SplitHostPort(t)
		if err != nil || host == "" {
			bad("target %q: want HOST:PORT (e.g. 127.0.0.1:6379; [::1]:6379 for IPv6)", t)
			continue
		}
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			bad("target %q: port %q must be 1..65535", t, port)
		}
	}
	for _, p := range c.UnixSockets {
		if p == "" {
			bad("empty --unixsocket path")
		}
	}
	if c.Clients < 1 || c.Clients > maxClients {
		bad("--clients %d: want 1..%d connections per target", c.Clients, maxClients)
	}
	if c.Pipeline < 1 || c.Pipeline > maxPipeline {
		bad("--pipeline %d: want 1..%d requests in flight per connection", c.Pipeline, maxPipeline)
	}
	if c.Ratio.Set < 0 || c.Ratio.Get < 0 || c.Ratio.Set+c.Ratio.Get == 0 {
		bad("--ratio %s: want SET:GET, non-negative, not both zero", c.Ratio)
	}
	if len(c.DataSizeList) == 0 && (c.DataSize < 1 || c.DataSize > maxDataSize) {
		bad("--data-size %d: want 1..%d bytes", c.DataSize, maxDataSize)
	}
	for _, sw := range c.DataSizeList {
		if sw.Size < 1 || sw.Size > maxDataSize || sw.Weight < 1 {
			bad("--data-size-list entry %d:%d: want size 1..%d and weight ≥ 1", sw.Size, sw.Weight, maxDataSize)
		}
	}
	if c.KeyMaximum < 1 {
		bad("--key-maximum %d: want at least 1 key", c.KeyMaximum)
	}
	switch c.KeyPattern {
	case KeyRandom, KeySequential, KeyGaussian:
	default:
		bad("--key-pattern %q: want random, sequential or gaussian", c.KeyPattern)
	}
	if c.Requests < 0 {
		bad("--requests %d: want a positive count (or 0 to use --duration)", c.Requests)
	}
	if c.Requests == 0 && c.Duration <= 0 {
		bad("--duration %s: want a positive duration (e.g. 30s), or give --requests N", c.Duration)
	}
	if c.Warmup < 0 {
		bad("--warmup %s: want 0 or a positive duration", c.Warmup)
	}
	if c.Rate < 0 {
		bad("--rate %g: want ops/s > 0, or 0 for as fast as possible", c.Rate)
	}
	if c.Runs < 1 {
		bad("--runs %d: want at least 1", c.Runs)
	}
	switch c.Client {
	case ClientAuto, ClientLean, ClientGoRedis:
	default:
		bad("--client %q: want lean, go-redis or auto", c.Client)
	}
	if c.Protocol != 2 && c.Protocol != 3 {
		bad("--protocol %d: want 2 or 3", c.Protocol)
	}
	if c.ConnectTimeout <= 0 {
		bad("--connect-timeout %s: want a positive duration", c.ConnectTimeout)
	}
	if c.Interval < 10*time.Millisecond {
		bad("sample interval %s: want at least 10ms", c.Interval)
	}
	return errors.Join(errs...)
}

// Endpoints lists every target as it is named in results: "host:port" for
// TCP, "unix:/path" for sockets.
func (c *Config) Endpoints() []string {
	out := make([]string, 0, len(c.Targets)+len(c.UnixSockets))
	out = append(out, c.Targets...)
	for _, p := range c.UnixSockets {
		out = append(out, "unix:"+p)
	}
	return out
}

// Args renders the configuration as `dpulab bench` arguments (after the
// subcommand), for running it on a lab host. The password is never among
// them: pass it in the environment as PasswordEnv. The caller shell-quotes.
func (c *Config) Args() []string {
	a := []string{}
	if len(c.Targets) > 0 {
		a = append(a, "--target", strings.Join(c.Targets, ","))
	}
	if len(c.UnixSockets) > 0 {
		a = append(a, "--unixsocket", strings.Join(c.UnixSockets, ","))
	}
	a = append(a,
		"--clients", strconv.Itoa(c.Clients),
		"--pipeline", strconv.Itoa(c.Pipeline),
		"--ratio", c.Ratio.String(),
	)
	if len(c.DataSizeList) > 0 {
		a = append(a, "--data-size-list", FormatSizeList(c.DataSizeList))
	} else {
		a = append(a, "--data-size", strconv.Itoa(c.DataSize))
	}
	a = append(a,
		"--key-maximum", strconv.FormatInt(c.KeyMaximum, 10),
		"--key-prefix="+c.KeyPrefix,
		"--key-pattern", string(c.KeyPattern),
	)
	if c.Requests > 0 {
		a = append(a, "--requests", strconv.FormatInt(c.Requests, 10))
	} else {
		a = append(a, "--duration", c.Duration.String())
	}
	if c.Warmup > 0 {
		a = append(a, "--warmup", c.Warmup.String())
	}
	if c.Rate > 0 {
		a = append(a, "--rate", strconv.FormatFloat(c.Rate, 'g', -1, 64))
	}
	if c.Prefill {
		a = append(a, "--prefill")
	}
	a = append(a,
		"--runs", strconv.Itoa(c.Runs),
		"--client", string(c.Client),
		"--protocol", strconv.Itoa(c.Protocol),
		"--connect-timeout", c.ConnectTimeout.String(),
	)
	if c.Interval != time.Second {
		a = append(a, "--interval", c.Interval.String())
	}
	if c.TargetSamples {
		a = append(a, "--target-samples")
	}
	if c.Seed != 0 {
		a = append(a, "--seed", strconv.FormatInt(c.Seed, 10))
	}
	return a
}

// PasswordFromEnv fills Password from PasswordEnv when it is empty.
func (c *Config) PasswordFromEnv() {
	if c.Password == "" {
		c.Password = os.Getenv(PasswordEnv)
	}
}
