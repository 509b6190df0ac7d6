package bench

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestArgs(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Endpoints = append(tcpEndpoints("10.0.0.7:6379", "10.0.0.7:6380"), unixEndpoints("/run/r.sock")...)
	cfg.Password = "s3cret"
	cfg.Requests, cfg.Rate, cfg.Prefill, cfg.Warmup = 1000, 2500.5, true, 2*time.Second
	cfg.DataSizeList = []SizeWeight{{Size: 32, Weight: 1}, {Size: 4096, Weight: 3}}
	cfg.KeyPrefix = ""
	a := cfg.Args()
	joined := strings.Join(a, " ")
	if strings.Contains(joined, "s3cret") {
		t.Fatalf("password in argv: %s", joined)
	}
	for _, want := range [][]string{
		{"--target", "10.0.0.7:6379,10.0.0.7:6380"},
		{"--unix-socket", "/run/r.sock"},
		{"--requests-total", "1000"},
		{"--rate", "2500.5"},
		{"--data-size-list", "32:1,4096:3"},
		{"--warmup", "2s"},
		{"--prefill"},
		{"--key-prefix="},
	} {
		i := slices.Index(a, want[0])
		if i < 0 || (len(want) == 2 && (i+1 >= len(a) || a[i+1] != want[1])) {
			t.Errorf("Args() = %q lacks %q", a, want)
		}
	}
	if slices.Contains(a, "--duration") || slices.Contains(a, "--data-size") {
		t.Errorf("Args() = %q gives both --requests/--duration or both size flags", a)
	}
}

// TestArgsRoundTrip holds the engine's contract: whatever Config.Args
// emits parses back (ParseArgs, the flags of `dpulab bench`) into the same
// Config, password aside (it travels in the environment).
func TestArgsRoundTrip(t *testing.T) {
	base := func() Config {
		c := DefaultConfig()
		c.Endpoints = tcpEndpoints("10.0.0.7:6379", "[::1]:6380")
		return c
	}
	cases := map[string]func(*Config){
		"defaults": func(*Config) {},
		"total requests, rate, list": func(c *Config) {
			c.Endpoints = append(c.Endpoints, unixEndpoints("/run/r.sock")...)
			c.Requests, c.Rate, c.Prefill, c.Warmup = 1000, 2500.5, true, 2*time.Second
			c.DataSizeList = []SizeWeight{{Size: 32, Weight: 1}, {Size: 4096, Weight: 3}}
			c.KeyPrefix, c.Seed, c.TargetSamples, c.Interval = "", 7, true, 250*time.Millisecond
		},
		"memtier": func(c *Config) {
			c.Threads, c.Clients, c.RequestsPerClient, c.RateLimiting = 4, 25, 10000, 100
			c.KeyPattern, c.KeyMinimum, c.KeyMaximum = "S:G", 10, 5000
			c.DataSizeRange, c.DataSizePattern, c.ExpirySeconds = Range{Min: 32, Max: 1024}, "S", Range{Min: 5, Max: 60}
			c.Percentiles, c.SelectDB, c.User, c.Protocol = []float64{50, 99.99}, 3, "bench", 3
			c.Runs, c.Pipeline, c.Client = 3, 16, ClientGoRedis
			c.JSONOutFile, c.HDRFilePrefix = "/tmp/out.json", "/tmp/hdr"
		},
		"capacity search": func(c *Config) {
			c.Capacity = &CapacitySpec{Percentile: 99.9, Cap: 500 * time.Microsecond, Precision: 0.02, StartRate: 2500, MaxRate: 1e6}
			c.Duration, c.Warmup = 5*time.Second, time.Second
		},
		"unix only, no percentiles": func(c *Config) {
			c.Endpoints, c.Percentiles = unixEndpoints("/a.sock", "/b.sock"), nil
			c.Duration = 90 * time.Second
		},
	}
	for name, mod := range cases {
		t.Run(name, func(t *testing.T) {
			want := base()
			mod(&want)
			if err := want.Validate(); err != nil {
				t.Fatal(err)
			}
			want.Password = "s3cret"
			got, warns, err := ParseArgs(want.Args())
			if err != nil {
				t.Fatalf("ParseArgs(%q): %v", want.Args(), err)
			}
			if len(warns) > 0 {
				t.Errorf("warnings for Args(): %q", warns)
			}
			want.Password = ""
			if !reflect.DeepEqual(got, want) {
				t.Errorf("round trip of %q:\n got %+v\nwant %+v", want.Args(), got, want)
			}
		})
	}
}

