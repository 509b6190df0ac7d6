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
)

// simPair listens and dials on the simulated fabric in a directory of the
// test's own.
func simPair(t *testing.T, typ QPType, rx int) (client, server net.Conn) {
	t.Helper()
	t.Setenv(SimDirEnv, t.TempDir())
	ln, err := ListenSim("127.0.0.1:0", SimOptions{Type: typ, Conn: Config{RxSize: rx}})
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
	c, err := DialSim(ctx, ln.Addr().String(), SimOptions{Type: typ, Conn: Config{RxSize: rx}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s := <-accepted
	t.Cleanup(func() { s.Close() })
	if s.RemoteAddr().(*net.TCPAddr).IP.IsLoopback() != true || ln.Addr().Network() != "rdma" {
		t.Errorf("addresses: remote %v, listener %v %s", s.RemoteAddr(), ln.Addr(), ln.Addr().Network())
	}
	return c, s
}

// TestSimEcho: the protocol across the simulated provider's sockets, both
// kinds of queue pair, with many times the receive buffer in flight each
// way (re-registration after every drain) and byte-exact echoes.
func TestSimEcho(t *testing.T) {
	for _, typ := range []QPType{RC, UC} {
		t.Run(typ.String(), func(t *testing.T) {
			c, s := simPair(t, typ, MinRxSize)
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

// TestSimRefusals: a client of the other queue-pair type is refused with
// the reason; nothing listening is a clear error.
func TestSimRefusals(t *testing.T) {
	t.Setenv(SimDirEnv, t.TempDir())
	refused := make(chan string, 1)
	ln, err := ListenSim("127.0.0.1:0", SimOptions{Type: RC, Refused: func(peer string, err error) { refused <- peer + ": " + err.Error() }})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = DialSim(ctx, ln.Addr().String(), SimOptions{Type: UC})
	why := "the server on " + ln.Addr().String() + " speaks RC; this client asked for UC"
	if err == nil || !strings.Contains(err.Error(), why) || !errors.Is(err, ErrModeMismatch) {
		t.Errorf("UC client of an RC server: %v", err)
	}
	select {
	case got := <-refused:
		if !strings.HasPrefix(got, "127.0.0.1:") || !strings.HasSuffix(got, why) {
			t.Errorf("the listener reported the refusal as %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Error("the listener did not report the refused client")
	}
	if _, err := ListenSim(ln.Addr().String(), SimOptions{}); err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("second listener on the same address: %v", err)
	}
	ln.Close()
	if _, err = DialSim(ctx, ln.Addr().String(), SimOptions{}); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("nothing listening: %v", err)
	}
}

// TestSimPeerGone: a peer whose process dies (its socket closes without a
// disconnect) ends the other side's reads, never hangs them.
func TestSimPeerGone(t *testing.T) {
	c, s := simPair(t, RC, MinRxSize)
	// Cut the socket under the server's queue pair, as a killed process
	// does: no disconnect message goes out.
	s.(*NetConn).Conn.qp.(*WireQP).sock.Close()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, err := c.Read(make([]byte, 10))
	if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read after the peer vanished: %v, want an error other than the deadline", err)
	}
}

// TestWireRules: what arrives is checked as an adapter checks it: an RC
// write under a wrong rkey fails at the sender (remote access), a UC one
// is dropped and counted.
func TestWireRules(t *testing.T) {
	for _, typ := range []QPType{RC, UC} {
		t.Run(typ.String(), func(t *testing.T) {
			a, b := net.Pipe()
			qa, qb := NewWireQP(a, typ, WireOptions{}, 1), NewWireQP(b, typ, WireOptions{}, 2)
			defer qa.Close()
			defer qb.Close()
			src, _ := qa.Register(64, false)
			dst, _ := qb.Register(64, true)
			recv, _ := qb.Register(32, false)
			qb.PostRecv(9, recv, 0, 32)
			qa.Establish()
			qb.Establish()
			if err := qa.PostWriteImm(1, src, 0, 16, dst.Addr(), dst.RKey()+1, 16, true); err != nil {
				t.Fatal(err)
			}
			// A good write after it: on UC it lands, on RC the queue pair
			// is already in the error state and it is flushed.
			qa.PostWriteImm(2, src, 0, 16, dst.Addr(), dst.RKey(), 16, true)
			var wc [4]Completion
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) {
				n, _ := qa.Poll(wc[:])
				for _, c := range wc[:n] {
					switch {
					case typ == RC && c.WRID == 1:
						if c.Status != StatusRemoteAccess {
							t.Fatalf("RC bad rkey: %v", c.Status)
						}
						return
					case typ == UC && c.WRID == 2:
						// Both went out; the receiver dropped the first.
						for time.Now().Before(deadline) {
							if n, _ := qb.Poll(wc[:]); n > 0 {
								if wc[0].Op != OpRecvWriteImm || qb.Violations() != 1 {
									t.Fatalf("UC receiver: %+v, %d violations", wc[0], qb.Violations())
								}
								return
							}
							time.Sleep(time.Millisecond)
						}
					}
				}
				time.Sleep(time.Millisecond)
			}
			t.Fatal("no completion")
		})
	}
}

// wirePair makes two established WireQPs over a socket pair.
func wirePair(t *testing.T, typ QPType) (*WireQP, *WireQP) {
	t.Helper()
	a, b := net.Pipe()
	qa, qb := NewWireQP(a, typ, WireOptions{}, 1), NewWireQP(b, typ, WireOptions{}, 2)
	t.Cleanup(func() { qa.Close(); qb.Close() })
	return qa, qb
}

// waitWC waits for q's next completion.
func waitWC(t *testing.T, q *WireQP) Completion {
	t.Helper()
	var wc [1]Completion
	timeout := time.After(10 * time.Second)
	for {
		if n, _ := q.Poll(wc[:]); n == 1 {
			return wc[0]
		}
		select {
		case <-q.Notify():
		case <-timeout:
			t.Fatal("no completion")
		}
	}
}

// TestWireReceiveRules: RC holds a SEND that finds no receive posted until
// one is (rnr_retry_count 7), then completes it at both ends; UC drops it;
// an RC SEND longer than the posted receive fails both sides.
func TestWireReceiveRules(t *testing.T) {
	t.Run("rc waits for a receive", func(t *testing.T) {
		qa, qb := wirePair(t, RC)
		src, _ := qa.Register(64, false)
		dst, _ := qb.Register(64, false)
		copy(src.Bytes(), "hello")
		qa.Establish()
		qb.Establish()
		if err := qa.PostSend(1, src, 0, 5, true); err != nil {
			t.Fatal(err)
		}
		var wc [1]Completion
		if n, _ := qa.Poll(wc[:]); n != 0 {
			t.Fatalf("completed before the peer posted a receive: %+v", wc[0])
		}
		qb.PostRecv(7, dst, 0, 64)
		if c := waitWC(t, qb); c.WRID != 7 || c.Op != OpRecv || c.ByteLen != 5 || string(dst.Bytes()[:5]) != "hello" {
			t.Fatalf("receiver: %+v %q", c, dst.Bytes()[:5])
		}
		if c := waitWC(t, qa); c.WRID != 1 || c.Status != StatusSuccess {
			t.Fatalf("sender: %+v", c)
		}
	})
	t.Run("uc drops without a receive", func(t *testing.T) {
		qa, qb := wirePair(t, UC)
		src, _ := qa.Register(64, false)
		dst, _ := qb.Register(64, false)
		qa.Establish()
		qb.Establish()
		copy(src.Bytes(), "first")
		qa.PostSend(1, src, 0, 5, true)
		if c := waitWC(t, qa); c.WRID != 1 || c.Status != StatusSuccess {
			t.Fatalf("UC sender: %+v", c)
		}
		// Once the receiver has seen it (and dropped it, not held it), a
		// message posted after a receive is the one that lands.
		for deadline := time.Now().Add(10 * time.Second); qb.Dropped() != 1; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the receiver dropped %d messages, want 1", qb.Dropped())
			}
		}
		qb.PostRecv(7, dst, 0, 64)
		copy(src.Bytes()[8:], "second")
		qa.PostSend(2, src, 8, 6, true)
		if c := waitWC(t, qb); c.ByteLen != 6 || string(dst.Bytes()[:6]) != "second" {
			t.Fatalf("UC receiver: %+v %q", c, dst.Bytes()[:6])
		}
	})
	t.Run("rc send too long", func(t *testing.T) {
		qa, qb := wirePair(t, RC)
		src, _ := qa.Register(64, false)
		dst, _ := qb.Register(64, false)
		qb.PostRecv(7, dst, 0, 8)
		qa.Establish()
		qb.Establish()
		qa.PostSend(1, src, 0, 32, true)
		if c := waitWC(t, qb); c.Status != StatusLocalLength {
			t.Fatalf("receiver: %+v", c)
		}
		if c := waitWC(t, qa); c.Status != StatusRemoteInvalidRequest {
			t.Fatalf("sender: %+v", c)
		}
		if err := qa.PostSend(2, src, 0, 1, true); !errors.Is(err, ErrQPState) {
			t.Errorf("post after the failure: %v, want ErrQPState", err)
		}
	})
}

// TestWireGarbage: a frame of no known kind fails the queue pair as a
// broken link would (disconnect, RC requests on their way fail), never a
// hang or a crash.
func TestWireGarbage(t *testing.T) {
	a, b := net.Pipe()
	q := NewWireQP(a, RC, WireOptions{}, 1)
	defer q.Close()
	src, _ := q.Register(64, false)
	q.Establish()
	q.PostSend(1, src, 0, 8, true)
	go io.Copy(io.Discard, b)
	b.Write(bytes.Repeat([]byte{0xee}, frameHeader))
	if c := waitWC(t, q); c.WRID != 1 || c.Status == StatusSuccess {
		t.Fatalf("request on its way: %+v", c)
	}
	for {
		e, ok := q.PollEvent()
		if !ok {
			select {
			case <-q.Notify():
				continue
			case <-time.After(10 * time.Second):
				t.Fatal("no disconnect event")
			}
		}
		if e == EventDisconnected {
			return
		}
	}
}
