//go:build linux && (amd64 || arm64) && !nordma && !rdmasim

package transport_test

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/server/rdma"
)

// The hardware test: go test -run RDMA ./server/... on a host with an
// RDMA device (a NIC, or Soft-RoCE: rdma link add rxe0 type rxe netdev
// IF) runs `dpulab server` and `dpulab bench` of the default build
// over real RDMA, RC and UC, and valkey-benchmark --rdma (Valkey 9.0)
// against our server when it is installed.

// rdmaAddr is an IPv4 address of a network interface that an RDMA device
// sits on ($DPULAB_RDMA_ADDR overrides).
func rdmaAddr(t *testing.T) string {
	if a := os.Getenv("DPULAB_RDMA_ADDR"); a != "" {
		return a
	}
	ndevs, _ := filepath.Glob("/sys/class/infiniband/*/ports/*/gid_attrs/ndevs/*")
	for _, p := range ndevs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		ifc, err := net.InterfaceByName(strings.TrimSpace(string(b)))
		if err != nil {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil {
				return n.IP.String()
			}
		}
	}
	t.Fatalf("%s exists but no RDMA device's interface has an IPv4 address: set DPULAB_RDMA_ADDR to one", rdma.CMDevice)
	return ""
}

// TestRDMAHardware: server and bench over real RDMA, RC and UC, 32-byte
// and 1 MiB values 16 deep; then valkey-benchmark --rdma against our
// server (RC), when installed. Skipped without a device, also under
// DPULAB_REQUIRE_PEERS=1: no CI machine has RDMA.
func TestRDMAHardware(t *testing.T) {
	if _, err := os.Stat(rdma.CMDevice); err != nil {
		t.Skipf("no RDMA device: %s is absent (a NIC's driver or Soft-RoCE is needed: modprobe rdma_rxe && rdma link add rxe0 type rxe netdev IF); skipped even with DPULAB_REQUIRE_PEERS=1, since no CI machine has RDMA", rdma.CMDevice)
	}
	if err := rdma.ProviderReady(); err != nil {
		t.Fatalf("the device is there but the provider is not usable: %v", err)
	}
	host := rdmaAddr(t)
	bin := rdmaDpulab(t)
	for _, mode := range []string{"reliable-connected", "unreliable-connected"} {
		t.Run(mode, func(t *testing.T) {
			_, ep := rdmaServer(t, bin, host, mode, "")
			qp := "rc"
			if mode == "unreliable-connected" {
				qp = "uc"
			}
			for _, tc := range []struct {
				name string
				args []string
				ops  int64
			}{
				{"32 B", []string{"-c", "4", "-n", "20000"}, 80000},
				{"1 MiB", []string{"-c", "2", "-n", "64", "-d", "1048576", "--ratio", "1:1"}, 128},
			} {
				start, sum := benchRun(t, bin, ep, qp, tc.args...)
				if start.Simulation != "" {
					t.Errorf("%s: figures over rdma-core labelled %q", tc.name, start.Simulation)
				}
				if sum.Ops != tc.ops || sum.Errors != 0 {
					t.Errorf("%s: %d replies, %d errors (%v); want %d, 0", tc.name, sum.Ops, sum.Errors, sum.ErrorsByKind, tc.ops)
				}
				t.Logf("%s %s over RDMA: %.0f requests/s", mode, tc.name, sum.OpsPerSec)
			}
			if qp != "rc" {
				return
			}
			vb, err := exec.LookPath("valkey-benchmark")
			if err != nil {
				t.Log("valkey-benchmark is not installed: its --rdma run is not done")
				return
			}
			if help, _ := exec.Command(vb, "--help").CombinedOutput(); !strings.Contains(string(help), "--rdma") {
				t.Logf("%s has no --rdma (Valkey 9.0 built with RDMA has it): its run is not done", vb)
				return
			}
			h, p, _ := net.SplitHostPort(ep.Address)
			out, err := exec.Command(vb, "--rdma", "-h", h, "-p", p, "-t", "set,get", "-n", "20000", "-P", "16", "-q").CombinedOutput()
			if err != nil || !strings.Contains(string(out), "requests per second") {
				t.Errorf("valkey-benchmark --rdma against our server: %v\n%s", err, out)
			}
			t.Logf("valkey-benchmark --rdma -t set,get -n 20000 -P 16 against dpulab server:\n%s", out)
		})
	}
}
