//go:build rdma && cgo

package rdma

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>

// dpl_load opens a library for its symbols, or returns NULL and leaves the
// reason in *err (dlerror's static text, copied by the caller at once).
static void *dpl_load(const char *name, const char **err) {
	void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	*err = h ? NULL : dlerror();
	return h;
}

static int dpl_has(void *h, const char *sym) { return dlsym(h, sym) != NULL; }
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"
)

// The cgo provider's loader (build tag rdma): rdma-core is opened at run
// time, not linked, so a binary built with the tag starts and serves TCP on
// a host without it, and says what is missing when RDMA is asked for. The
// provider itself is provider.go over the C layer (dplverbs.h).

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

func probe() error {
	var errs []error
	for _, l := range rdmaCore {
		name := C.CString(l.lib)
		var cerr *C.char
		h := C.dpl_load(name, &cerr)
		C.free(unsafe.Pointer(name))
		if h == nil {
			errs = append(errs, fmt.Errorf("cannot load %s (%s): install rdma-core's libraries (Debian: apt install libibverbs1 librdmacm1 ibverbs-providers)", l.lib, C.GoString(cerr)))
			continue
		}
		var missing []string
		for _, s := range l.syms {
			cs := C.CString(s)
			if C.dpl_has(h, cs) == 0 {
				missing = append(missing, s)
			}
			C.free(unsafe.Pointer(cs))
		}
		if len(missing) > 0 {
			errs = append(errs, fmt.Errorf("%s lacks %v: rdma-core is too old or not rdma-core", l.lib, missing))
		}
	}
	return errors.Join(errs...)
}
