package transport

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseEndpoint(t *testing.T) {
	for _, tc := range []struct {
		in    string
		want  Endpoint
		url   string
		label string
	}{
		{"127.0.0.1:6379", Endpoint{TCP, "127.0.0.1:6379"}, "tcp://127.0.0.1:6379", "127.0.0.1:6379"},
		{"tcp://redis-a:7000", Endpoint{TCP, "redis-a:7000"}, "tcp://redis-a:7000", "redis-a:7000"},
		{"TCP://[::1]:6379", Endpoint{TCP, "[::1]:6379"}, "tcp://[::1]:6379", "[::1]:6379"},
		{"unix:///run/r.sock", Endpoint{Unix, "/run/r.sock"}, "unix:///run/r.sock", "unix:/run/r.sock"},
		{"unix:/run/r.sock", Endpoint{Unix, "/run/r.sock"}, "unix:///run/r.sock", "unix:/run/r.sock"},
		{"/tmp/x.sock", Endpoint{Unix, "/tmp/x.sock"}, "unix:///tmp/x.sock", "unix:/tmp/x.sock"},
		{"./x.sock", Endpoint{Unix, "./x.sock"}, "unix://./x.sock", "unix:./x.sock"},
		{"rdma://10.0.0.2:6379", Endpoint{RDMA, "10.0.0.2:6379"}, "rdma://10.0.0.2:6379", "rdma://10.0.0.2:6379"},
		{" rdma://[fe80::1]:6380 ", Endpoint{RDMA, "[fe80::1]:6380"}, "rdma://[fe80::1]:6380", "rdma://[fe80::1]:6380"},
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

func TestAvailable(t *testing.T) {
	for _, n := range []Name{TCP, Unix} {
		if err := Available(n); err != nil {
			t.Errorf("Available(%s) = %v", n, err)
		}
	}
	err := Available("udp")
	if !errors.Is(err, ErrUnknown) || err.Error() != `transport "udp": unknown transport: want one of rdma, tcp, unix` {
		t.Errorf("Available(udp) = %v", err)
	}
	names := Names()
	if !contains(names, TCP) || !contains(names, Unix) {
		t.Errorf("Names() = %v, want tcp and unix among them", names)
	}
	if contains(names, RDMA) {
		if err := Available(RDMA); err != nil {
			t.Errorf("rdma registered but Available says %v", err)
		}
		return
	}
	err = Available(RDMA)
	if !errors.Is(err, ErrNotBuilt) || !strings.HasPrefix(err.Error(), "transport rdma: RDMA is not in this build") || !strings.HasSuffix(err.Error(), ", or use transport tcp") {
		t.Errorf("Available(rdma) in a build without it = %v", err)
	}
	if _, err := Dial(context.Background(), RDMAEndpoint("127.0.0.1:1"), Options{}); !errors.Is(err, ErrNotBuilt) {
		t.Errorf("Dial over an unbuilt transport: %v", err)
	}
	if _, err := Listen(context.Background(), RDMAEndpoint("127.0.0.1:0"), Options{}); !errors.Is(err, ErrNotBuilt) {
		t.Errorf("Listen over an unbuilt transport: %v", err)
	}
}

func contains(l []Name, n Name) bool {
	for _, v := range l {
		if v == n {
			return true
		}
	}
	return false
}

// echo accepts one connection on ln and writes back what it reads.
func echo(t *testing.T, ln net.Listener) {
	t.Helper()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.Copy(c, c)
	}()
}

func roundTrip(t *testing.T, ep Endpoint) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, ep, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "PING\r\n" {
		t.Fatalf("echo: %q %v", buf, err)
	}
}

func TestTCPListenDial(t *testing.T) {
	ln, err := Listen(context.Background(), TCPEndpoint("127.0.0.1:0"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if a := ln.Addr().(*net.TCPAddr); a.IP.To4() == nil {
		t.Fatalf("bind 127.0.0.1 listened on %v", a)
	}
	echo(t, ln)
	roundTrip(t, TCPEndpoint(ln.Addr().String()))
}

func TestUnixListenDial(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.sock")
	// A socket left by a server that died is replaced.
	stale, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close()
	ln, err := Listen(context.Background(), UnixEndpoint(path), Options{UnixPerm: 0o600})
	if err != nil {
		t.Fatalf("listen over a stale socket: %v", err)
	}
	defer ln.Close()
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v %v, want 0600", fi.Mode(), err)
	}
	echo(t, ln)
	roundTrip(t, UnixEndpoint(path))

	// Any other file at the path is left alone.
	other := filepath.Join(dir, "notes.txt")
	os.WriteFile(other, []byte("keep"), 0o644)
	if _, err := Listen(context.Background(), UnixEndpoint(other), Options{}); err == nil || !strings.Contains(err.Error(), "is not a socket") {
		t.Fatalf("listen over a regular file: %v", err)
	}
	if b, _ := os.ReadFile(other); string(b) != "keep" {
		t.Fatal("the regular file was touched")
	}
}
