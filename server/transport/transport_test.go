package transport

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

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

// TestLacksAgreesWithThisBuild: transportwire.Build's rule, which the
// engine applies to the agents it sends to hosts, says of this binary
// what its build tags made it (run under -tags nordma too).
func TestLacksAgreesWithThisBuild(t *testing.T) {
	b := ThisBuild()
	for _, n := range Known() {
		if Simulated(n) != "" {
			continue // a test-only simulation build, outside the rule
		}
		why := b.Lacks(n)
		err := Available(n)
		if (why == "") != (err == nil) {
			t.Errorf("%+v: Lacks(%s) = %q, Available = %v", b, n, why, err)
		}
		if why != "" && !strings.Contains(err.Error(), why) {
			t.Errorf("Available(%s) = %v, want it to say %q", n, err, why)
		}
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
