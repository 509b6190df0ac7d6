package bench

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestArgs(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Targets = []string{"10.0.0.7:6379", "10.0.0.7:6380"}
	cfg.UnixSockets = []string{"/run/r.sock"}
	cfg.Password = "s3cret"
	cfg.Requests, cfg.Rate, cfg.Prefill, cfg.Warmup = 1000, 2500.5, true, 2*time.Second
	cfg.DataSizeList = []SizeWeight{{32, 1}, {4096, 3}}
	cfg.KeyPrefix = ""
	a := cfg.Args()
	joined := strings.Join(a, " ")
	if strings.Contains(joined, "s3cret") {
		t.Fatalf("password in argv: %s", joined)
	}
	for _, want := range [][]string{
		{"--target", "10.0.0.7:6379,10.0.0.7:6380"},
		{"--unixsocket", "/run/r.sock"},
		{"--requests", "1000"},
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
