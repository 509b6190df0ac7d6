package bench

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/dpulab/dpulab/server/transport"
)

// Flags binds the flags of `dpulab bench` to a flag set: memtier_benchmark's
// names with memtier's meanings, then dpulab's own. NewFlags registers them,
// Config reads them back after parsing. Config.Args emits flags that Config
// reads back into the same Config (args_test.go holds both ends).
type Flags struct {
	fs  *pflag.FlagSet
	cfg Config

	server                                 string
	port                                   int
	targets, sockets, oldSockets           string
	auth, password                         string
	ratio, keyPattern, sizeList, sizeRange string
	expiry, protocol, client, percentiles  string
	testTime                               int
	oldRuns                                int
	rdmaMode                               string
	rdmaPollUS                             int
	capacity                               string
	startAt                                string
	capPrecision, capStart, capMax         float64
}

// NewFlags registers the bench flags on fs, with DefaultConfig's defaults.
func NewFlags(fs *pflag.FlagSet) *Flags {
	f := &Flags{fs: fs, cfg: DefaultConfig()}
	c := &f.cfg
	// memtier_benchmark's flags, memtier's meanings.
	fs.StringVarP(&f.server, "server", "s", "localhost", "server host (memtier); with -p, one target HOST:PORT")
	fs.IntVarP(&f.port, "port", "p", 6379, "server port (memtier)")
	fs.StringVarP(&f.sockets, "unix-socket", "S", "", "Unix socket path(s) of the server(s), comma-separated (memtier)")
	fs.StringVarP(&f.auth, "authenticate", "a", "", "PASSWORD or USER:PASSWORD for AUTH (memtier; visible in ps: prefer the environment variable "+PasswordEnv+")")
	fs.IntVarP(&c.Threads, "threads", "t", c.Threads, "threads per target (memtier): connections per target = threads × clients")
	fs.IntVarP(&c.Clients, "clients", "c", c.Clients, "clients per thread (memtier)")
	fs.Int64VarP(&c.RequestsPerClient, "requests", "n", 0, "requests per client, i.e. per connection (memtier); replies = requests × clients × threads × targets")
	fs.IntVar(&f.testTime, "test-time", 0, "seconds measured per run (memtier; same as --duration Ns)")
	fs.IntVarP(&c.Runs, "run-count", "x", c.Runs, "number of full-test iterations (memtier); the summary gives mean, stddev, min, max")
	fs.StringVar(&f.ratio, "ratio", c.Ratio.String(), "SET:GET ratio (memtier; 1:10 = one SET per ten GETs)")
	fs.StringVar(&f.keyPattern, "key-pattern", string(c.KeyPattern), "SET:GET key pattern, R random, S sequential, G gaussian, P parallel (memtier)")
	fs.Int64Var(&c.KeyMinimum, "key-minimum", c.KeyMinimum, "smallest key number (memtier)")
	fs.Int64Var(&c.KeyMaximum, "key-maximum", c.KeyMaximum, "largest key number, included (memtier)")
	fs.StringVar(&c.KeyPrefix, "key-prefix", c.KeyPrefix, "prefix of every key (memtier)")
	fs.IntVarP(&c.DataSize, "data-size", "d", c.DataSize, "value size in bytes (memtier)")
	fs.StringVar(&f.sizeRange, "data-size-range", "", "value sizes MIN-MAX bytes, drawn as --data-size-pattern says (memtier)")
	fs.StringVar(&c.DataSizePattern, "data-size-pattern", "", "R: uniform within --data-size-range; S: growing with the key number (memtier; default R)")
	fs.StringVar(&f.sizeList, "data-size-list", "", "weighted mix of value sizes, SIZE[:WEIGHT],... (memtier)")
	fs.StringVar(&f.expiry, "expiry-range", "", "SETs expire after MIN-MAX seconds, drawn uniformly (memtier; 0 = no expiry)")
	fs.IntVar(&c.RateLimiting, "rate-limiting", 0, "ops/s per connection (memtier); latency counts from when each request was due")
	fs.StringVar(&f.percentiles, "print-percentiles", "50,99,99.9", "latency percentiles to report (memtier)")
	fs.StringVar(&c.JSONOutFile, "json-out-file", "", "write the results to FILE in memtier's JSON shape (memtier)")
	fs.StringVar(&c.HDRFilePrefix, "hdr-file-prefix", "", "write HdrHistogram log files PREFIX_FULL_RUN_N.hgrm, ... (memtier)")
	fs.IntVar(&c.SelectDB, "select-db", 0, "database number to SELECT on every connection (memtier)")
	fs.StringVarP(&f.protocol, "protocol", "P", "resp2", "resp2 or resp3 (memtier; redis = resp2)")
	fs.IntVar(&c.Pipeline, "pipeline", c.Pipeline, "requests in flight per connection (memtier; redis-benchmark's -P N)")
	// dpulab's own.
	fs.StringVar(&f.targets, "target", "", "the server(s), comma-separated: HOST:PORT (TCP), rdma://HOST:PORT, unix:///PATH or tcp://HOST:PORT; many targets at once")
	fs.StringVar(&f.rdmaMode, "rdma-mode", "rc", "queue pair of rdma:// targets: rc (reliable-connected, Valkey's) or uc (unreliable-connected, dpulab's)")
	fs.IntVar(&c.RDMA.RxSize, "rdma-rx-size", 0, "receive buffer per rdma connection in bytes (0: 1 MiB, the server's default)")
	fs.IntVar(&c.RDMA.InlineSize, "rdma-inline-size", 0, "largest send posted inline on rdma, bytes")
	fs.IntVar(&c.RDMA.SQSize, "rdma-sq-size", 0, "send queue depth of rdma connections (0: 1024)")
	fs.IntVar(&c.RDMA.RQSize, "rdma-rq-size", 0, "receive queue depth of rdma connections (0: 1024)")
	fs.IntVar(&f.rdmaPollUS, "rdma-poll-us", 0, "microseconds to spin on the rdma completion queue before sleeping")
	fs.IntVar(&c.RDMA.RetryCount, "rdma-retry-count", 0, "RC retry count, 1..7 (0: 7)")
	fs.IntVar(&c.RDMA.CompletionVector, "rdma-completion-vector", 0, "completion vector of rdma connections")
	fs.StringVar(&c.SourceAddr, "source-address", "", "make every connection from this local IP address (tcp and rdma: over rdma it picks the device the connection leaves by)")
	fs.DurationVar(&c.Duration, "duration", c.Duration, "measured time per run, e.g. 30s, 2m (instead of --test-time)")
	fs.Int64Var(&c.Requests, "requests-total", 0, "requests per run in total over all connections (instead of --requests)")
	fs.Float64Var(&c.Rate, "rate", 0, "fixed total rate in ops/s over all connections (instead of --rate-limiting)")
	fs.DurationVar(&c.Warmup, "warmup", 0, "unmeasured load before each run")
	fs.BoolVar(&c.Prefill, "prefill", false, "write every key once before the first run, so GETs hit")
	fs.StringVar(&c.User, "user", "", "ACL user for AUTH (the password from "+PasswordEnv+")")
	fs.StringVar(&f.password, "password", "", "AUTH password (visible in ps: prefer "+PasswordEnv+")")
	fs.StringVar(&f.client, "client", string(c.Client), "client path: lean (pipelined, allocation-free), go-redis, or auto (= lean)")
	fs.DurationVar(&c.ConnectTimeout, "connect-timeout", 0, "time allowed to connect (and authenticate) to each target (default 5s, 30s for rdma:// targets)")
	fs.DurationVar(&c.Interval, "interval", c.Interval, "sampling interval")
	fs.BoolVar(&c.TargetSamples, "target-samples", false, "with --json, also print a sample per target per interval")
	fs.StringVar(&f.startAt, "start-at", "", "connect first, then send the first request at this instant: Unix time in milliseconds on this host's clock, e.g. $(( $(date +%s%3N) + 3000 )); refused when more than 5s past or 60s ahead (several client hosts starting together)")
	fs.Int64Var(&c.Seed, "seed", 0, "seed for key and size choices (0 = from the clock)")
	dc := DefaultCapacity()
	fs.StringVar(&f.capacity, "capacity", "", "capacity search: the highest --rate that keeps a latency percentile under a cap, e.g. p99<=1ms (quote it in a shell); --duration per probe")
	fs.Float64Var(&f.capPrecision, "capacity-precision", dc.Precision, "capacity search: stop when the lowest failing rate is within this fraction of the highest passing one")
	fs.Float64Var(&f.capStart, "capacity-start-rate", dc.StartRate, "capacity search: the first probe's rate in ops/s (then doubled or halved)")
	fs.Float64Var(&f.capMax, "capacity-max-rate", 0, "capacity search: the highest rate to probe, ops/s (0 = no limit)")
	// Spellings of earlier versions that collide with nothing of memtier's.
	fs.StringVar(&f.oldSockets, "unixsocket", "", "same as --unix-socket")
	fs.IntVar(&f.oldRuns, "runs", 0, "same as --run-count")
	_ = fs.MarkHidden("unixsocket")
	_ = fs.MarkHidden("runs")
	return f
}

