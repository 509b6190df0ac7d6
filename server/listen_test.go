package server

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/server/resp"
	"github.com/dpulab/dpulab/server/sample"
	"github.com/dpulab/dpulab/server/transport"
)

// TestListenSpecs: the config keys stay Redis's and Valkey's, and become
// endpoints of the transport seam.
func TestListenSpecs(t *testing.T) {
	type spec struct {
		ep       string
		optional bool
	}
	specs := func(c Config) []spec {
		var out []spec
		for _, s := range c.listenSpecs() {
			out = append(out, spec{s.ep.String(), s.optional})
		}
		return out
	}
	c := DefaultConfig()
	if got, want := specs(c), []spec{{"tcp://127.0.0.1:6379", false}, {"tcp://[::1]:6379", true}}; !reflect.DeepEqual(got, want) {
		t.Errorf("defaults: %v, want %v", got, want)
	}
	c.Bind, c.UnixSocket, c.RDMA.Port = []string{"*"}, "/run/r.sock", 6380
	if got, want := specs(c), []spec{{"tcp://:6379", false}, {"unix:///run/r.sock", false}, {"rdma://:6380", false}}; !reflect.DeepEqual(got, want) {
		t.Errorf("bind *, unixsocket, rdma-port: %v, want %v", got, want)
	}
	// rdma-enabled alone serves RDMA on the TCP port number; rdma-bind
	// picks RDMA's own addresses.
	c = DefaultConfig()
	c.Port, c.RDMA.Enabled, c.RDMA.Bind = 7000, true, []string{"10.0.0.2"}
	if got, want := specs(c), []spec{{"tcp://127.0.0.1:7000", false}, {"tcp://[::1]:7000", true}, {"rdma://10.0.0.2:7000", false}}; !reflect.DeepEqual(got, want) {
		t.Errorf("rdma-enabled, rdma-bind: %v, want %v", got, want)
	}
	c.RDMA.TransportMode, c.RDMA.PollUS, c.RDMA.RxSize = "unreliable-connected", 50, 2<<20
	if o := c.transportOptions().RDMA; !o.UC || o.Poll != 50*time.Microsecond || o.RxSize != 2<<20 || o.SQSize != 1024 || o.RetryCount != 7 {
		t.Errorf("rdma options %+v", o)
	}
}

// TestListenTCPAndUnix: Listen opens both through the seam and the server
// answers on each.
func TestListenTCPAndUnix(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Port = testpeer.FreePorts(t, 1)
	cfg.Bind = []string{"127.0.0.1", "-::1"}
	cfg.UnixSocket = filepath.Join(t.TempDir(), "r.sock")
	cfg.UnixSocketPerm = 0o700
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
	defer func() {
		cancel()
		<-done
	}()
	for _, ep := range []transport.Endpoint{transport.TCPEndpoint("127.0.0.1:" + strconv.Itoa(cfg.Port)), transport.UnixEndpoint(cfg.UnixSocket)} {
		dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, err := transport.Dial(dctx, ep, transport.Options{})
		dcancel()
		if err != nil {
			t.Fatal(err)
		}
		c.Write(resp.AppendCommand(nil, "PING"))
		v, err := resp.NewReader(c).ReadReply()
		c.Close()
		if err != nil || v.String() != `"PONG"` {
			t.Errorf("PING over %s: %v %v", ep, v, err)
		}
	}
}

// TestListenTaken: a port taken is an error naming the endpoint.
func TestListenTaken(t *testing.T) {
	taken, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cfg := DefaultConfig()
	cfg.Bind = []string{"127.0.0.1"}
	cfg.Port = taken.Addr().(*net.TCPAddr).Port
	srv, err := New(cfg.WithLog(&syncBuffer{}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Listen(); err == nil || err.Error()[:len("listen on tcp://127.0.0.1:")] != "listen on tcp://127.0.0.1:" {
		t.Errorf("listen on a taken port: %v", err)
	}
}

// TestRDMAInfoWithout: a server without RDMA listeners says so in INFO's
// rdma section, and nothing else.
func TestRDMAInfoWithout(t *testing.T) {
	srv, err := New(DefaultConfig().WithLog(&syncBuffer{}))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	srv.rdmaInfo(func(k string, v any) { got = append(got, k+":"+fmt.Sprint(v)) })
	if !reflect.DeepEqual(got, []string{"rdma_enabled:0"}) {
		t.Errorf("rdma section %q", got)
	}
}

// TestRDMAEnabledNeedsAPort: rdma-enabled alone takes the TCP port number;
// with neither, the config says what to set.
func TestRDMAEnabledNeedsAPort(t *testing.T) {
	c := DefaultConfig()
	c.Port, c.UnixSocket, c.RDMA.Enabled = 0, "/run/r.sock", true
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "rdma-enabled with port 0 and no rdma-port") {
		t.Errorf("rdma-enabled, port 0: %v", err)
	}
	c.RDMA.Port = 7100
	if err := c.Validate(); err != nil {
		t.Errorf("rdma-enabled, port 0, rdma-port 7100: %v", err)
	}
}

// TestRDMAPortInfo: INFO's rdma section ends with a line per RDMA port of
// the host carrying that port's counters, exactly as server/sample reads
// them (and `rdma statistic show` prints them): here a Soft-RoCE fixture.
func TestRDMAPortInfo(t *testing.T) {
	srv, err := New(DefaultConfig().WithLog(&syncBuffer{}))
	if err != nil {
		t.Fatal(err)
	}
	srv.sysRoot = filepath.Join("sample", "testdata", "rxe", "t0")
	want, err := sample.ReadRDMAPortCounters(srv.sysRoot)
	if err != nil || len(want) == 0 {
		t.Fatalf("fixture: %v, %v", want, err)
	}
	got := map[string]string{}
	srv.rdmaPortInfo(func(k string, v any) { got[k] = fmt.Sprint(v) })
	if len(got) != len(want) {
		t.Fatalf("port lines %v, want one per port of %v", got, want)
	}
	for port, cs := range want {
		line, ok := got["rdma_port_"+strings.ReplaceAll(port, "/", "_")]
		if !ok {
			t.Errorf("no line for %s in %v", port, got)
			continue
		}
		fields := strings.Split(line, ",")
		if len(fields) != len(cs) {
			t.Errorf("%s: %q, want %d counters", port, line, len(cs))
		}
		for _, f := range fields {
			name, v, _ := strings.Cut(f, "=")
			if n, err := strconv.ParseUint(v, 10, 64); err != nil || n != cs[name] {
				t.Errorf("%s %s = %q, the sampler reads %d", port, name, v, cs[name])
			}
		}
	}
}
