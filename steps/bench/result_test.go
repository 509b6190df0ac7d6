package bench

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestEncodeDecodeRoundTrip(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Targets = []string{"127.0.0.1:6379"}
	cfg.Password = "s3cret"
	events := []Event{
		&Start{Config: cfg, Client: "lean", Targets: cfg.Endpoints(), Connections: 50},
		&Sample{Run: 1, T: 1, OpsPerSec: 1000, OpsPerSecByCmd: map[string]float64{"get": 900, "set": 100},
			LatencyMs: Latency{Avg: 0.1, P50: 0.1, P90: 0.2, P99: 0.3, P999: 0.4, Max: 0.5}},
		&RunResult{Run: 1, Totals: Totals{Ops: 1000, OpsPerSec: 1000}, Targets: []TargetResult{{Target: "127.0.0.1:6379", Totals: Totals{Ops: 1000}}}},
		&Summary{Runs: 1, OpsPerSec: 1000, OpsPerSecStddev: 0},
	}
	var buf bytes.Buffer
	for _, ev := range events {
		if err := Encode(&buf, ev); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Contains(buf.String(), "s3cret") {
		t.Fatalf("password leaked into the stream: %s", buf.String())
	}
	for i, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		want := `{"type":"` + events[i].EventType() + `"`
		if !strings.HasPrefix(line, want) {
			t.Errorf("line %d = %.60s..., want it to start with %s", i+1, line, want)
		}
	}
	// An unknown type and a blank line in between are skipped.
	in := strings.Replace(buf.String(), "\n", "\n\n{\"type\":\"future\",\"x\":1}\n", 1)
	var got []Event
	if err := Decode(strings.NewReader(in), func(ev Event) error { got = append(got, ev); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(events) {
		t.Fatalf("decoded %d events, want %d", len(got), len(events))
	}
	s := got[1].(*Sample)
	if s.OpsPerSecByCmd["get"] != 900 || s.LatencyMs.P999 != 0.4 {
		t.Errorf("sample decoded wrong: %+v", s)
	}
	r := got[2].(*RunResult)
	if r.Ops != 1000 || len(r.Targets) != 1 || r.Targets[0].Target != "127.0.0.1:6379" {
		t.Errorf("run decoded wrong: %+v", r)
	}
	st := got[0].(*Start)
	if st.Config.Ratio != (Ratio{1, 10}) || st.Config.Duration != cfg.Duration {
		t.Errorf("start config decoded wrong: %+v", st.Config)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"not json", "hello\n", "line 1"},
		{"bad field", `{"type":"sample","ops_per_sec":"fast"}`, "sample line"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Decode(strings.NewReader(tc.in), func(Event) error { return nil })
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
	stop := errors.New("stop")
	err := Decode(strings.NewReader(`{"type":"summary","runs":1}`), func(Event) error { return stop })
	if !errors.Is(err, stop) {
		t.Fatalf("callback error not returned: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	ok := DefaultConfig()
	ok.Targets = []string{"127.0.0.1:6379"}
	if err := ok.Validate(); err != nil {
		t.Fatalf("default config with a target: %v", err)
	}
	tests := []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"no target", func(c *Config) { c.Targets = nil }, "no target"},
		{"bad target", func(c *Config) { c.Targets = []string{"localhost"} }, "HOST:PORT"},
		{"bad port", func(c *Config) { c.Targets = []string{"h:99999"} }, "port"},
		{"clients", func(c *Config) { c.Clients = 0 }, "--clients"},
		{"pipeline", func(c *Config) { c.Pipeline = 0 }, "--pipeline"},
		{"pattern", func(c *Config) { c.KeyPattern = "zipf" }, "--key-pattern"},
		{"duration", func(c *Config) { c.Duration = 0 }, "--duration"},
		{"protocol", func(c *Config) { c.Protocol = 4 }, "--protocol"},
		{"client", func(c *Config) { c.Client = "hiredis" }, "--client"},
		{"runs", func(c *Config) { c.Runs = 0 }, "--run-count"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.mod(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestParseRatioAndSizes(t *testing.T) {
	if r, err := ParseRatio("1:10"); err != nil || r != (Ratio{1, 10}) {
		t.Errorf("ParseRatio(1:10) = %v, %v", r, err)
	}
	for _, bad := range []string{"", "1", "0:0", "-1:2", "a:b"} {
		if _, err := ParseRatio(bad); err == nil {
			t.Errorf("ParseRatio(%q) accepted", bad)
		}
	}
	l, err := ParseSizeList("32,256:3,4096")
	if err != nil || len(l) != 3 || l[1] != (SizeWeight{256, 3}) || l[2].Weight != 1 {
		t.Errorf("ParseSizeList = %v, %v", l, err)
	}
	if FormatSizeList(l) != "32:1,256:3,4096:1" {
		t.Errorf("FormatSizeList = %q", FormatSizeList(l))
	}
	for _, bad := range []string{"", "0", "32:0", "x"} {
		if _, err := ParseSizeList(bad); err == nil {
			t.Errorf("ParseSizeList(%q) accepted", bad)
		}
	}
}
