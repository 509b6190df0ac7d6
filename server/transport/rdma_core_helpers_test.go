//go:build linux && (amd64 || arm64) && !nordma && !rdmasim

package transport_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/server/bench"
	"github.com/dpulab/dpulab/server/resp"
	"github.com/dpulab/dpulab/server/transport"
)

// Helpers of the tests that run `dpulab server` and `dpulab bench` over
// rdma-core (on a host with an RDMA device: rdma_hw_test.go, and the
// Soft-RoCE guest's rdma_guest_test.go) as two processes.

// rdmaDpulab builds ./cmd/dpulab once, or is $DPULAB_RDMA_BIN (the
// Soft-RoCE guest has no compiler worth using: under TCG a build would
// take most of an hour).
func rdmaDpulab(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("DPULAB_RDMA_BIN"); p != "" {
		return p
	}
	return testpeer.Agent(t)
}

func TestMain(m *testing.M) {
	code := m.Run()
	testpeer.RemoveBuilds()
	os.Exit(code)
}

func rdmaOpts(mode string) transport.Options {
	return transport.Options{RDMA: transport.RDMAOptions{UC: mode == "unreliable-connected"}}
}

// rdmaServer starts `dpulab server` serving TCP and RDMA (mode
// reliable-connected or unreliable-connected, with extra config lines) on
// host, and returns both endpoints once RDMA answers PING.
func rdmaServer(t *testing.T, bin, host, mode, extra string) (tcp, rdmaEp transport.Endpoint) {
	t.Helper()
	port := testpeer.FreePorts(t, 2)
	dir := t.TempDir()
	conf := filepath.Join(dir, "redis.conf")
	os.WriteFile(conf, fmt.Appendf(nil, "bind %s\nport %d\nrdma-port %d\nrdma-transport-mode %s\n%s", host, port, port+1, mode, extra), 0o644)
	cmd := exec.Command(bin, "server", "--config", conf)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("server log:\n%s", log.String())
		}
	})
	tcp = transport.TCPEndpoint(net.JoinHostPort(host, strconv.Itoa(port)))
	rdmaEp = transport.RDMAEndpoint(net.JoinHostPort(host, strconv.Itoa(port+1)))
	var last error
	for try := 0; ; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, err := transport.Dial(ctx, rdmaEp, rdmaOpts(mode))
		cancel()
		last = err
		if err == nil {
			c.SetDeadline(time.Now().Add(10 * time.Second))
			var v resp.Value
			if _, err = c.Write(resp.AppendCommand(nil, "PING")); err == nil {
				v, err = resp.NewReader(c).ReadReply()
			}
			c.Close()
			if err == nil && strings.Contains(v.String(), "PONG") {
				return tcp, rdmaEp
			}
			last = fmt.Errorf("PING: %q, %v", v.String(), err)
		}
		if try > 500 {
			t.Fatalf("server never answered over %s: %v", rdmaEp, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// benchRun runs `dpulab bench --json` against ep (queue pair qp, 16 deep)
// and returns its start and summary.
func benchRun(t *testing.T, bin string, ep transport.Endpoint, qp string, extra ...string) (*bench.Start, *bench.Summary) {
	t.Helper()
	args := append([]string{"bench", "--json", "--target", ep.String(), "--rdma-mode", qp, "--pipeline", "16"}, extra...)
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatalf("dpulab %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	var start *bench.Start
	var sum *bench.Summary
	bench.Decode(bytes.NewReader(out), func(ev bench.Event) error {
		switch e := ev.(type) {
		case *bench.Start:
			start = e
		case *bench.Summary:
			sum = e
		}
		return nil
	})
	if start == nil || sum == nil {
		t.Fatalf("dpulab %s: no start or summary in\n%s", strings.Join(args, " "), out)
	}
	return start, sum
}
