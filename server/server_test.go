package server

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dpulab/dpulab/server/resp"
	"github.com/dpulab/dpulab/server/transport"
)

// syncBuffer is a log sink safe for concurrent writes and reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestListenAndServeUnixSocket(t *testing.T) {
	dir := t.TempDir()
	cfg := DefaultConfig()
	cfg.Port = 0 // Unix socket only
	cfg.UnixSocket = filepath.Join(dir, "redis.sock")
	cfg.PidFile = filepath.Join(dir, "redis.pid")
	var log syncBuffer
	srv, err := New(cfg.WithLog(&log))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ListenAndServe(ctx) }()
	var conn net.Conn
	deadline := time.Now().Add(5 * time.Second)
	for {
		conn, err = net.Dial("unix", cfg.UnixSocket)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("dial unix socket: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	conn.Write(resp.AppendCommand(nil, "SET", "k", "v"))
	r := resp.NewReader(conn)
	if v, err := r.ReadReply(); err != nil || v.String() != `"OK"` {
		t.Fatalf("SET over unix socket: %v %v", v, err)
	}
	conn.Close()
	pid, err := os.ReadFile(cfg.PidFile)
	if err != nil || strings.TrimSpace(string(pid)) != strconv.Itoa(os.Getpid()) {
		t.Fatalf("pidfile = %q, %v", pid, err)
	}
	if !strings.Contains(log.String(), "Ready to accept connections unix") {
		t.Errorf("log lacks the ready line:\n%s", log.String())
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ListenAndServe: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ListenAndServe did not return after cancel")
	}
	for _, p := range []string{cfg.PidFile, cfg.UnixSocket} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s left behind after stop (%v)", p, err)
		}
	}
}

func TestShutdownAPI(t *testing.T) {
	cfg := DefaultConfig()
	srv, err := New(cfg.WithLog(&syncBuffer{}))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), ln) }()
	c := dialTest(t, ln.Addr().String())
	c.must(`"PONG"`, "PING")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Fatal("still accepting after Shutdown")
	}
}

// TestNewRejectsRDMA: rdma in a build without it is refused by New, with
// the transport seam's message.
func TestNewRejectsRDMA(t *testing.T) {
	if transport.Available(transport.RDMA) == nil {
		t.Skip("this build has the rdma transport")
	}
	cfg := DefaultConfig()
	cfg.RDMA.Enabled = true
	_, err := New(cfg)
	if !errors.Is(err, transport.ErrNotBuilt) || !strings.HasPrefix(err.Error(), "server config: rdma-port/rdma-enabled: transport rdma: RDMA is not in this build") || !strings.HasSuffix(err.Error(), "or use transport tcp; or remove rdma-port and rdma-enabled from the config") {
		t.Fatalf("err = %v", err)
	}
}
