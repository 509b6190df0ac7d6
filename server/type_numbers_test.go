package server

import (
	"math"
	"testing"
)

func TestParseRedisInt(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"-1", -1, true}, {"123", 123, true},
		{"9223372036854775807", math.MaxInt64, true}, {"-9223372036854775808", math.MinInt64, true},
		{"9223372036854775808", 0, false}, {"-9223372036854775809", 0, false},
		{"99999999999999999999", 0, false}, {"-0", 0, false}, {"01", 0, false}, {"+1", 0, false},
		{" 1", 0, false}, {"1 ", 0, false}, {"", 0, false}, {"-", 0, false}, {"1.0", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := parseRedisInt([]byte(tt.in))
			if ok != tt.ok || got != tt.want {
				t.Fatalf("parseRedisInt(%q) = %d %v, want %d %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestParseRedisDouble(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"1.5", 1.5, true}, {"-2", -2, true}, {".5", 0.5, true}, {"5.", 5, true}, {"1e3", 1000, true},
		{"inf", math.Inf(1), true}, {"-INF", math.Inf(-1), true}, {"+infinity", math.Inf(1), true},
		{"0x10", 16, true}, {"0x1p-2", 0.25, true}, {"1e", 0, false}, {"nan", 0, false},
		{"", 0, false}, {" 1", 0, false}, {"1 ", 0, false}, {"abc", 0, false}, {"1e400", 0, false},
		{"1e-400", 0, false}, {"0e10", 0, true}, {"1_0", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := parseRedisDouble([]byte(tt.in))
			if ok != tt.ok || (ok && got != tt.want) {
				t.Fatalf("parseRedisDouble(%q) = %v %v, want %v %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestParseScoreBound(t *testing.T) {
	tests := []struct {
		in     string
		want   float64
		ex, ok bool
	}{
		{"(1", 1, true, true}, {"1", 1, false, true}, {"(", 0, true, true}, {"", 0, false, true},
		{" 2", 2, false, true}, {"-inf", math.Inf(-1), false, true}, {"(+inf", math.Inf(1), true, true},
		{"x", 0, false, false}, {"(nan", 0, false, false}, {"1e400", math.Inf(1), false, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			v, ex, ok := parseScoreBound([]byte(tt.in))
			if ok != tt.ok || (ok && (v != tt.want || ex != tt.ex)) {
				t.Fatalf("parseScoreBound(%q) = %v %v %v, want %v %v %v", tt.in, v, ex, ok, tt.want, tt.ex, tt.ok)
			}
		})
	}
}

// TestLongDoubleMatchesRedis checks sums whose printed form differs between
// float64 and x87 long double, against what redis-server 7.0 replies.
func TestLongDoubleMatchesRedis(t *testing.T) {
	tests := []struct {
		steps []string
		want  string
	}{
		{[]string{"0.1", "0.2"}, "0.3"},
		{[]string{"0.1", "0.2", "-0.3"}, "0"},
		{[]string{"0.1", "0.2", "-0.3", "1e10", "1.5e-3"}, "10000000000.00150000024586916"},
		{[]string{"9223372036854775798", "2.5"}, "9223372036854775800.5"},
		{[]string{"3.0e3"}, "3000"},
		{[]string{"-0.5"}, "-0.5"},
		{[]string{"0x10"}, "16"},
		{[]string{"10", "-10"}, "0"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			acc, _ := parseLongDouble([]byte("0"))
			for _, s := range tt.steps {
				inc, ok := parseLongDouble([]byte(s))
				if !ok {
					t.Fatalf("parseLongDouble(%q) failed", s)
				}
				acc, ok = addLongDouble(acc, inc)
				if !ok {
					t.Fatalf("add %q overflowed", s)
				}
				// Redis stores the printed value and parses it back next time.
				acc, _ = parseLongDouble([]byte(formatLongDoubleHuman(acc)))
			}
			if got := formatLongDoubleHuman(acc); got != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
		})
	}
	for _, bad := range []string{"", " 1", "nan", "abc", "1e5000", "1e-5000", "1_0", "1e10000000", "1e-99999999999999999999", "0.0001e+000000030000"} {
		if _, ok := parseLongDouble([]byte(bad)); ok {
			t.Errorf("parseLongDouble(%q) accepted", bad)
		}
	}
	if _, ok := parseLongDouble([]byte("1e4000")); !ok {
		t.Error("1e4000 fits a long double but was rejected")
	}
	if f, ok := parseLongDouble([]byte("0e99999999")); !ok || f.Sign() != 0 {
		t.Error("0e99999999 is zero but was rejected")
	}
}