// ParseArgs parses bench arguments (as Config.Args makes them, or as a
// person types them) into a Config, with the warnings Flags.Config gives.
func ParseArgs(args []string) (Config, []string, error) {
	fs := pflag.NewFlagSet("bench", pflag.ContinueOnError)
	fs.SetOutput(discard{})
	f := NewFlags(fs)
	if err := fs.Parse(args); err != nil {
		return Config{}, nil, err
	}
	if fs.NArg() > 0 {
		return Config{}, nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return f.Config()
}

// timeNow is the clock --start-at is checked against (a test's own).
var timeNow = time.Now

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// Config returns the configuration the parsed flags describe, validated.
// Every problem is reported at once. Warnings are for the person at the
// terminal (a password on the command line).
func (f *Flags) Config() (Config, []string, error) {
	c := f.cfg
	var errs []error
	var warns []string
	changed := f.fs.Changed
	c.Endpoints = nil
	if changed("server") || changed("port") || (f.targets == "" && f.sockets == "" && f.oldSockets == "") {
		// memtier's default target is localhost:6379.
		c.Endpoints = append(c.Endpoints, transport.TCPEndpoint(net.JoinHostPort(f.server, strconv.Itoa(f.port))))
	}
	for _, s := range splitList(f.targets) {
		ep, err := transport.ParseEndpoint(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("--target %q: %w", s, err))
			continue
		}
		c.Endpoints = append(c.Endpoints, ep)
	}
	for _, p := range append(splitList(f.sockets), splitList(f.oldSockets)...) {
		c.Endpoints = append(c.Endpoints, transport.UnixEndpoint(p))
	}
	switch strings.ToLower(f.rdmaMode) {
	case "rc", "reliable-connected":
		c.RDMA.UC = false
	case "uc", "unreliable-connected":
		c.RDMA.UC = true
	default:
		errs = append(errs, fmt.Errorf("--rdma-mode %q: want rc (reliable-connected) or uc (unreliable-connected)", f.rdmaMode))
	}
	c.RDMA.Poll = time.Duration(f.rdmaPollUS) * time.Microsecond
	if r, err := ParseRatio(f.ratio); err != nil {
		errs = append(errs, err)
	} else {
		c.Ratio = r
	}
	if kp, err := ParseKeyPattern(f.keyPattern); err != nil {
		errs = append(errs, err)
	} else {
		c.KeyPattern = kp
	}
	if f.sizeList != "" {
		if l, err := ParseSizeList(f.sizeList); err != nil {
			errs = append(errs, err)
		} else {
			c.DataSizeList = l
		}
	}
	if f.sizeRange != "" {
		if r, err := ParseRange(f.sizeRange); err != nil {
			errs = append(errs, fmt.Errorf("--data-size-range: %w", err))
		} else {
			c.DataSizeRange = r
		}
	}
	if changed("data-size") && (f.sizeList != "" || f.sizeRange != "") {
		errs = append(errs, errors.New("give one of --data-size, --data-size-range and --data-size-list"))
	}
	if f.expiry != "" {
		if r, err := ParseRange(f.expiry); err != nil {
			errs = append(errs, fmt.Errorf("--expiry-range: %w", err))
		} else {
			c.ExpirySeconds = r
		}
	}
	if changed("test-time") {
		if changed("duration") {
			errs = append(errs, errors.New("give --test-time or --duration, not both"))
		}
		if f.testTime < 1 {
			errs = append(errs, fmt.Errorf("--test-time %d: want seconds ≥ 1", f.testTime))
		}
		c.Duration = time.Duration(f.testTime) * time.Second
	}
	if (changed("requests") || changed("requests-total")) && (changed("duration") || changed("test-time")) {
		errs = append(errs, errors.New("give a request count (--requests/--requests-total) or a time (--test-time/--duration), not both"))
	}
	if changed("runs") {
		if changed("run-count") {
			errs = append(errs, errors.New("give --run-count (or --runs), not both"))
		}
		c.Runs = f.oldRuns
	}
	if p, err := ParseProtocol(f.protocol); err != nil {
		errs = append(errs, err)
	} else {
		c.Protocol = p
	}
	c.Client = ClientKind(f.client)
	if changed("print-percentiles") {
		c.Percentiles = nil
		for _, s := range splitList(f.percentiles) {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				errs = append(errs, fmt.Errorf("--print-percentiles %q: %q is not a number", f.percentiles, s))
				continue
			}
			c.Percentiles = append(c.Percentiles, v)
		}
	}
	if f.auth != "" && f.password != "" {
		errs = append(errs, errors.New("give -a/--authenticate or --password, not both"))
	}
	if f.auth != "" {
		// memtier's USER:PASSWORD form for ACL users.
		if u, p, ok := strings.Cut(f.auth, ":"); ok && c.User == "" {
			c.User, c.Password = u, p
		} else {
			c.Password = f.auth
		}
		warns = append(warns, "-a/--authenticate puts the password on the command line, where other users of this host can read it (ps); set "+PasswordEnv+" instead")
	}
	if f.password != "" {
		c.Password = f.password
		warns = append(warns, "--password puts the password on the command line, where other users of this host can read it (ps); set "+PasswordEnv+" instead")
	}
	if ms, err := ParseStartAt(f.startAt); err != nil {
		errs = append(errs, err)
	} else if err := checkStartAt(ms, timeNow()); err != nil {
		errs = append(errs, err)
	} else {
		c.StartAtUnixMs = ms
	}
	c.Capacity = nil
	if changed("capacity") {
		spec, err := ParseCapacity(f.capacity)
		if err != nil {
			errs = append(errs, fmt.Errorf("--capacity: %w", err))
		}
		spec.Precision, spec.StartRate, spec.MaxRate = f.capPrecision, f.capStart, f.capMax
		c.Capacity = &spec
	} else if changed("capacity-precision") || changed("capacity-start-rate") || changed("capacity-max-rate") {
		errs = append(errs, errors.New("--capacity-precision, --capacity-start-rate and --capacity-max-rate go with --capacity OBJECTIVE (e.g. p99<=1ms)"))
	}
	if err := errors.Join(append(errs, validate(&c))...); err != nil {
		return c, warns, err
	}
	return c, warns, nil
}

// ParseProtocol reads memtier's --protocol: resp2 (or redis, its default)
// and resp3; 2 and 3 as earlier dpulab versions wrote them.
func ParseProtocol(s string) (int, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "resp2", "redis", "2":
		return 2, nil
	case "resp3", "3":
		return 3, nil
	case "memcache_text", "memcache_binary":
		return 0, fmt.Errorf("--protocol %s: dpulab bench speaks Redis only (resp2 or resp3)", s)
	}
	if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
		return 0, fmt.Errorf("-P/--protocol %q: want resp2 or resp3 (-P is memtier's --protocol; for redis-benchmark's pipeline -P %d, give --pipeline %d)", s, n, n)
	}
	return 0, fmt.Errorf("--protocol %q: want resp2 or resp3", s)
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
