//go:build linux && (amd64 || arm64) && !nordma

package rdma

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/ebitengine/purego"
)

// The provider's loader: rdma-core is opened at run time (purego.Dlopen),
// not linked, so a binary starts and serves TCP on a host without it, and
// says what is missing when RDMA is asked for: a library (with what to
// install), an entry point, or /dev/infiniband/rdma_cm (with how to load a
// driver or add Soft-RoCE). The libraries stay loaded for the provider
// (verbs_purego.go).

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

// installHint is what to install for rdma-core's libraries, on Debian and
// Ubuntu (rdma-core also ships librdmacm1 and ibverbs-providers on RHEL,
// SUSE and the BlueField's own images).
const installHint = "install rdma-core's libraries (Debian/Ubuntu: apt install rdma-core ibverbs-providers librdmacm1)"

// probe opens rdmaCore's libraries and looks up their entry points. What
// fails is said on one line ("; " between libraries): `version` and the
// picker show it in a line of their own.
func probe() error {
	var errs []string
	for _, l := range rdmaCore {
		h, err := purego.Dlopen(l.lib, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err != nil {
			errs = append(errs, fmt.Sprintf("cannot load %s (%s): %s", l.lib, err, installHint))
			continue
		}
		var missing []string
		for _, s := range l.syms {
			if p, err := purego.Dlsym(h, s); err != nil || p == 0 {
				missing = append(missing, s)
			}
		}
		if len(missing) > 0 {
			errs = append(errs, fmt.Sprintf("%s lacks %v: rdma-core is too old or not rdma-core", l.lib, missing))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errors.New(strings.Join(errs, "; "))
}
