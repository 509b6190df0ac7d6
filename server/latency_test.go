package server

import (
	"regexp"
	"strings"
	"testing"
)

// TestLatencyLevels: the bucket labels are Redis's (1024 ns × 2^k at two
// significant digits, in µs), and a duration lands where Redis's
// iterator counts it.
func TestLatencyLevels(t *testing.T) {
	var labels []int64
	for i := 0; i < 8; i++ {
		labels = append(labels, levelHigh(i)/1000)
	}
	if got, want := labels, []int64{1, 2, 4, 8, 16, 33, 66, 132}; !equalInts(got, want) {
		t.Errorf("labels %v, want %v", got, want)
	}
	for _, tc := range []struct{ usec, label int64 }{{0, 1}, {1, 1}, {2, 2}, {3, 4}, {16, 16}, {17, 33}, {33, 33}, {34, 66}, {5_000_000, 1_082_130}} {
		var h latencyHist
		h.record(tc.usec)
		for i, v := range h {
			if v == 1 && levelHigh(i)/1000 != tc.label {
				t.Errorf("%d µs counted at %d, want %d", tc.usec, levelHigh(i)/1000, tc.label)
			}
		}
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestLatencyHistogram: per-command calls and cumulative counts, in
// RESP2 and RESP3, subcommands by full name, and INFO latencystats.
func TestLatencyHistogram(t *testing.T) {
	c, _ := newTestServer(t)
	for i := 0; i < 5; i++ {
		c.must(`"OK"`, "SET", "k", "v")
	}
	got := c.do("LATENCY", "HISTOGRAM", "set")
	m := regexp.MustCompile(`^\*\["set" \*\["calls" \(integer\) 5 "histogram_usec" \*\[((?:\(integer\) \d+ ?)+)\]\]\]$`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("LATENCY HISTOGRAM set: %s", got)
	}
	nums := strings.Fields(strings.ReplaceAll(m[1], "(integer)", ""))
	if nums[len(nums)-1] != "5" {
		t.Errorf("last cumulative count %s, want 5: %s", nums[len(nums)-1], got)
	}
	c.do("CONFIG", "GET", "x")
	if got := c.do("LATENCY", "HISTOGRAM", "config"); !strings.HasPrefix(got, `*["config|get" *["calls" (integer) 1 "histogram_usec" *[`) {
		t.Errorf("LATENCY HISTOGRAM config: %s", got)
	}
	c.do("HELLO", "3")
	if got := c.do("LATENCY", "HISTOGRAM", "set"); !strings.HasPrefix(got, `%["set" %["calls" (integer) 5 "histogram_usec" %[`) {
		t.Errorf("RESP3 LATENCY HISTOGRAM set: %s", got)
	}
	c.must(`"OK"`, "CONFIG", "SET", "latency-tracking-info-percentiles", "50 99.9")
	info := c.do("INFO", "latencystats")
	if !regexp.MustCompile(`# Latencystats\\r\\n(.*\\r\\n)*latency_percentiles_usec_set:p50=\d+\.\d{3},p99\.9=\d+\.\d{3}\\r\\n`).MatchString(info) {
		t.Errorf("INFO latencystats: %s", info)
	}
	c.must(`"OK"`, "CONFIG", "SET", "latency-tracking", "no")
	c.must(`"OK"`, "SET", "k", "v")
	if got := c.do("LATENCY", "HISTOGRAM", "set"); !strings.HasPrefix(got, `%["set" %["calls" (integer) 5 `) {
		t.Errorf("with latency-tracking no, SET was counted: %s", got)
	}
}