// TestMemtierFlags checks memtier's spellings and meanings, and the old
// spellings that collide with none of them.
func TestMemtierFlags(t *testing.T) {
	parse := func(t *testing.T, args ...string) (Config, []string) {
		t.Helper()
		c, warns, err := ParseArgs(args)
		if err != nil {
			t.Fatalf("ParseArgs(%q): %v", args, err)
		}
		return c, warns
	}
	t.Run("memtier line", func(t *testing.T) {
		c, _ := parse(t, "-s", "127.0.0.1", "-p", "7000", "-t", "4", "-c", "50", "-n", "10000", "-x", "3",
			"--ratio=1:4", "--key-pattern=G:G", "--key-minimum=1", "--key-maximum=100000", "-d", "256",
			"--expiry-range=10-20", "--rate-limiting=500", "--print-percentiles=50,90,99.9", "--select-db=2",
			"-P", "resp3", "--pipeline=8", "--json-out-file=o.json", "--hdr-file-prefix=h")
		want := Config{Endpoints: tcpEndpoints("127.0.0.1:7000"), Threads: 4, Clients: 50, RequestsPerClient: 10000, Runs: 3,
			Ratio: Ratio{Set: 1, Get: 4}, KeyPattern: KeyGaussian, KeyMinimum: 1, KeyMaximum: 100000, DataSize: 256,
			ExpirySeconds: Range{Min: 10, Max: 20}, RateLimiting: 500, Percentiles: []float64{50, 90, 99.9}, SelectDB: 2,
			Protocol: 3, Pipeline: 8, JSONOutFile: "o.json", HDRFilePrefix: "h"}
		got := Config{Endpoints: c.Endpoints, Threads: c.Threads, Clients: c.Clients, RequestsPerClient: c.RequestsPerClient, Runs: c.Runs,
			Ratio: c.Ratio, KeyPattern: c.KeyPattern, KeyMinimum: c.KeyMinimum, KeyMaximum: c.KeyMaximum, DataSize: c.DataSize,
			ExpirySeconds: c.ExpirySeconds, RateLimiting: c.RateLimiting, Percentiles: c.Percentiles, SelectDB: c.SelectDB,
			Protocol: c.Protocol, Pipeline: c.Pipeline, JSONOutFile: c.JSONOutFile, HDRFilePrefix: c.HDRFilePrefix}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got  %+v\nwant %+v", got, want)
		}
		if c.ConnsPerTarget() != 200 {
			t.Errorf("-t 4 -c 50 = %d connections per target, want 200", c.ConnsPerTarget())
		}
	})
	t.Run("memtier default target", func(t *testing.T) {
		c, _ := parse(t)
		if !reflect.DeepEqual(c.Endpoints, tcpEndpoints("localhost:6379")) {
			t.Errorf("targets %q, want memtier's localhost:6379", c.Endpoints)
		}
		c, _ = parse(t, "-S", "/run/redis.sock")
		if !reflect.DeepEqual(c.Endpoints, unixEndpoints("/run/redis.sock")) {
			t.Errorf("-S: targets %q", c.Endpoints)
		}
	})
	t.Run("test-time", func(t *testing.T) {
		c, _ := parse(t, "--test-time=30")
		if c.Duration != 30*time.Second || c.RequestsPerClient != 0 {
			t.Errorf("--test-time=30: duration %s requests %d", c.Duration, c.RequestsPerClient)
		}
	})
	t.Run("authenticate warns", func(t *testing.T) {
		c, warns := parse(t, "-a", "alice:pw:with:colons")
		if c.User != "alice" || c.Password != "pw:with:colons" || len(warns) != 1 || !strings.Contains(warns[0], PasswordEnv) {
			t.Errorf("-a USER:PASS: user %q password %q warnings %q", c.User, c.Password, warns)
		}
		c, _ = parse(t, "--authenticate=plain")
		if c.User != "" || c.Password != "plain" {
			t.Errorf("-a PASS: user %q password %q", c.User, c.Password)
		}
	})
	t.Run("old spellings", func(t *testing.T) {
		c, _ := parse(t, "--unixsocket", "/s", "--runs", "4", "--key-pattern", "sequential", "--protocol", "3")
		if !reflect.DeepEqual(c.Endpoints, unixEndpoints("/s")) || c.Runs != 4 || c.KeyPattern != KeyParallel || c.Protocol != 3 {
			t.Errorf("old spellings: sockets %q runs %d pattern %s protocol %d", c.Endpoints, c.Runs, c.KeyPattern, c.Protocol)
		}
	})
	t.Run("capacity", func(t *testing.T) {
		c, _ := parse(t, "--capacity", "p99<=1ms", "--duration", "5s")
		if c.Capacity == nil || *c.Capacity != DefaultCapacity() {
			t.Errorf("--capacity p99<=1ms: %+v, want %+v", c.Capacity, DefaultCapacity())
		}
		c, _ = parse(t, "--capacity=p99.9<=200us", "--capacity-start-rate=50000", "--capacity-precision=0.1")
		if k := c.Capacity; k == nil || k.Percentile != 99.9 || k.Cap != 200*time.Microsecond || k.StartRate != 50000 || k.Precision != 0.1 {
			t.Errorf("--capacity=p99.9<=200us ...: %+v", k)
		}
	})
	if _, _, err := ParseArgs([]string{"-P", "16"}); err == nil || !strings.Contains(err.Error(), "--pipeline 16") {
		t.Errorf("-P 16: %v; want it to say redis-benchmark's -P is --pipeline", err)
	}
	for _, bad := range [][]string{
		{"-P", "16"},                     // redis-benchmark's pipeline: memtier's protocol
		{"--key-pattern", "P:R"},         // P on one side only
		{"--key-pattern", "Z:Z"},         // not ours
		{"-n", "10", "--test-time", "5"}, // both
		{"--rate", "10", "--rate-limiting", "5"},
		{"--data-size-range", "10-5"},
		{"-d", "10", "--data-size-range", "10-50"},
		{"-a", "x", "--password", "y"},
		{"--protocol", "memcache_text"},
		{"-t", "100", "-c", "200"}, // 20,000 connections
		{"--capacity", "p99<=1ms", "--rate", "1000"},
		{"--capacity", "p99<=1ms", "-n", "100"},
		{"--capacity", "p99<=1ms", "-x", "3"},
		{"--capacity", "p99<=1ms", "--json-out-file", "o.json"},
		{"--capacity", "p99<=3s", "--duration", "5s"}, // a probe shorter than twice the cap
		{"--capacity", "p99"},
		{"--capacity", "p99<=1ms", "--capacity-precision", "0.9"},
		{"--capacity", "p99<=1ms", "--capacity-start-rate", "5000", "--capacity-max-rate", "1000"},
		{"--capacity-precision", "0.01"}, // without --capacity
	} {
		if _, _, err := ParseArgs(bad); err == nil {
			t.Errorf("ParseArgs(%q) accepted", bad)
		}
	}
}
