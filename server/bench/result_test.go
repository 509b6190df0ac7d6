package bench

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestEncodeDecodeRoundTrip(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Endpoints = tcpEndpoints("127.0.0.1:6379")
	cfg.Password = "s3cret"
	events := []Event{
		&Start{Config: cfg, Client: "lean", Targets: cfg.Labels(), Connections: 50},
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
	if st.Config.Ratio != (Ratio{Set: 1, Get: 10}) || st.Config.Duration != cfg.Duration {
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
	ok.Endpoints = tcpEndpoints("127.0.0.1:6379")
	if err := ok.Validate(); err != nil {
		t.Fatalf("default config with a target: %v", err)
	}
	tests := []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"no target", func(c *Config) { c.Endpoints = nil }, "no target"},
		{"bad target", func(c *Config) { c.Endpoints = tcpEndpoints("localhost") }, "HOST:PORT"},
		{"bad port", func(c *Config) { c.Endpoints = tcpEndpoints("h:99999") }, "port"},
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
	if r, err := ParseRatio("1:10"); err != nil || r != (Ratio{Set: 1, Get: 10}) {
		t.Errorf("ParseRatio(1:10) = %v, %v", r, err)
	}
	for _, bad := range []string{"", "1", "0:0", "-1:2", "a:b"} {
		if _, err := ParseRatio(bad); err == nil {
			t.Errorf("ParseRatio(%q) accepted", bad)
		}
	}
	l, err := ParseSizeList("32,256:3,4096")
	if err != nil || len(l) != 3 || l[1] != (SizeWeight{Size: 256, Weight: 3}) || l[2].Weight != 1 {
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

// TestParseLineReadsSchema1 decodes lines an earlier dpulab on a lab host
// writes (no header, units not in the names) into the same fields.
func TestParseLineReadsSchema1(t *testing.T) {
	lines := []string{
		`{"type":"start","config":{"targets":["h:1"],"clients":5,"pipeline":1,"ratio":"1:10","data_size":256,"key_maximum":100,"key_prefix":"k","key_pattern":"sequential","duration_ns":1000000000,"requests":500,"rate":250,"runs":1,"client":"auto","protocol":2,"connect_timeout_ns":5000000000,"interval_ns":1000000000},"client":"lean","targets":["h:1"],"connections":5}`,
		`{"type":"prefill","keys":100,"seconds":0.25}`,
		`{"type":"sample","run":1,"t":2,"ops_per_sec":10,"ops_per_sec_by_cmd":{},"latency_ms":{"avg":1,"p50":1,"p90":1,"p99":1,"p999":1,"max":1},"errors":0,"bytes_sent_per_sec":0,"bytes_recv_per_sec":0}`,
		`{"type":"run","run":1,"seconds":3.5,"ops":35,"ops_by_cmd":{},"ops_per_sec":10,"ops_per_sec_by_cmd":{},"latency_ms":{"avg":1,"p50":1,"p90":1,"p99":1,"p999":1,"max":1},"errors":0,"hits":0,"misses":0,"bytes_sent":0,"bytes_recv":0,"bytes_sent_per_sec":0,"bytes_recv_per_sec":0,"targets":[{"target":"h:1","seconds":3.5,"ops":35}]}`,
	}
	var evs []Event
	for _, l := range lines {
		ev, err := ParseLine([]byte(l))
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		evs = append(evs, ev)
	}
	c := evs[0].(*Start).Config
	if c.DataSize != 256 || c.Requests != 500 || c.Rate != 250 || c.KeyPattern != KeyParallel {
		t.Errorf("schema-1 config read as data size %d, requests %d, rate %g, pattern %s", c.DataSize, c.Requests, c.Rate, c.KeyPattern)
	}
	if p := evs[1].(*Prefill); p.Seconds != 0.25 {
		t.Errorf("prefill seconds %g", p.Seconds)
	}
	if s := evs[2].(*Sample); s.T != 2 {
		t.Errorf("sample t %g", s.T)
	}
	if r := evs[3].(*RunResult); r.Seconds != 3.5 || r.Targets[0].Seconds != 3.5 {
		t.Errorf("run seconds %g, target %g", r.Seconds, r.Targets[0].Seconds)
	}
	// And the current form round-trips through Encode.
	var b bytes.Buffer
	for _, ev := range append([]Event{StreamHeader()}, evs...) {
		if err := Encode(&b, ev); err != nil {
			t.Fatal(err)
		}
	}
	for _, unitless := range []string{`"t":`, `"seconds":`, `"data_size":`, `"requests":`, `"rate":`} {
		if strings.Contains(b.String(), unitless) {
			t.Errorf("schema-2 output has %s:\n%s", unitless, b.String())
		}
	}
	n := 0
	if err := Decode(&b, func(ev Event) error {
		if n == 0 {
			if h, ok := ev.(*Header); !ok || h.SchemaVersion != SchemaVersion || h.Stream != "bench" {
				t.Errorf("first event %#v, want the header", ev)
			}
		}
		n++
		return nil
	}); err != nil || n != 5 {
		t.Errorf("decode: %v, %d events", err, n)
	}
}
