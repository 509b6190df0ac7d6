package load

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dpulab/dpulab/runner"
)

// RDMADevice is one RDMA device of a host.
type RDMADevice struct {
	Name     string
	Software bool
}

// RDMADevicesScript lists the RDMA devices under sysfs (normally /sys),
// one a line: "software NAME" or "hardware NAME". POSIX sh; readlink -f is
// in coreutils and busybox.
func RDMADevicesScript(sysfs string) string {
	root := runner.Quote(sysfs)
	return fmt.Sprintf(`v=$(readlink -f %s)/devices/virtual/; for d in %s/class/infiniband/*; do [ -e "$d" ] || continue; case $(readlink -f "$d") in "$v"*) echo "software ${d##*/}";; *) echo "hardware ${d##*/}";; esac; done`, root, root)
}

// ParseRDMADevices reads RDMADevicesScript's output.
func ParseRDMADevices(lines []string) []RDMADevice {
	var out []RDMADevice
	for _, l := range lines {
		kind, name, ok := strings.Cut(strings.TrimSpace(l), " ")
		if !ok || name == "" || (kind != "software" && kind != "hardware") {
			continue
		}
		out = append(out, RDMADevice{Name: name, Software: kind == "software"})
	}
	return out
}

// SoftwareRDMAText names the software devices of hosts (in the order they
// were probed): "rxe0 on server, rxe1 on client", a host that has hardware
// devices too saying which; "" when there are none.
func SoftwareRDMAText(hosts []string, devs map[string][]RDMADevice) string {
	var parts []string
	for _, h := range hosts {
		var soft, hard []string
		for _, d := range devs[h] {
			if d.Software {
				soft = append(soft, d.Name)
			} else {
				hard = append(hard, d.Name)
			}
		}
		if len(soft) == 0 {
			continue
		}
		s := strings.Join(soft, " and ") + " on " + h
		if len(hard) > 0 {
			s += " (beside hardware " + strings.Join(hard, " and ") + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(slices.Compact(parts), ", ")
}
