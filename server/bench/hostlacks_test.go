//go:build linux && (amd64 || arm64) && !nordma && !rdmasim

package bench

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/server/rdma"
	"github.com/dpulab/dpulab/server/transport"
)

// TestHostLacksRDMAIsNotReachability: on a host without rdma-core's
// libraries or a device, the bench over rdma says what the host lacks and
// what to install or load, and does not ask whether the server is running
// and reachable: it was never tried.
func TestHostLacksRDMAIsNotReachability(t *testing.T) {
	ready := rdma.ProviderReady()
	if ready == nil {
		t.Skip("this host can use RDMA: nothing lacks")
	}
	target := "127.0.0.1:" + strconv.Itoa(freePort(t))
	cfg := testConfig(target)
	cfg.Endpoints = []transport.Endpoint{transport.RDMAEndpoint(target)}
	cfg.ConnectTimeout = 5 * time.Second
	_, err := Run(context.Background(), cfg, nil)
	if err == nil {
		t.Fatal("the bench ran over rdma on a host without it")
	}
	msg := err.Error()
	want := "connect to rdma://" + target + ": rdma connect " + target + ": " + ready.Error() + " (on the load generator's host)"
	if msg != want {
		t.Errorf("err = %s\nwant %s", msg, want)
	}
	if strings.Contains(msg, "reachable") {
		t.Errorf("a missing library is not a reachability problem: %s", msg)
	}
}
