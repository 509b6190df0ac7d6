package bench

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/redis/go-redis/v9"
)

// TestMemtierSemantics runs memtier command lines against two bundled
// servers (in-process) and counts what the servers got: -n is per client,
// and a target gets -t × -c connections.
func TestMemtierSemantics(t *testing.T) {
	a, b := startOurs(t), startOurs(t)
	ctx := context.Background()
	rdbs := []*redis.Client{}
	for _, addr := range []string{a, b} {
		r := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true})
		t.Cleanup(func() { r.Close() })
		rdbs = append(rdbs, r)
	}
	flush := func(t *testing.T) {
		for _, r := range rdbs {
			if err := r.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	host, port, _ := strings.Cut(a, ":")
	memtier := func(t *testing.T, extra ...string) (*collected, Config) {
		t.Helper()
		args := append([]string{"-s", host, "-p", port, "--target", b, "--seed", "1"}, extra...)
		cfg, _, err := ParseArgs(args)
		if err != nil {
			t.Fatalf("ParseArgs(%q): %v", args, err)
		}
		got, err := runCollect(t, ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return got, cfg
	}

	t.Run("requests per client × clients × threads", func(t *testing.T) {
		flush(t)
		// 2 threads × 3 clients × 50 requests = 300 SETs per target; with
		// P:P over keys 0..299 each target holds every key once.
		got, _ := memtier(t, "-t", "2", "-c", "3", "-n", "50", "--ratio", "1:0", "--key-pattern", "P:P", "--key-maximum", "299")
		r := got.runs[0]
		if got.start.Connections != 12 || r.Ops != 600 || r.Errors != 0 {
			t.Fatalf("connections %d, replies %d, errors %d; want 12 connections (2 targets × 2 threads × 3 clients), 600 replies", got.start.Connections, r.Ops, r.Errors)
		}
		for i, rdb := range rdbs {
			if n := rdb.DBSize(ctx).Val(); n != 300 {
				t.Errorf("target %d holds %d keys, want 300 (its 6 connections × 50, every key of 0..299 once)", i, n)
			}
			if r.Targets[i].Ops != 300 {
				t.Errorf("target %d: %d replies, want 300", i, r.Targets[i].Ops)
			}
		}
	})
	t.Run("ratio within each client", func(t *testing.T) {
		flush(t)
		got, _ := memtier(t, "-c", "4", "-n", "110", "--ratio", "1:10")
		r := got.runs[0]
		// Every connection does exactly 10 SETs and 100 GETs.
		if r.Ops != 880 || r.OpsByCmd["set"] != 80 || r.OpsByCmd["get"] != 800 {
			t.Errorf("ops %d by cmd %v; want 880 = 8 connections × 110, 80 SETs", r.Ops, r.OpsByCmd)
		}
	})
	t.Run("S walks the whole range per connection", func(t *testing.T) {
		flush(t)
		memtier(t, "-c", "3", "-n", "10", "--ratio", "1:0", "--key-pattern", "S:S", "--key-minimum", "100", "--key-maximum", "999")
		for i, rdb := range rdbs {
			keys := rdb.Keys(ctx, "*").Val()
			sort.Strings(keys)
			// All three connections write memtier-100 .. memtier-109.
			if len(keys) != 10 || keys[0] != "memtier-100" || keys[9] != "memtier-109" {
				t.Errorf("target %d keys %q; want memtier-100..memtier-109", i, keys)
			}
		}
	})
	t.Run("expiry, size pattern S, select-db", func(t *testing.T) {
		flush(t)
		memtier(t, "-c", "1", "-n", "11", "--ratio", "1:0", "--key-pattern", "P:P", "--key-maximum", "10",
			"--data-size-range", "100-200", "--data-size-pattern", "S", "--expiry-range", "500-500", "--select-db", "3")
		db3 := redis.NewClient(&redis.Options{Addr: a, Protocol: 2, DisableIdentity: true, DB: 3})
		defer db3.Close()
		if n := rdbs[0].DBSize(ctx).Val(); n != 0 {
			t.Errorf("db 0 holds %d keys; --select-db 3 should have left it empty", n)
		}
		for k, want := range map[string]int64{"memtier-0": 100, "memtier-5": 150, "memtier-10": 200} {
			if n := db3.StrLen(ctx, k).Val(); n != want {
				t.Errorf("STRLEN %s = %d, want %d (size growing with the key)", k, n, want)
			}
		}
		if ttl := db3.TTL(ctx, "memtier-3").Val().Seconds(); ttl < 400 || ttl > 500 {
			t.Errorf("TTL memtier-3 = %vs, want 500 (--expiry-range 500-500)", ttl)
		}
	})
}

// memtierSample is the structure of memtier_benchmark 2.x's --json-out-file
// for one run (values shortened, Time-Serie cut to two seconds), as its
// run_stats.cpp writes it: "configuration", then "ALL STATS" with Sets,
// Gets, Waits, Totals and Runtime.
const memtierSample = `{
  "configuration": {
    "server": "127.0.0.1", "port": 6379, "unix socket": "", "protocol": "redis",
    "run_count": 1, "requests": 0, "rate_limit": 0, "clients": 50, "threads": 4,
    "test_time": 10, "ratio": "1:10", "pipeline": 1, "data_size": 32,
    "data_size_range": "0-0", "data_size_list": "", "data_size_pattern": "R",
    "expiry_range": "0-0", "key_prefix": "memtier-", "key_minimum": 0,
    "key_maximum": 10000000, "key_pattern": "R:R", "authenticate": "", "select-db": 0
  },
  "ALL STATS": {
    "Sets": {
      "Count": 2283, "Ops/sec": 228.25, "Hits/sec": 0.00, "Misses/sec": 0.00,
      "Connection Errors/sec": 0.00, "Connection Errors": 0,
      "Latency": 0.512, "Average Latency": 0.512, "Accumulated Latency": 1169,
      "Min Latency": 0.103, "Max Latency": 3.071,
      "KB/sec": 17.35, "KB/sec RX/TX": 17.35, "KB/sec RX": 1.12, "KB/sec TX": 16.23,
      "Time-Serie": {
        "0": {"Bytes RX": 1150, "Bytes TX": 16650, "Count": 230, "Average Latency": 0.520,
              "Accumulated Latency": 119, "Min Latency": 0.103, "Max Latency": 3.071,
              "p50.00": 0.479, "p99.00": 1.167, "p99.90": 3.071},
        "1": {"Bytes RX": 1140, "Bytes TX": 16500, "Count": 228}
      },
      "Percentile Latencies": {"p50.00": 0.479, "p99.00": 1.167, "p99.90": 2.415,
        "Histogram log format": {"Compressed Histogram": "HISTFAAAA..."}}
    },
    "Gets": {
      "Count": 22810, "Ops/sec": 2280.55, "Hits/sec": 0.00, "Misses/sec": 2280.55,
      "Connection Errors/sec": 0.00, "Connection Errors": 0,
      "Latency": 0.505, "Average Latency": 0.505, "Accumulated Latency": 11519,
      "Min Latency": 0.087, "Max Latency": 3.247,
      "KB/sec": 88.81, "KB/sec RX/TX": 88.81, "KB/sec RX": 11.14, "KB/sec TX": 77.67,
      "Time-Serie": {"0": {"Bytes RX": 11500, "Bytes TX": 79500, "Count": 2300}},
      "Percentile Latencies": {"p50.00": 0.471, "p99.00": 1.143, "p99.90": 2.399,
        "Histogram log format": {"Compressed Histogram": "HISTFAAAA..."}}
    },
    "Waits": {
      "Count": 0, "Ops/sec": 0.00, "Hits/sec": 0.00, "Misses/sec": 0.00,
      "Connection Errors/sec": 0.00, "Connection Errors": 0,
      "Latency": 0.000, "Average Latency": 0.000, "Accumulated Latency": 0,
      "Min Latency": 0.000, "Max Latency": 0.000,
      "KB/sec": 0.00, "KB/sec RX/TX": 0.00, "KB/sec RX": 0.00, "KB/sec TX": 0.00,
      "Time-Serie": {},
      "Percentile Latencies": {"p50.00": 0.000, "p99.00": 0.000, "p99.90": 0.000,
        "Histogram log format": {"Compressed Histogram": "HISTFAAAA..."}}
    },
    "Totals": {
      "Count": 25093, "Ops/sec": 2508.80, "Hits/sec": 0.00, "Misses/sec": 2280.55,
      "Connection Errors/sec": 0.00, "Connection Errors": 0,
      "Latency": 0.506, "Average Latency": 0.506, "Accumulated Latency": 12688,
      "Min Latency": 0.087, "Max Latency": 3.247,
      "KB/sec": 106.16, "KB/sec RX/TX": 106.16, "KB/sec RX": 12.26, "KB/sec TX": 93.90,
      "Time-Serie": {"0": {"Bytes RX": 12650, "Bytes TX": 96150, "Count": 2530, "Average Latency": 0.506,
        "Accumulated Latency": 1280, "Min Latency": 0.087, "Max Latency": 3.247,
        "p50.00": 0.471, "p99.00": 1.151, "p99.90": 2.399}},
      "Percentile Latencies": {"p50.00": 0.471, "p99.00": 1.143, "p99.90": 2.399,
        "Histogram log format": {"Compressed Histogram": "HISTFAAAA..."}}
    },
    "Runtime": {"Start time": 1700000000000, "Finish time": 1700000010003,
      "Total duration": 10003, "Time unit": "MILLISECONDS", "Interrupted": false}
  }
}`

// memtierSampleExceptions are the sample's keys that dpulab leaves out, and
// why: it counts bytes per target, not per command, and writes no number
// it did not measure (Totals carries the bytes).
var memtierSampleExceptions = map[string]string{
	"ALL STATS/Sets/KB/sec":                "bytes per command",
	"ALL STATS/Sets/KB/sec RX/TX":          "bytes per command",
	"ALL STATS/Sets/KB/sec RX":             "bytes per command",
	"ALL STATS/Sets/KB/sec TX":             "bytes per command",
	"ALL STATS/Sets/Time-Serie/*/Bytes RX": "bytes per command",
	"ALL STATS/Sets/Time-Serie/*/Bytes TX": "bytes per command",
	"ALL STATS/Gets/KB/sec":                "bytes per command",
	"ALL STATS/Gets/KB/sec RX/TX":          "bytes per command",
	"ALL STATS/Gets/KB/sec RX":             "bytes per command",
	"ALL STATS/Gets/KB/sec TX":             "bytes per command",
	"ALL STATS/Gets/Time-Serie/*/Bytes RX": "bytes per command",
	"ALL STATS/Gets/Time-Serie/*/Bytes TX": "bytes per command",
	"ALL STATS/Waits/KB/sec":               "bytes per command",
	"ALL STATS/Waits/KB/sec RX/TX":         "bytes per command",
	"ALL STATS/Waits/KB/sec RX":            "bytes per command",
	"ALL STATS/Waits/KB/sec TX":            "bytes per command",
}

// shape flattens a JSON document into its key paths with the JSON kind of
// each value; Time-Serie's per-second keys become "*".
func shape(v any, path string, out map[string]string) {
	switch v := v.(type) {
	case map[string]any:
		out[path] = "object"
		for k, c := range v {
			key := k
			if strings.HasSuffix(path, "/Time-Serie") {
				key = "*"
			}
			p := key
			if path != "" {
				p = path + "/" + key
			}
			shape(c, p, out)
		}
	case float64:
		out[path] = "number"
	case string:
		out[path] = "string"
	case bool:
		out[path] = "bool"
	default:
		out[path] = "other"
	}
}

func TestJSONOutFileHasMemtierShape(t *testing.T) {
	var sample any
	if err := json.Unmarshal([]byte(memtierSample), &sample); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	shape(sample, "", want)

	dir := t.TempDir()
	cfg := testConfig(startOurs(t))
	cfg.Duration, cfg.Interval = 0, 100e6
	cfg.RequestsPerClient, cfg.RateLimiting = 300, 1000 // about 0.3 s: Time-Serie has seconds
	cfg.JSONOutFile = filepath.Join(dir, "out.json")
	got, err := runCollect(t, context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(cfg.JSONOutFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("--json-out-file is not JSON: %v", err)
	}
	have := map[string]string{}
	shape(doc, "", have)
	for p, kind := range want {
		if _, ok := memtierSampleExceptions[p]; ok {
			if _, there := have[p]; there {
				t.Errorf("%s is listed as left out but is there: update memtierSampleExceptions", p)
			}
			continue
		}
		if have[p] != kind {
			t.Errorf("memtier's %q (%s): ours has %q", p, kind, have[p])
		}
	}
	// The numbers agree with the run, and the histogram is HdrHistogram's.
	var m struct {
		All map[string]struct {
			Count  int64 `json:"Count"`
			Series map[string]struct {
				Count int64 `json:"Count"`
			} `json:"Time-Serie"`
			Pct struct {
				Log struct {
					H string `json:"Compressed Histogram"`
				} `json:"Histogram log format"`
			} `json:"Percentile Latencies"`
		} `json:"ALL STATS"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	r := got.runs[0]
	tot := m.All["Totals"]
	if tot.Count != r.Ops || tot.Count != 1200 || m.All["Sets"].Count+m.All["Gets"].Count != r.Ops {
		t.Errorf("Totals Count %d, Sets+Gets %d; run replies %d, want 4 clients × 300", tot.Count, m.All["Sets"].Count+m.All["Gets"].Count, r.Ops)
	}
	var series int64
	for _, s := range tot.Series {
		series += s.Count
	}
	if series != r.Ops {
		t.Errorf("Time-Serie counts sum to %d, want %d", series, r.Ops)
	}
	h, err := hdrhistogram.Decode([]byte(tot.Pct.Log.H))
	if err != nil || h.TotalCount() != r.Ops {
		t.Errorf("Compressed Histogram: %v, count %d; want %d", err, h.TotalCount(), r.Ops)
	}
}

func TestJSONOutFileRuns(t *testing.T) {
	cfg := testConfig(startOurs(t))
	cfg.Requests, cfg.Runs = 200, 3
	cfg.JSONOutFile = filepath.Join(t.TempDir(), "out.json")
	if _, err := runCollect(t, context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(cfg.JSONOutFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"configuration", "RUN #1 RESULTS", "RUN #2 RESULTS", "RUN #3 RESULTS", "BEST RUN RESULTS", "WORST RUN RESULTS", "AGGREGATED AVERAGE RESULTS (3 runs)"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("no %q in a 3-run --json-out-file (keys: %v)", k, keysOf(doc))
		}
	}
	if strings.Contains(string(b), "ALL STATS") {
		t.Errorf("a 3-run file has ALL STATS; memtier writes it for one run only")
	}
}

func keysOf(m map[string]json.RawMessage) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// TestHDRFilesRoundTrip reads --hdr-file-prefix's logs back with
// hdrhistogram-go's log reader: one interval per file, holding every reply.
func TestHDRFilesRoundTrip(t *testing.T) {
	cfg := testConfig(startOurs(t))
	cfg.Requests, cfg.Runs, cfg.Ratio = 440, 2, Ratio{Set: 1, Get: 10}
	prefix := filepath.Join(t.TempDir(), "lat")
	cfg.HDRFilePrefix = prefix
	got, err := runCollect(t, context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range got.runs {
		for file, want := range map[string]int64{
			"_FULL_RUN_%d.hgrm":        run.Ops,
			"_SET_command_run_%d.hgrm": run.OpsByCmd["set"],
			"_GET_command_run_%d.hgrm": run.OpsByCmd["get"],
		} {
			name := prefix + strings.Replace(file, "%d", string(rune('0'+run.Run)), 1)
			f, err := os.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			rd := hdrhistogram.NewHistogramLogReader(f)
			h, err := rd.NextIntervalHistogram()
			if err != nil || h == nil {
				t.Fatalf("%s: log reader: %v", name, err)
			}
			if h.TotalCount() != want || want == 0 {
				t.Errorf("%s: %d values, want %d", name, h.TotalCount(), want)
			}
			if h.ValueAtQuantile(50) < 1 || h.StartTimeMs() == 0 {
				t.Errorf("%s: p50 %d µs, start %d ms", name, h.ValueAtQuantile(50), h.StartTimeMs())
			}
			if next, err := rd.NextIntervalHistogram(); next != nil || (err != nil && !errors.Is(err, io.EOF)) {
				t.Errorf("%s: a second interval (%v, %v), want one per run", name, next, err)
			}
			f.Close()
		}
		txt, err := os.ReadFile(prefix + "_FULL_RUN_" + string(rune('0'+run.Run)) + ".txt")
		if err != nil || !strings.Contains(string(txt), "Value") || !strings.Contains(string(txt), "Percentile") {
			t.Errorf("percentile table: %v\n%s", err, txt)
		}
	}
}
