package bench

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/server/rdma"
	"github.com/dpulab/dpulab/server/transport"
)

func tcpEndpoints(addrs ...string) []transport.Endpoint {
	out := make([]transport.Endpoint, len(addrs))
	for i, a := range addrs {
		out[i] = transport.TCPEndpoint(a)
	}
	return out
}

func unixEndpoints(paths ...string) []transport.Endpoint {
	out := make([]transport.Endpoint, len(paths))
	for i, p := range paths {
		out[i] = transport.UnixEndpoint(p)
	}
	return out
}

// TestEndpointFlags: --target takes every transport's endpoint, and
// Config.Args gives them back in their order, with the RDMA settings.
func TestEndpointFlags(t *testing.T) {
	c, _, err := ParseArgs([]string{"--target", "10.0.0.7:6379,tcp://10.0.0.8:6379,unix:///run/a.sock,rdma://10.0.0.9:6379", "-S", "/run/b.sock",
		"--rdma-mode", "uc", "--rdma-rx-size", "2097152", "--rdma-poll-us", "20", "--rdma-inline-size", "256"})
	want := []transport.Endpoint{transport.TCPEndpoint("10.0.0.7:6379"), transport.TCPEndpoint("10.0.0.8:6379"),
		transport.UnixEndpoint("/run/a.sock"), transport.RDMAEndpoint("10.0.0.9:6379"), transport.UnixEndpoint("/run/b.sock")}
	if transport.Available(transport.RDMA) != nil {
		// A build without RDMA parses rdma:// but refuses to use it, with
		// the seam's message.
		if err == nil || !strings.Contains(err.Error(), "RDMA is not in this build") {
			t.Fatalf("rdma target in a build without it: %v", err)
		}
		if strings.Count(err.Error(), "RDMA is not in this build") != 1 {
			t.Errorf("one message per transport, got %v", err)
		}
	} else if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Endpoints, want) {
		t.Fatalf("endpoints %v, want %v", c.Endpoints, want)
	}
	r := transport.RDMAOptions{UC: true, RxSize: 2 << 20, Poll: 20_000, InlineSize: 256}
	if c.RDMA != r {
		t.Fatalf("rdma settings %+v, want %+v", c.RDMA, r)
	}
	args := c.Args()
	joined := strings.Join(args, " ")
	if !strings.Contains(joined, "--target 10.0.0.7:6379,10.0.0.8:6379,unix:/run/a.sock,rdma://10.0.0.9:6379,unix:/run/b.sock") {
		t.Errorf("Args() = %s", joined)
	}
	back, _, _ := ParseArgs(args)
	if !reflect.DeepEqual(back.Endpoints, want) || back.RDMA != r {
		t.Errorf("round trip: %v %+v", back.Endpoints, back.RDMA)
	}

	for _, tc := range []struct{ args, want string }{
		{"--target quic://h:1", `--target "quic://h:1": endpoint "quic://h:1": transport "quic": unknown transport: want one of rdma, tcp, unix`},
		{"--target rdma://h", "want HOST:PORT"},
		{"--target h:1 --rdma-mode dc", `--rdma-mode "dc": want rc`},
		{"--target h:1 --rdma-rx-size 100", "--rdma-rx-size 100"},
		{"--target h:1 --rdma-retry-count 9", "--rdma-retry-count 9"},
	} {
		if _, _, err := ParseArgs(strings.Fields(tc.args)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestConfigJSONEndpoints: a start line carries the endpoints as URLs and,
// as before, the TCP ones as "targets" and the Unix ones as
// "unix_sockets"; a line of an older dpulab (no "endpoints") reads back.
func TestConfigJSONEndpoints(t *testing.T) {
	c := DefaultConfig()
	c.Endpoints = []transport.Endpoint{transport.TCPEndpoint("h:1"), transport.UnixEndpoint("/s"), transport.RDMAEndpoint("10.0.0.9:6379")}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"targets":["h:1"]`, `"unix_sockets":["/s"]`, `"endpoints":["tcp://h:1","unix:///s","rdma://10.0.0.9:6379"]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s: %s", want, b)
		}
	}
	if strings.Contains(string(b), `"rdma":`) {
		t.Errorf("default RDMA settings written: %s", b)
	}
	var back Config
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back.Endpoints, c.Endpoints) {
		t.Fatalf("read back %v %v", back.Endpoints, err)
	}
	var old Config
	if err := json.Unmarshal([]byte(`{"targets":["h:1","h:2"],"unix_sockets":["/s"],"threads":1}`), &old); err != nil {
		t.Fatal(err)
	}
	if want := append(tcpEndpoints("h:1", "h:2"), unixEndpoints("/s")...); !reflect.DeepEqual(old.Endpoints, want) {
		t.Errorf("old line: %v, want %v", old.Endpoints, want)
	}
}

// TestErrKindOfRDMA: an RDMA connection's failures are counted under
// kinds of their own, a UC lost write as lost_write.
func TestErrKindOfRDMA(t *testing.T) {
	for err, want := range map[error]string{
		fmt.Errorf("conn: %w", rdma.ErrLostWrite): "lost_write",
		fmt.Errorf("conn: %w", rdma.ErrProtocol):  "protocol",
		fmt.Errorf("conn: %w", rdma.ErrPeerDead):  "timeout",
	} {
		if got := errKindOf(err); got != want {
			t.Errorf("errKindOf(%v) = %q, want %q", err, got, want)
		}
	}
}
