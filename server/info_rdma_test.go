//go:build rdmasim

package server

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/server/resp"
	"github.com/dpulab/dpulab/server/transport"
)

// TestRDMAServe: with rdma-port set, the server serves TCP and RDMA at
// once (the simulated provider here), a command over RDMA runs on the
// goroutine path, and INFO's rdma section counts the traffic.
func TestRDMAServe(t *testing.T) {
	t.Setenv("DPULAB_RDMASIM_DIR", t.TempDir())
	for _, mode := range []string{"reliable-connected", "unreliable-connected"} {
		t.Run(mode, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Bind = []string{"127.0.0.1"}
			cfg.Port = testpeer.FreePorts(t, 2)
			cfg.RDMA.Port = cfg.Port + 1
			cfg.RDMA.TransportMode = mode
			var log syncBuffer
			srv, err := New(cfg.WithLog(&log))
			if err != nil {
				t.Fatal(err)
			}
			lns, err := srv.Listen()
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- srv.Serve(ctx, lns...) }()
			defer func() { cancel(); <-done }()

			dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer dcancel()
			ep := transport.RDMAEndpoint("127.0.0.1:" + strconv.Itoa(cfg.RDMA.Port))
			c, err := transport.Dial(dctx, ep, transport.Options{RDMA: transport.RDMAOptions{UC: mode == "unreliable-connected"}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(30 * time.Second))
			c.Write(resp.AppendCommand(nil, "SET", "k", strings.Repeat("v", 100000)))
			c.Write(resp.AppendCommand(nil, "GET", "k"))
			r := resp.NewReader(c)
			if v, err := r.ReadReply(); err != nil || v.String() != `"OK"` {
				t.Fatalf("SET over rdma: %v %v", v, err)
			}
			if v, err := r.ReadReply(); err != nil || len(v.Str) != 100000 {
				t.Fatalf("GET over rdma: %d bytes, %v", len(v.Str), err)
			}
			// INFO's rdma section (cmd_server.go's info calls rdmaInfo
			// under sec("rdma")).
			var b strings.Builder
			srv.rdmaInfo(func(k string, v any) { fmt.Fprintf(&b, "%s:%v\r\n", k, v) })
			info := b.String()
			for _, want := range []string{"rdma_enabled:1", "rdma_transport_mode:" + mode, "rdma_simulated:1", "rdma_connections_received:1", "rdma_lost_writes:0", "rdma_protocol_errors:0"} {
				if !strings.Contains(info, want) {
					t.Errorf("INFO rdma lacks %s:\n%s", want, info)
				}
			}
			// Shutdown with the RDMA client still connected ends its
			// connection: the client reads EOF or an error, never hangs.
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("Serve: %v", err)
			}
			done <- nil
			if _, err := r.ReadReply(); err == nil {
				t.Error("the RDMA client still reads after the server stopped")
			}
			if !strings.Contains(log.String(), fmt.Sprintf("Ready to accept connections rdma on 127.0.0.1:%d (simulated RDMA", cfg.RDMA.Port)) {
				t.Errorf("log does not say rdma is simulated:\n%s", log.String())
			}
		})
	}
}
