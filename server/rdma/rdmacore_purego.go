//go:build rdma && !rdmasim && !cgo && linux && (amd64 || arm64)

package rdma

import (
	"errors"
	"fmt"

	"github.com/ebitengine/purego"
)

// The pure-Go provider's loader: rdmacore.go's probe over purego.Dlopen
// instead of cgo's dlopen, with the same words, so a CGO_ENABLED=0 -tags
// rdma binary says what a host lacks exactly as a cgo one does. The
// libraries stay loaded for the provider (verbs_purego.go).

// probe opens rdmaCore's libraries and looks up their entry points.
func probe() error {
	var errs []error
	for _, l := range rdmaCore {
		h, err := purego.Dlopen(l.lib, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err != nil {
			errs = append(errs, fmt.Errorf("cannot load %s (%s): install rdma-core's libraries (Debian: apt install libibverbs1 librdmacm1 ibverbs-providers)", l.lib, err))
			continue
		}
		var missing []string
		for _, s := range l.syms {
			if p, err := purego.Dlsym(h, s); err != nil || p == 0 {
				missing = append(missing, s)
			}
		}
		if len(missing) > 0 {
			errs = append(errs, fmt.Errorf("%s lacks %v: rdma-core is too old or not rdma-core", l.lib, missing))
		}
	}
	return errors.Join(errs...)
}
