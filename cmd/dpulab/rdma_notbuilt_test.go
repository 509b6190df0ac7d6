//go:build unix

package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/server/transport"
)

// TestServerRDMANotBuilt: a build without RDMA asked for it exits with
// status 2 and the transport seam's message.
func TestServerRDMANotBuilt(t *testing.T) {
	if transport.Available(transport.RDMA) == nil {
		t.Skip("this build has the rdma transport")
	}
	_, _, err := runCmd(t, "server", "--port", strconv.Itoa(testpeer.FreePorts(t, 1)), "--rdma-port", "7100")
	code, msg := exitStatus(err)
	if code != exitUsage || !strings.Contains(msg, "transport rdma: RDMA is not in this build") {
		t.Errorf("exit %d: %s", code, msg)
	}
}

// TestBenchRDMANotBuilt: dpulab bench asked for an rdma:// target in a
// build without RDMA exits with status 2 and the transport seam's message.
func TestBenchRDMANotBuilt(t *testing.T) {
	if transport.Available(transport.RDMA) == nil {
		t.Skip("this build has the rdma transport")
	}
	_, _, err := runCmd(t, "bench", "--target", "rdma://127.0.0.1:7100", "-n", "1")
	code, msg := exitStatus(err)
	if code != exitUsage || !strings.Contains(msg, "transport rdma: RDMA is not in this build") {
		t.Errorf("exit %d: %s", code, msg)
	}
}
