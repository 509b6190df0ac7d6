//go:build rdma && rdmasim && cgo

package rdma

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// These tests run the cgo provider (provider.go) through the C layer's
// simulation (dplverbs_sim.c), against itself and against the Go
// simulation (WireQP), whose frames the C side speaks: the same protocol
// across the C code's rule checks both ways.

// side is one end's implementation: the cgo provider or the Go one.
type side string

const (
	cSide  side = "c"
	goSide side = "go"
)

func pairOf(t *testing.T, srv, cli side, typ QPType, rx int, poll time.Duration) (client, server net.Conn) {
	t.Helper()
	t.Setenv(SimDirEnv, t.TempDir())
	var ln net.Listener
	var err error
	if srv == cSide {
		ln, err = Listen("127.0.0.1:0", ProviderOptions{Type: typ, Conn: Config{RxSize: rx}, Poll: poll})
	} else {
		ln, err = ListenSim("127.0.0.1:0", SimOptions{Type: typ, Conn: Config{RxSize: rx}})
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var c net.Conn
	if cli == cSide {
		c, err = Dial(ctx, ln.Addr().String(), ProviderOptions{Type: typ, Conn: Config{RxSize: rx}, Poll: poll})
	} else {
		c, err = DialSim(ctx, ln.Addr().String(), SimOptions{Type: typ, Conn: Config{RxSize: rx}})
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var s net.Conn
	select {
	case s = <-accepted:
	case <-time.After(10 * time.Second):
		t.Fatal("nothing accepted")
	}
	t.Cleanup(func() { s.Close() })
	return c, s
}

// TestProviderEcho: many times the receive buffer echoed byte-exact, RC
// and UC, C to C and C to Go both ways, with and without busy polling.
func TestProviderEcho(t *testing.T) {
	for _, typ := range []QPType{RC, UC} {
		for _, p := range []struct {
			srv, cli side
			poll     time.Duration
		}{{cSide, cSide, 0}, {cSide, cSide, 50 * time.Microsecond}, {goSide, cSide, 0}, {cSide, goSide, 0}} {
			name := typ.String() + "/server-" + string(p.srv) + "/client-" + string(p.cli)
			if p.poll > 0 {
				name += "/poll"
			}
			t.Run(name, func(t *testing.T) {
				c, s := pairOf(t, p.srv, p.cli, typ, MinRxSize, p.poll)
				const size = 4 << 20
				src := make([]byte, size)
				rng := rand.New(rand.NewPCG(7, uint64(typ)))
				for i := range src {
					src[i] = byte(rng.Uint32())
				}
				go io.Copy(s, s)
				werr := make(chan error, 1)
				go func() { werr <- chunky(c.(*NetConn).Conn, src, rand.New(rand.NewPCG(2, 3))) }()
				got := make([]byte, size)
				c.SetReadDeadline(time.Now().Add(60 * time.Second))
				if _, err := io.ReadFull(c, got); err != nil {
					t.Fatal(err)
				}
				if err := <-werr; err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, src) {
					t.Fatal("echo differs")
				}
				k := c.(*NetConn).Counters()
				if k.Reregistrations.Load() < size/MinRxSize-1 || k.LostWrites.Load() != 0 || k.ProtocolErrors.Load() != 0 {
					t.Errorf("counters: %d re-registrations, %d lost, %d protocol errors", k.Reregistrations.Load(), k.LostWrites.Load(), k.ProtocolErrors.Load())
				}
			})
		}
	}
}

// TestProviderRegionsOffHeap: the C layer's regions are page-aligned
// memory outside the Go heap, at the address the peer is told.
func TestProviderRegionsOffHeap(t *testing.T) {
	c, _ := pairOf(t, cSide, cSide, RC, MinRxSize, 0)
	qp := c.(*NetConn).Conn.qp.(*cQP)
	r, err := qp.Register(100_000, true)
	if err != nil {
		t.Fatal(err)
	}
	b := r.Bytes()
	p := uintptr(unsafe.Pointer(&b[0]))
	if len(b) != 100_000 || p%4096 != 0 || uint64(p) != r.Addr() {
		t.Errorf("region at %#x (addr %#x), %d bytes", p, r.Addr(), len(b))
	}
	for i := range b {
		b[i] = byte(i)
	}
	if err := qp.PostSend(1, r, 99_990, 11, true); !errors.Is(err, ErrLocalRegion) {
		t.Errorf("a send past the region's end: %v, want ErrLocalRegion", err)
	}
	if err := qp.Deregister(r); err != nil {
		t.Fatal(err)
	}
	if err := qp.PostSend(1, r, 0, 8, true); !errors.Is(err, ErrLocalRegion) {
		t.Errorf("a send from a deregistered region: %v, want ErrLocalRegion", err)
	}
}

// TestProviderRefusals: a client of the other queue-pair type is refused
// with the server's reason (C server, C and Go clients; Go server, C
// client); a second listener on the address and nothing listening are
// clear errors.
func TestProviderRefusals(t *testing.T) {
	t.Setenv(SimDirEnv, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ln, err := Listen("127.0.0.1:0", ProviderOptions{Type: RC})
	if err != nil {
		t.Fatal(err)
	}
	why := "the server on " + ln.Addr().String() + " speaks RC; this client asked for UC"
	if _, err = Dial(ctx, ln.Addr().String(), ProviderOptions{Type: UC}); err == nil || !strings.Contains(err.Error(), why) {
		t.Errorf("UC C client of an RC C server: %v", err)
	}
	if _, err = DialSim(ctx, ln.Addr().String(), SimOptions{Type: UC}); err == nil || !strings.Contains(err.Error(), why) {
		t.Errorf("UC Go client of an RC C server: %v", err)
	}
	if _, err := Listen(ln.Addr().String(), ProviderOptions{}); err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("second listener on the same address: %v", err)
	}
	ln.Close()
	if _, err = Dial(ctx, ln.Addr().String(), ProviderOptions{}); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("nothing listening: %v", err)
	}
	gln, err := ListenSim("127.0.0.1:0", SimOptions{Type: RC})
	if err != nil {
		t.Fatal(err)
	}
	defer gln.Close()
	why = "the server on " + gln.Addr().String() + " speaks RC; this client asked for UC"
	if _, err = Dial(ctx, gln.Addr().String(), ProviderOptions{Type: UC}); err == nil || !strings.Contains(err.Error(), why) || !errors.Is(err, ErrModeMismatch) {
		t.Errorf("UC C client of an RC Go server: %v", err)
	}
}

// TestProviderPeerGone: a Go peer whose socket closes without a disconnect
// (a killed process) ends the C side's reads with an error, never a hang;
// and an orderly close reads as end of stream.
func TestProviderPeerGone(t *testing.T) {
	c, s := pairOf(t, goSide, cSide, RC, MinRxSize, 0)
	s.(*NetConn).Conn.qp.(*WireQP).sock.Close()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Read(make([]byte, 10)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read after the peer vanished: %v, want an error other than the deadline", err)
	}
	c, s = pairOf(t, cSide, cSide, RC, MinRxSize, 0)
	s.Close()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Read(make([]byte, 10)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read after the peer closed: %v, want end of stream or a disconnect", err)
	}
}

// TestProviderReady: the simulated provider lacks nothing and says what it
// is.
func TestProviderReady(t *testing.T) {
	name, err := Provider()
	if err != nil || !strings.Contains(name, "simulation") || !strings.Contains(ProviderSimulation, "simulated RDMA") {
		t.Errorf("Provider() = %q, %v; simulation %q", name, err, ProviderSimulation)
	}
}
