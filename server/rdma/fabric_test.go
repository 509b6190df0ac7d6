package rdma

import (
	"errors"
	"testing"
)

// fabricPair is an established link with a 32-byte source and a few
// receive slots on each side, for testing the fabric's own rules.
func fabricPair(t *testing.T, typ QPType, o FabricOptions) (*Fabric, *FabricQP, *FabricQP, Region, Region) {
	t.Helper()
	f := NewFabric()
	l := f.Pair(typ, o)
	l.Establish()
	a, b := l.Client, l.Server
	src, err := a.Register(4096, false)
	if err != nil {
		t.Fatal(err)
	}
	slots, err := b.Register(4096, false)
	if err != nil {
		t.Fatal(err)
	}
	return f, a, b, src, slots
}

func pollAll(q *FabricQP) []Completion {
	var out []Completion
	var wc [8]Completion
	for {
		n, _ := q.Poll(wc[:])
		out = append(out, wc[:n]...)
		if n < len(wc) {
			return out
		}
	}
}

// TestFabricRNR: a message with no receive posted fails on strict RC
// (queue pair in error state), waits on RC with unlimited RNR retry until
// one is posted, and is dropped on UC.
func TestFabricRNR(t *testing.T) {
	t.Run("rc strict", func(t *testing.T) {
		_, a, _, src, _ := fabricPair(t, RC, FabricOptions{StrictRNR: true})
		if err := a.PostSend(1, src, 0, 32, false); err != nil {
			t.Fatal(err)
		}
		wc := pollAll(a)
		if len(wc) != 1 || wc[0].Status != StatusRNRRetryExceeded {
			t.Fatalf("completions %+v, want one RNR error (errors complete even unsignaled)", wc)
		}
		if err := a.PostSend(2, src, 0, 32, true); !errors.Is(err, ErrQPState) {
			t.Fatalf("post after the error: %v, want ErrQPState", err)
		}
	})
	t.Run("rc retry", func(t *testing.T) {
		_, a, b, src, slots := fabricPair(t, RC, FabricOptions{})
		copy(src.Bytes(), "first")
		a.PostSend(1, src, 0, 5, true)
		if wc := pollAll(b); len(wc) != 0 {
			t.Fatalf("delivered without a receive: %+v", wc)
		}
		if wc := pollAll(a); len(wc) != 0 {
			t.Fatalf("send completed before delivery: %+v", wc)
		}
		b.PostRecv(9, slots, 0, 32)
		wc := pollAll(b)
		if len(wc) != 1 || wc[0].WRID != 9 || wc[0].ByteLen != 5 || string(slots.Bytes()[:5]) != "first" {
			t.Fatalf("after posting a receive: %+v %q", wc, slots.Bytes()[:5])
		}
		if wc := pollAll(a); len(wc) != 1 || wc[0].Status != StatusSuccess {
			t.Fatalf("sender completions %+v", wc)
		}
	})
	t.Run("uc drop", func(t *testing.T) {
		_, a, b, src, slots := fabricPair(t, UC, FabricOptions{})
		a.PostSend(1, src, 0, 32, false)
		b.PostRecv(9, slots, 0, 32)
		a.PostSend(2, src, 0, 16, false)
		wc := pollAll(b)
		if len(wc) != 1 || wc[0].ByteLen != 16 {
			t.Fatalf("receiver completions %+v, want only the second message", wc)
		}
	})
}

// TestFabricRemoteAccess: writes must fall inside a region the peer
// registered for remote write, under its rkey.
func TestFabricRemoteAccess(t *testing.T) {
	for _, typ := range []QPType{RC, UC} {
		t.Run(typ.String(), func(t *testing.T) {
			for name, bad := range map[string]func(rx, local Region) (uint64, uint32, int){
				"past the end":    func(rx, _ Region) (uint64, uint32, int) { return rx.Addr() + 4096 - 10, rx.RKey(), 11 },
				"before start":    func(rx, _ Region) (uint64, uint32, int) { return rx.Addr() - 1, rx.RKey(), 4 },
				"wrong rkey":      func(rx, _ Region) (uint64, uint32, int) { return rx.Addr(), rx.RKey() ^ 1, 4 },
				"no remote write": func(_, local Region) (uint64, uint32, int) { return local.Addr(), local.RKey(), 4 },
			} {
				t.Run(name, func(t *testing.T) {
					f, a, b, src, slots := fabricPair(t, typ, FabricOptions{})
					rx, _ := b.Register(4096, true)
					b.PostRecv(1, slots, 0, 32)
					addr, key, n := bad(rx, slots)
					if err := a.PostWriteImm(1, src, 0, n, addr, key, 7, false); err != nil {
						t.Fatal(err)
					}
					if wc := pollAll(b); len(wc) != 0 {
						t.Fatalf("receiver saw %+v", wc)
					}
					wc := pollAll(a)
					if typ == RC {
						if len(wc) != 1 || wc[0].Status != StatusRemoteAccess {
							t.Fatalf("writer completions %+v, want a remote access error", wc)
						}
					} else if len(wc) != 0 || f.Violations() != 1 {
						t.Fatalf("UC: completions %+v, violations %d; want a silent drop, counted", wc, f.Violations())
					}
				})
			}
			// And the good one lands, with its immediate.
			_, a, b, src, slots := fabricPair(t, typ, FabricOptions{})
			rx, _ := b.Register(4096, true)
			b.PostRecv(1, slots, 0, 32)
			copy(src.Bytes(), "data")
			a.PostWriteImm(1, src, 0, 4, rx.Addr()+4092, rx.RKey(), 0xabcd, false)
			wc := pollAll(b)
			if len(wc) != 1 || wc[0].Op != OpRecvWriteImm || wc[0].Imm != 0xabcd || string(rx.Bytes()[4092:]) != "data" {
				t.Fatalf("good write: %+v", wc)
			}
		})
	}
}

