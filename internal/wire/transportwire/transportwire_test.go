package transportwire

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseEndpoint(t *testing.T) {
	for _, tc := range []struct {
		in    string
		want  Endpoint
		url   string
		label string
	}{
		{"127.0.0.1:6379", Endpoint{Transport: TCP, Address: "127.0.0.1:6379"}, "tcp://127.0.0.1:6379", "127.0.0.1:6379"},
		{"tcp://redis-a:7000", Endpoint{Transport: TCP, Address: "redis-a:7000"}, "tcp://redis-a:7000", "redis-a:7000"},
		{"TCP://[::1]:6379", Endpoint{Transport: TCP, Address: "[::1]:6379"}, "tcp://[::1]:6379", "[::1]:6379"},
		{"unix:///run/r.sock", Endpoint{Transport: Unix, Address: "/run/r.sock"}, "unix:///run/r.sock", "unix:/run/r.sock"},
		{"unix:/run/r.sock", Endpoint{Transport: Unix, Address: "/run/r.sock"}, "unix:///run/r.sock", "unix:/run/r.sock"},
		{"/tmp/x.sock", Endpoint{Transport: Unix, Address: "/tmp/x.sock"}, "unix:///tmp/x.sock", "unix:/tmp/x.sock"},
		{"./x.sock", Endpoint{Transport: Unix, Address: "./x.sock"}, "unix://./x.sock", "unix:./x.sock"},
		{"rdma://10.0.0.2:6379", Endpoint{Transport: RDMA, Address: "10.0.0.2:6379"}, "rdma://10.0.0.2:6379", "rdma://10.0.0.2:6379"},
		{" rdma://[fe80::1]:6380 ", Endpoint{Transport: RDMA, Address: "[fe80::1]:6380"}, "rdma://[fe80::1]:6380", "rdma://[fe80::1]:6380"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			ep, err := ParseEndpoint(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if ep != tc.want || ep.String() != tc.url || ep.Label() != tc.label {
				t.Fatalf("got %#v %q %q, want %#v %q %q", ep, ep.String(), ep.Label(), tc.want, tc.url, tc.label)
			}
			// Both written forms read back to the same endpoint.
			for _, s := range []string{ep.String(), ep.Label()} {
				if back, err := ParseEndpoint(s); err != nil || back != ep {
					t.Errorf("ParseEndpoint(%q) = %#v, %v; want %#v", s, back, err, ep)
				}
			}
		})
	}
}

func TestParseEndpointRefuses(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "want HOST:PORT"},
		{"localhost", "want HOST:PORT"},
		{":6379", "want HOST:PORT"},
		{"127.0.0.1:0", "port \"0\" must be 1..65535"},
		{"127.0.0.1:70000", "must be 1..65535"},
		{"rdma://10.0.0.2", "rdma endpoint \"10.0.0.2\": want HOST:PORT"},
		{"unix://", "without a path"},
		{"quic://h:1", `transport "quic": unknown transport: want one of rdma, tcp, unix`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			_, err := ParseEndpoint(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ParseEndpoint(%q) = %v, want an error containing %q", tc.in, err, tc.want)
			}
		})
	}
}

func TestEndpointJSON(t *testing.T) {
	in := []Endpoint{TCPEndpoint("h:1"), UnixEndpoint("/s"), RDMAEndpoint("10.0.0.2:6379")}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `["tcp://h:1","unix:///s","rdma://10.0.0.2:6379"]` {
		t.Fatalf("JSON %s", b)
	}
	var out []Endpoint
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if len(out) != 3 || out[0] != in[0] || out[1] != in[1] || out[2] != in[2] {
		t.Fatalf("read back %v", out)
	}
	if err := json.Unmarshal([]byte(`["sctp://h:1"]`), &out); !errors.Is(err, ErrUnknown) {
		t.Fatalf("unknown transport in JSON: %v", err)
	}
}
