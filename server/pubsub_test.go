package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dpulab/dpulab/server/resp"
)

// pipeClient connects to srv over net.Pipe: a connection without a
// descriptor, which the goroutine-per-connection path serves even while
// the event loop serves the TCP clients.
func pipeClient(t *testing.T, srv *Server) *testConn {
	t.Helper()
	server, client := net.Pipe()
	t.Cleanup(func() { client.Close() })
	srv.wg.Add(1)
	go srv.handle(fakeRemote{server, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5555}})
	return &testConn{t: t, conn: client, r: resp.NewReader(client)}
}

// send writes a command without reading its reply.
func (tc *testConn) send(args ...string) {
	tc.t.Helper()
	tc.conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := tc.conn.Write(resp.AppendCommand(nil, args...)); err != nil {
		tc.t.Fatalf("write %q: %v", args, err)
	}
}

// dialKind makes a client of either serving path.
func dialKind(t *testing.T, srv *Server, addr, kind string) *testConn {
	if kind == "pipe" {
		return pipeClient(t, srv)
	}
	return dialTest(t, addr)
}

// TestPublishAcrossPaths delivers messages between clients of the event
// loop and of the goroutine path in every combination, in both protocols:
// the subscriber gets each message once, in order, after its own earlier
// replies.
func TestPublishAcrossPaths(t *testing.T) {
	srv, addr := startServer(t, DefaultConfig())
	for _, sub := range []string{"loop", "pipe"} {
		for _, pub := range []string{"loop", "pipe"} {
			for _, proto := range []string{"2", "3"} {
				t.Run(sub+"-from-"+pub+"-resp"+proto, func(t *testing.T) {
					s := dialKind(t, srv, addr, sub)
					p := dialKind(t, srv, addr, pub)
					kind := "*"
					if proto == "3" {
						s.do("HELLO", "3")
						kind = ">"
					}
					ch := "ch-" + sub + pub + proto
					if got := s.do("SUBSCRIBE", ch); !strings.Contains(got, ch) {
						t.Fatalf("SUBSCRIBE: %s", got)
					}
					for i := 0; i < 20; i++ {
						p.must("(integer) 1", "PUBLISH", ch, fmt.Sprint("m", i))
					}
					for i := 0; i < 20; i++ {
						want := fmt.Sprintf(`%s["message" "%s" "m%d"]`, kind, ch, i)
						if got := s.read(); got != want {
							t.Fatalf("message %d: %s, want %s", i, got, want)
						}
					}
					// Nothing else is pending: the next reply is PING's.
					want := `*["pong" ""]`
					if proto == "3" {
						want = `"PONG"`
					}
					s.must(want, "PING")
				})
			}
		}
	}
}

