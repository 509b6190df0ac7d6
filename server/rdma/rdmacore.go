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
	"unsafe"
)

// The cgo provider's loader (build tag rdma): rdma-core is opened at run
// time, not linked, so a binary built with the tag starts and serves TCP on
// a host without it, and says what is missing when RDMA is asked for. The
// provider itself is provider.go over the C layer (dplverbs.h); the list
// of libraries and entry points, Probe and the device check are
// rdmacore_common.go's, shared with the pure-Go provider's loader
// (rdmacore_purego.go).

// probe opens rdmaCore's libraries and looks up their entry points.
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
