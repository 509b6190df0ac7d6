//go:build rdma && (cgo || (!rdmasim && linux && (amd64 || arm64)))

package rdma

import (
	"fmt"
	"os"
	"sync"
)

// The loader's part both rdma-core providers share: what they need from
// rdma-core, Probe and the device check. probe itself is rdmacore.go's
// (cgo: dlopen) or rdmacore_purego.go's (purego.Dlopen), with the same
// words.

// rdmaCore lists the libraries and the entry points the provider needs
// from each (what Valkey's src/rdma.c calls; the post and poll calls are
// inline in verbs.h, through the device's ops, and need no symbol).
var rdmaCore = []struct {
	lib  string
	syms []string
}{
	{"libibverbs.so.1", []string{"ibv_alloc_pd", "ibv_dealloc_pd", "ibv_reg_mr", "ibv_dereg_mr",
		"ibv_create_comp_channel", "ibv_destroy_comp_channel", "ibv_create_cq", "ibv_destroy_cq",
		"ibv_get_cq_event", "ibv_ack_cq_events"}},
	{"librdmacm.so.1", []string{"rdma_create_event_channel", "rdma_destroy_event_channel", "rdma_getaddrinfo",
		"rdma_freeaddrinfo", "rdma_create_ep", "rdma_destroy_id", "rdma_migrate_id", "rdma_listen",
		"rdma_connect", "rdma_accept", "rdma_reject", "rdma_disconnect", "rdma_get_cm_event", "rdma_ack_cm_event",
		"rdma_create_qp", "rdma_destroy_qp"}},
}

// CMDevice is the connection manager's device: without it no RDMA device
// (hardware or Soft-RoCE) is usable on this host.
var CMDevice = "/dev/infiniband/rdma_cm"

var (
	probeOnce sync.Once
	probeErr  error
)

// Probe says what this host lacks for the RDMA transport: rdma-core's
// libraries and their entry points, then an RDMA device. Nil when all are
// there. The libraries stay loaded for the provider.
func Probe() error {
	probeOnce.Do(func() { probeErr = probe() })
	if probeErr != nil {
		return probeErr
	}
	return deviceCheck()
}

// deviceCheck says whether the connection manager's device is there.
func deviceCheck() error {
	if _, err := os.Stat(CMDevice); err != nil {
		return fmt.Errorf("no RDMA device: %s is absent; load the adapter's driver (e.g. modprobe mlx5_ib) and rdma_ucm, or add Soft-RoCE, software RDMA over an Ethernet interface: modprobe rdma_rxe && rdma link add rxe0 type rxe netdev IF", CMDevice)
	}
	return nil
}