// TestFabricSendQueue: the send queue holds SendQueueDepth requests;
// unsignaled ones free their slots only when a later signaled completion
// is polled.
func TestFabricSendQueue(t *testing.T) {
	_, a, b, src, slots := fabricPair(t, UC, FabricOptions{SendQueueDepth: 4})
	_ = slots
	_ = b
	for i := range 3 {
		if err := a.PostSend(uint64(i), src, 0, 1, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.PostSend(3, src, 0, 1, true); err != nil {
		t.Fatal(err)
	}
	if err := a.PostSend(4, src, 0, 1, false); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("fifth post: %v, want ErrQueueFull", err)
	}
	if wc := pollAll(a); len(wc) != 1 || wc[0].WRID != 3 {
		t.Fatalf("completions %+v", wc)
	}
	if err := a.PostSend(4, src, 0, 1, false); err != nil {
		t.Fatalf("after polling the signaled completion: %v", err)
	}
}

// TestFabricOrder: completions come out in the order requests ran.
func TestFabricOrder(t *testing.T) {
	_, a, b, src, slots := fabricPair(t, RC, FabricOptions{})
	for i := range 8 {
		b.PostRecv(uint64(100+i), slots, i*32, 32)
	}
	for i := range 8 {
		a.PostSend(uint64(i), src, 0, i+1, true)
	}
	wa, wb := pollAll(a), pollAll(b)
	if len(wa) != 8 || len(wb) != 8 {
		t.Fatalf("%d and %d completions", len(wa), len(wb))
	}
	for i := range 8 {
		if wa[i].WRID != uint64(i) || wb[i].WRID != uint64(100+i) || wb[i].ByteLen != uint32(i+1) {
			t.Fatalf("out of order at %d: %+v %+v", i, wa[i], wb[i])
		}
	}
}

// TestFabricCQOverrun: a completion queue that overflows puts its queue
// pair in the error state and says so.
func TestFabricCQOverrun(t *testing.T) {
	_, a, _, src, _ := fabricPair(t, UC, FabricOptions{CQDepth: 2})
	for i := range 3 {
		a.PostSend(uint64(i), src, 0, 1, true)
	}
	wc := pollAll(a)
	if len(wc) != 2 || wc[1].Status != StatusCQOverrun {
		t.Fatalf("completions %+v, want the overrun reported", wc)
	}
	if err := a.PostSend(9, src, 0, 1, true); !errors.Is(err, ErrQPState) {
		t.Fatalf("post after overrun: %v", err)
	}
}

// TestFabricFaultRCRefused: RC never loses a message, so a fault hook on
// it is a test bug.
func TestFabricFaultRCRefused(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("SetFault on RC did not panic")
		}
	}()
	NewFabric().Pair(RC, FabricOptions{}).Client.SetFault(func(Message) Fault { return Fault{Kind: Drop} })
}

// TestFabricLocalRegion: local buffers must lie in this queue pair's
// registered regions.
func TestFabricLocalRegion(t *testing.T) {
	_, a, b, src, slots := fabricPair(t, RC, FabricOptions{})
	for _, err := range []error{
		a.PostSend(1, src, 4090, 7, true),
		a.PostSend(1, slots, 0, 1, true), // the peer's region
		b.PostRecv(1, slots, -1, 32),
	} {
		if !errors.Is(err, ErrLocalRegion) {
			t.Errorf("got %v, want ErrLocalRegion", err)
		}
	}
	a.Deregister(src)
	if err := a.PostSend(1, src, 0, 1, true); !errors.Is(err, ErrLocalRegion) {
		t.Errorf("deregistered region: %v", err)
	}
}
