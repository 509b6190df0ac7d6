//go:build linux && (amd64 || arm64) && !nordma

package rdma

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/internal/testpeer"
)

// needRdmaCore skips a test that loads rdma-core's libraries on a host
// without them (fails under DPULAB_REQUIRE_PEERS=1): the provider is in
// every linux/amd64 and arm64 build, rdma-core's libraries are not on
// every such host.
func needRdmaCore(t *testing.T) {
	t.Helper()
	if err := probe(); err != nil {
		testpeer.Missing(t, err.Error())
	}
}

// TestProbe: on this host the libraries load, and the device check says
// what to do when there is no RDMA device.
func TestProbe(t *testing.T) {
	needRdmaCore(t)
	saved := CMDevice
	defer func() { CMDevice = saved }()
	CMDevice = filepath.Join(t.TempDir(), "rdma_cm")
	if err := Probe(); err == nil || !strings.Contains(err.Error(), "no RDMA device: "+CMDevice+" is absent") || !strings.Contains(err.Error(), "rdma link add rxe0 type rxe netdev IF") {
		t.Errorf("without a device: %v", err)
	}
	os.WriteFile(CMDevice, nil, 0o600)
	if err := Probe(); err != nil {
		t.Errorf("with the device present: %v", err)
	}
}

// TestProbeMissingLibrary: a library that cannot be loaded is named, with
// what to install.
func TestProbeMissingLibrary(t *testing.T) {
	saved := rdmaCore
	defer func() { rdmaCore = saved }()
	type lib = struct {
		lib  string
		syms []string
	}
	rdmaCore = []lib{{"libdpulab-no-such-rdma.so.1", nil}, {"libdpulab-no-such-rdmacm.so.1", nil}}
	err := probe()
	if err == nil || !strings.Contains(err.Error(), "cannot load libdpulab-no-such-rdma.so.1") || !strings.Contains(err.Error(), "apt install rdma-core ibverbs-providers librdmacm1") {
		t.Fatalf("missing library: %v", err)
	}
	// Both named, on one line (version and the picker show it in theirs).
	if !strings.Contains(err.Error(), "; cannot load libdpulab-no-such-rdmacm.so.1") || strings.Contains(err.Error(), "\n") {
		t.Errorf("two missing libraries: %q", err)
	}
}
