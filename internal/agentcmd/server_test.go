//go:build unix

package agentcmd

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/server"
	"github.com/dpulab/dpulab/server/resp"
)

func serverCmdConfigs(t *testing.T, args ...string) ([]server.Config, error) {
	t.Helper()
	cmd := NewServerCmd()
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatalf("parse flags %v: %v", args, err)
	}
	var f serverFlags
	f.config, _ = cmd.Flags().GetString("config")
	f.port, _ = cmd.Flags().GetInt("port")
	f.bind, _ = cmd.Flags().GetStringSlice("bind")
	f.unixSocket, _ = cmd.Flags().GetString("unixsocket")
	f.rdmaPort, _ = cmd.Flags().GetInt("rdma-port")
	f.rdmaBind, _ = cmd.Flags().GetStringSlice("rdma-bind")
	f.instances, _ = cmd.Flags().GetInt("instances")
	f.requirePass, _ = cmd.Flags().GetString("requirepass")
	f.pidFile, _ = cmd.Flags().GetString("pidfile")
	f.logFile, _ = cmd.Flags().GetString("logfile")
	return serverConfigs(cmd, f)
}

func TestServerConfigs(t *testing.T) {
	cfgs, err := serverCmdConfigs(t, "--port", "7000", "--instances", "3", "--unixsocket", "/tmp/x.sock", "--pidfile", "/tmp/x.pid", "--bind", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfgs) != 3 {
		t.Fatalf("%d configs", len(cfgs))
	}
	for i, c := range cfgs {
		if c.Port != 7000+i {
			t.Errorf("instance %d port %d", i, c.Port)
		}
		if strings.Join(c.Bind, ",") != "127.0.0.1" {
			t.Errorf("instance %d bind %v", i, c.Bind)
		}
	}
	if cfgs[0].PidFile != "/tmp/x.pid" || cfgs[1].PidFile != "" {
		t.Errorf("pidfiles %q %q: want only the first instance to write it", cfgs[0].PidFile, cfgs[1].PidFile)
	}
	if cfgs[0].UnixSocket != "/tmp/x.sock" || cfgs[2].UnixSocket != "/tmp/x.sock.2" {
		t.Errorf("unix sockets %q %q", cfgs[0].UnixSocket, cfgs[2].UnixSocket)
	}
	for _, bad := range [][]string{
		{"--instances", "0"},
		{"--port", "65535", "--instances", "2"},
		{"--bind", "not-an-ip"},
		{"--config", "/nonexistent/redis.conf"},
	} {
		if _, err := serverCmdConfigs(t, bad...); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

// freeConsecutivePorts finds n consecutive free loopback ports.
func freeConsecutivePorts(t *testing.T, n int) int { return testpeer.FreePorts(t, n) }

func TestRunServersInstances(t *testing.T) {
	base := freeConsecutivePorts(t, 2)
	cfgs, err := serverCmdConfigs(t, "--port", fmt.Sprint(base), "--instances", "2", "--bind", "127.0.0.1", "--logfile", t.TempDir()+"/log")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runServers(ctx, cfgs) }()
	do := func(port int, args ...string) string {
		t.Helper()
		var conn net.Conn
		deadline := time.Now().Add(5 * time.Second)
		for {
			conn, err = net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("dial %d: %v", port, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		defer conn.Close()
		conn.Write(resp.AppendCommand(nil, args...))
		v, err := resp.NewReader(conn).ReadReply()
		if err != nil {
			t.Fatalf("%v on %d: %v", args, port, err)
		}
		return v.String()
	}
	if got := do(base, "SET", "k", "first"); got != `"OK"` {
		t.Fatalf("SET on instance 0: %s", got)
	}
	if got := do(base+1, "GET", "k"); got != "(nil)" {
		t.Fatalf("instance 1 sees instance 0's key: %s", got)
	}
	if got := do(base, "GET", "k"); got != `"first"` {
		t.Fatalf("GET on instance 0: %s", got)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("runServers: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("runServers did not stop on cancel")
	}
}

// TestServerRDMAFlags: --rdma-port and --rdma-bind are Valkey's keys; each
// instance gets its own RDMA port, as it gets its own TCP port.
func TestServerRDMAFlags(t *testing.T) {
	cfgs, err := serverCmdConfigs(t, "--port", "7000", "--instances", "2", "--rdma-port", "7100", "--rdma-bind", "10.0.0.2")
	if err != nil {
		t.Fatal(err)
	}
	if cfgs[0].RDMA.Port != 7100 || cfgs[1].RDMA.Port != 7101 || strings.Join(cfgs[1].RDMA.Bind, ",") != "10.0.0.2" {
		t.Errorf("rdma %+v %+v", cfgs[0].RDMA, cfgs[1].RDMA)
	}
	if _, err := serverCmdConfigs(t, "--instances", "2", "--rdma-port", "65535"); err == nil || !strings.Contains(err.Error(), "rdma-port") {
		t.Errorf("rdma ports past 65535: %v", err)
	}
}
