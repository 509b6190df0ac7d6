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
	if err := errors.Join(append(errs, c.Validate())...); err != nil {
		return c, warns, err
	}
	return c, warns, nil
}

// endpointArgs renders the endpoints: --target with the TCP ones as
// HOST:PORT (what memtier's users and older dpulab versions read) and the
// others as URLs, --unix-socket with the sockets' paths; all in --target
// when a socket comes before another endpoint, so the order reads back the
// same. Then the RDMA settings that differ from the defaults.
func (c *Config) endpointArgs() []string {
	var targets, sockets []string
	mixed := false
	for _, ep := range c.Endpoints {
		if ep.Transport == transport.Unix {
			sockets = append(sockets, ep.Address)
			continue
		}
		mixed = mixed || len(sockets) > 0
		targets = append(targets, ep.Label())
	}
	if mixed {
		targets, sockets = c.Labels(), nil
	}
	var a []string
	if len(targets) > 0 {
		a = append(a, "--target", strings.Join(targets, ","))
	}
	if len(sockets) > 0 {
		a = append(a, "--unix-socket", strings.Join(sockets, ","))
	}
	if c.SourceAddr != "" {
		a = append(a, "--source-address", c.SourceAddr)
	}
	r := &c.RDMA
	if r.UC {
		a = append(a, "--rdma-mode", "uc")
	}
	for _, f := range []struct {
		name string
		v    int
	}{
		{"--rdma-rx-size", r.RxSize}, {"--rdma-inline-size", r.InlineSize}, {"--rdma-sq-size", r.SQSize},
		{"--rdma-rq-size", r.RQSize}, {"--rdma-poll-us", int(r.Poll / time.Microsecond)},
		{"--rdma-retry-count", r.RetryCount}, {"--rdma-completion-vector", r.CompletionVector},
	} {
		if f.v != 0 {
			a = append(a, f.name, strconv.Itoa(f.v))
		}
	}
	return a
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

// formatPercentiles writes percentiles as --print-percentiles reads them.
func formatPercentiles(ps []float64) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = strconv.FormatFloat(p, 'g', -1, 64)
	}
	return strings.Join(parts, ",")
}

// Args renders the configuration as `dpulab bench` arguments (after the
// subcommand), for running it on a lab host: ParseArgs reads them back into
// the same Config. The password is never among them: pass it in the
// environment as PasswordEnv. The caller shell-quotes.
func (c *Config) Args() []string {
	a := c.endpointArgs()
	a = append(a,
		"--threads", strconv.Itoa(c.Threads),
		"--clients", strconv.Itoa(c.Clients),
		"--pipeline", strconv.Itoa(c.Pipeline),
		"--ratio", c.Ratio.String(),
	)
	switch {
	case len(c.DataSizeList) > 0:
		a = append(a, "--data-size-list", FormatSizeList(c.DataSizeList))
	case !c.DataSizeRange.IsZero():
		a = append(a, "--data-size-range", c.DataSizeRange.String())
	default:
		a = append(a, "--data-size", strconv.Itoa(c.DataSize))
	}
	if c.DataSizePattern != "" {
		a = append(a, "--data-size-pattern", c.DataSizePattern)
	}
	if !c.ExpirySeconds.IsZero() {
		a = append(a, "--expiry-range", c.ExpirySeconds.String())
	}
	a = append(a,
		"--key-minimum", strconv.FormatInt(c.KeyMinimum, 10),
		"--key-maximum", strconv.FormatInt(c.KeyMaximum, 10),
		"--key-prefix="+c.KeyPrefix,
		"--key-pattern", string(c.KeyPattern),
	)
	switch {
	case c.RequestsPerClient > 0:
		a = append(a, "--requests", strconv.FormatInt(c.RequestsPerClient, 10))
	case c.Requests > 0:
		a = append(a, "--requests-total", strconv.FormatInt(c.Requests, 10))
	default:
		a = append(a, "--duration", c.Duration.String())
	}
	if c.Warmup > 0 {
		a = append(a, "--warmup", c.Warmup.String())
	}
	if c.Rate > 0 {
		a = append(a, "--rate", strconv.FormatFloat(c.Rate, 'g', -1, 64))
	}
	if c.RateLimiting > 0 {
		a = append(a, "--rate-limiting", strconv.Itoa(c.RateLimiting))
	}
	if c.Prefill {
		a = append(a, "--prefill")
	}
	proto := "resp2"
	if c.Protocol == 3 {
		proto = "resp3"
	}
	a = append(a,
		"--run-count", strconv.Itoa(c.Runs),
		"--client", string(c.Client),
		"--protocol", proto,
		"--print-percentiles="+formatPercentiles(c.Percentiles),
	)
	if c.ConnectTimeout != 0 {
		a = append(a, "--connect-timeout", c.ConnectTimeout.String())
	}
	if c.Interval != time.Second {
		a = append(a, "--interval", c.Interval.String())
	}
	if c.TargetSamples {
		a = append(a, "--target-samples")
	}
	if c.StartAtUnixMs != 0 {
		a = append(a, "--start-at", strconv.FormatInt(c.StartAtUnixMs, 10))
	}
	if c.Seed != 0 {
		a = append(a, "--seed", strconv.FormatInt(c.Seed, 10))
	}
	if c.User != "" {
		a = append(a, "--user", c.User)
	}
	if c.SelectDB != 0 {
		a = append(a, "--select-db", strconv.Itoa(c.SelectDB))
	}
	if c.JSONOutFile != "" {
		a = append(a, "--json-out-file", c.JSONOutFile)
	}
	if c.HDRFilePrefix != "" {
		a = append(a, "--hdr-file-prefix", c.HDRFilePrefix)
	}
	if k := c.Capacity; k != nil {
		a = append(a, "--capacity", k.Objective(),
			"--capacity-precision", strconv.FormatFloat(k.Precision, 'g', -1, 64),
			"--capacity-start-rate", strconv.FormatFloat(k.StartRate, 'g', -1, 64))
		if k.MaxRate > 0 {
			a = append(a, "--capacity-max-rate", strconv.FormatFloat(k.MaxRate, 'g', -1, 64))
		}
	}
	return a
}
