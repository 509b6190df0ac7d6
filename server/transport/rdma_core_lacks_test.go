//go:build linux && (amd64 || arm64) && !nordma && !rdmasim

package transport

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/server/rdma"
)

// TestHostLacksRDMA: on a host without rdma-core's libraries or a device,
// Dial and Listen over rdma say what the host lacks as ErrHostLacks (the
// bench then does not ask whether the server is reachable).
func TestHostLacksRDMA(t *testing.T) {
	ready := rdma.ProviderReady()
	if ready == nil {
		t.Skip("this host can use RDMA: nothing lacks")
	}
	_, err := Dial(context.Background(), RDMAEndpoint("127.0.0.1:1"), Options{})
	if !errors.Is(err, ErrHostLacks) || err.Error() != "rdma connect 127.0.0.1:1: "+ready.Error() {
		t.Errorf("Dial on a host without RDMA: %v, want ErrHostLacks saying %q", err, ready)
	}
	_, err = Listen(context.Background(), RDMAEndpoint("127.0.0.1:0"), Options{})
	if !errors.Is(err, ErrHostLacks) || !strings.HasPrefix(err.Error(), "rdma listen 127.0.0.1:0: ") {
		t.Errorf("Listen on a host without RDMA: %v", err)
	}
}
