package bench

import (
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseStartAt(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  string
	}{
		{"", 0, ""},
		{" 1764806400123 ", 1764806400123, ""},
		{"2026-12-03T23:00:00Z", 0, "want Unix time in milliseconds"},
		{"1764806400.5", 0, "want Unix time in milliseconds"},
		{"-5", 0, "want Unix time in milliseconds"},
		{"0", 0, "want Unix time in milliseconds"},
	} {
		got, err := ParseStartAt(tc.in)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("ParseStartAt(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseStartAt(%q) = %d, %v; want an error saying %q", tc.in, got, err, tc.err)
		}
	}
}

// TestStartAtWindow: an instant more than StartAtPast behind or
// StartAtFuture ahead of the host's clock is refused, by the flags and by
// Run, with the host's time in the message; one inside is kept and
// travels through Config.Args.
func TestStartAtWindow(t *testing.T) {
	now := time.UnixMilli(1764806400000)
	old := timeNow
	timeNow = func() time.Time { return now }
	t.Cleanup(func() { timeNow = old })
	at := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).UnixMilli(), 10) }
	for _, tc := range []struct {
		d   time.Duration
		err string
	}{
		{0, ""},
		{-4900 * time.Millisecond, ""},
		{59 * time.Second, ""},
		{-5100 * time.Millisecond, "5.1s in the past"},
		{-time.Hour, "1h0m0s in the past"},
		{61 * time.Second, "1m1s ahead"},
	} {
		cfg, _, err := ParseArgs([]string{"--target", "127.0.0.1:1", "--start-at", at(tc.d)})
		if tc.err == "" {
			if err != nil || cfg.StartAtUnixMs != now.Add(tc.d).UnixMilli() {
				t.Errorf("--start-at now%+v: %v, start %d", tc.d, err, cfg.StartAtUnixMs)
				continue
			}
			back, _, err := ParseArgs(cfg.Args())
			if err != nil || back.StartAtUnixMs != cfg.StartAtUnixMs {
				t.Errorf("Args() %q read back: %v, start %d", cfg.Args(), err, back.StartAtUnixMs)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "this host's clock says 2025-12-04T00:00:00Z") {
			t.Errorf("--start-at now%+v: err %v, want it refused (%q, with the host's time)", tc.d, err, tc.err)
		}
		// Run refuses it too, before connecting (the target does not exist).
		c := DefaultConfig()
		c.Endpoints, c.StartAtUnixMs = tcpEndpoints("127.0.0.1:1"), now.Add(tc.d).UnixMilli()
		if _, err := Run(context.Background(), c, nil); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("Run with start now%+v: err %v, want it refused (%q)", tc.d, err, tc.err)
		}
	}
	if cfg, _, err := ParseArgs([]string{"--target", "127.0.0.1:1"}); err != nil || cfg.StartAtUnixMs != 0 || strings.Contains(strings.Join(cfg.Args(), " "), "--start-at") {
		t.Errorf("without --start-at: %v, start %d, args %q", err, cfg.StartAtUnixMs, cfg.Args())
	}
}

// firstByteProxy forwards to addr and records, when the first byte from
// any client arrives, the time and how many connections were open.
type firstByteProxy struct {
	mu          sync.Mutex
	accepted    int
	first       time.Time
	openAtFirst int
}

func startFirstByteProxy(t *testing.T, addr string) (string, *firstByteProxy) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	p := &firstByteProxy{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			p.accepted++
			p.mu.Unlock()
			go func() {
				defer c.Close()
				s, err := net.Dial("tcp", addr)
				if err != nil {
					return
				}
				defer s.Close()
				go func() { _, _ = io.Copy(c, s) }()
				buf := make([]byte, 64<<10)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						p.mu.Lock()
						if p.first.IsZero() {
							p.first, p.openAtFirst = time.Now(), p.accepted
						}
						p.mu.Unlock()
						if _, err := s.Write(buf[:n]); err != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String(), p
}

// TestStartAtWaitsAfterConnecting: with --start-at every connection is
// open before the first request, and the first request reaches the server
// no earlier than the instant (an ordering the bench guarantees, not a
// timing bound); the start line says how late it began.
func TestStartAtWaitsAfterConnecting(t *testing.T) {
	proxy, p := startFirstByteProxy(t, startOurs(t))
	cfg := testConfig(proxy)
	cfg.Clients, cfg.Duration = 3, 300*time.Millisecond
	at := time.Now().Add(400 * time.Millisecond)
	cfg.StartAtUnixMs = at.UnixMilli()
	got, err := runCollect(t, context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.first.Before(time.UnixMilli(cfg.StartAtUnixMs)) {
		t.Errorf("first request at %s, before --start-at %s", p.first.Format(time.RFC3339Nano), time.UnixMilli(cfg.StartAtUnixMs).Format(time.RFC3339Nano))
	}
	if p.openAtFirst != cfg.Clients {
		t.Errorf("%d connections open at the first request, want all %d", p.openAtFirst, cfg.Clients)
	}
	if got.start == nil || got.start.StartLateMs == nil || *got.start.StartLateMs < 0 || got.start.Config.StartAtUnixMs != cfg.StartAtUnixMs {
		t.Fatalf("start line: %+v", got.start)
	}
	t.Logf("began %.3f ms after --start-at", *got.start.StartLateMs)
	if len(got.runs) != 1 || got.runs[0].Ops == 0 {
		t.Errorf("runs: %+v", got.runs)
	}
}