// TestGoRedisPubSub uses go-redis v9's PubSub (Subscribe, Receive,
// PSubscribe, Channel) against the server, over RESP3 and RESP2.
func TestGoRedisPubSub(t *testing.T) {
	addr := StartTest(t, DefaultConfig())
	for _, proto := range []int{3, 2} {
		t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: proto, MaxRetries: -1})
			defer rdb.Close()
			ps := rdb.Subscribe(ctx, "news")
			defer ps.Close()
			got, err := ps.Receive(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if sub, ok := got.(*redis.Subscription); !ok || sub.Kind != "subscribe" || sub.Channel != "news" || sub.Count != 1 {
				t.Fatalf("Receive = %#v, want the subscription to news", got)
			}
			if err := ps.PSubscribe(ctx, "n*"); err != nil {
				t.Fatal(err)
			}
			// Channel() swallows subscription confirmations; wait until
			// the pattern is in place before publishing.
			for rdb.PubSubNumPat(ctx).Val() != 1 {
				time.Sleep(5 * time.Millisecond)
			}
			msgs := ps.Channel()
			if n, err := rdb.Publish(ctx, "news", "hello").Result(); err != nil || n != 2 {
				t.Fatalf("PUBLISH = %d, %v; want 2 receivers", n, err)
			}
			for _, want := range []redis.Message{{Channel: "news", Payload: "hello"}, {Channel: "news", Pattern: "n*", Payload: "hello"}} {
				select {
				case m := <-msgs:
					if m.Channel != want.Channel || m.Pattern != want.Pattern || m.Payload != want.Payload {
						t.Fatalf("message %+v, want %+v", *m, want)
					}
				case <-ctx.Done():
					t.Fatalf("no message %+v", want)
				}
			}
			if n := rdb.PubSubNumSub(ctx, "news", "other").Val(); n["news"] != 1 || n["other"] != 0 {
				t.Errorf("PUBSUB NUMSUB = %v", n)
			}
			if chans := rdb.PubSubChannels(ctx, "ne*").Val(); len(chans) != 1 || chans[0] != "news" {
				t.Errorf("PUBSUB CHANNELS = %v", chans)
			}
			if err := ps.Unsubscribe(ctx, "news"); err != nil {
				t.Fatal(err)
			}
			ps.Close()
			// The server forgets a subscriber that left.
			for rdb.PubSubNumPat(ctx).Val() != 0 || rdb.PubSubNumSub(ctx, "news").Val()["news"] != 0 {
				if ctx.Err() != nil {
					t.Fatal("subscriptions of a closed PubSub still counted")
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
}

// lockedBuffer is a log destination safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSlowSubscriberHardLimit: a subscriber that never reads is closed
// once what waits for it passes the pubsub hard limit, on either serving
// path, while a reading subscriber of the same channel stays.
func TestSlowSubscriberHardLimit(t *testing.T) {
	for _, kind := range []string{"loop", "pipe"} {
		t.Run(kind, func(t *testing.T) {
			log := &lockedBuffer{}
			srv, addr := startServer(t, DefaultConfig())
			srv.logMu.Lock()
			srv.logw = log
			srv.logMu.Unlock()
			admin := dialTest(t, addr)
			admin.must(`"OK"`, "CONFIG", "SET", "client-output-buffer-limit", "pubsub 256kb 0 0")
			slow := dialKind(t, srv, addr, kind)
			slow.must(`*["subscribe" "ch" (integer) 1]`, "SUBSCRIBE", "ch")
			fast := dialTest(t, addr)
			fast.must(`*["subscribe" "ch" (integer) 1]`, "SUBSCRIBE", "ch")
			msg := strings.Repeat("x", 16<<10)
			// Socket buffers take some megabytes before the server holds
			// anything; 64 MB is far past them and the limit.
			sent := 0
			for ; sent < 4096; sent++ {
				n := admin.do("PUBLISH", "ch", msg)
				if got := fast.read(); !strings.HasPrefix(got, `*["message" "ch" "xxx`) {
					t.Fatalf("fast subscriber, message %d: %.40s", sent, got)
				}
				if n == "(integer) 1" {
					break // the slow one is gone
				}
				if n != "(integer) 2" {
					t.Fatalf("PUBLISH %d: %s", sent, n)
				}
			}
			if sent == 4096 {
				t.Fatalf("the slow subscriber is still subscribed after %d MB published", sent*len(msg)>>20)
			}
			if !strings.Contains(log.String(), "scheduled to be closed ASAP for overcoming of output buffer limits") {
				t.Errorf("log does not say why the client was closed:\n%s", log.String())
			}
			// The reading subscriber still gets every message.
			admin.must("(integer) 1", "PUBLISH", "ch", "last")
			if got := fast.read(); got != `*["message" "ch" "last"]` {
				t.Errorf("fast subscriber: %s", got)
			}
			// What reached the slow one's socket before the close can be
			// read, then the connection ends.
			slow.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.Copy(io.Discard, slow.conn); err != nil {
				t.Errorf("slow subscriber's connection: %v, want EOF", err)
			}
		})
	}
}

// TestOutputLimitSoft checks the soft limit's clock: under it nothing
// happens, over it the client is closed only once it has stayed over for
// more than the soft seconds, and dropping below restarts the clock.
func TestOutputLimitSoft(t *testing.T) {
	srv, err := New(DefaultConfig().WithLog(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	srv.cfg.OutputBufferLimits[obufPubSub] = OutputBufferLimit{Soft: 1000, SoftSeconds: 2}
	server, client := net.Pipe()
	defer client.Close()
	c := &Client{srv: srv, conn: server, pubsub: &clientSubs{channels: map[string]uint64{"ch": 1}}}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	srv.checkOutputLimit(c, 999)
	if c.softSince != 0 || c.closeASAP {
		t.Fatalf("under the soft limit: since %d, closing %v", c.softSince, c.closeASAP)
	}
	srv.checkOutputLimit(c, 1000)
	if c.softSince == 0 || c.closeASAP {
		t.Fatalf("first time over: since %d, closing %v", c.softSince, c.closeASAP)
	}
	c.softSince -= 2 // over for exactly the soft seconds: not yet
	srv.checkOutputLimit(c, 5000)
	if c.closeASAP {
		t.Fatal("closed after exactly soft seconds; Redis waits for more")
	}
	srv.checkOutputLimit(c, 10)
	if c.softSince != 0 {
		t.Fatal("dropping under the soft limit did not reset its clock")
	}
	srv.checkOutputLimit(c, 1000)
	c.softSince -= 3
	srv.checkOutputLimit(c, 1000)
	if !c.closeASAP {
		t.Fatal("over the soft limit for longer than soft seconds, not closed")
	}
	// A client without subscriptions is in the normal class: no limits.
	n := &Client{srv: srv, conn: server}
	srv.checkOutputLimit(n, 1<<40)
	if n.closeASAP {
		t.Fatal("a normal client was closed under the default normal limits (none)")
	}
}

// TestSubscriberDisconnect: a subscriber that leaves is forgotten, so
// PUBLISH stops counting it and PUBSUB stops listing its channels.
func TestSubscriberDisconnect(t *testing.T) {
	srv, addr := startServer(t, DefaultConfig())
	for _, kind := range []string{"loop", "pipe"} {
		t.Run(kind, func(t *testing.T) {
			admin := dialTest(t, addr)
			s := dialKind(t, srv, addr, kind)
			s.must(`*["subscribe" "gone" (integer) 1]`, "SUBSCRIBE", "gone")
			s.must(`*["psubscribe" "g*" (integer) 2]`, "PSUBSCRIBE", "g*")
			admin.must("(integer) 2", "PUBLISH", "gone", "x")
			s.conn.Close()
			waitFor(t, "the closed subscriber to be forgotten", func() bool {
				return admin.do("PUBLISH", "gone", "y") == "(integer) 0"
			})
			admin.must("*[]", "PUBSUB", "CHANNELS")
			admin.must("(integer) 0", "PUBSUB", "NUMPAT")
		})
	}
}
