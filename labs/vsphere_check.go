package labs

import (
	"slices"
	"strings"
)

// A check step may ask vSphere instead of running a command: `vsphere:
// uptv2|uptv2-off|dpus|network-offload` checks, through vCenter (the
// inventory's vcenter: section; runner/vsphere), the prerequisites of DPU
// offload on the step's hosts: UPTv2 enabled and active on each VM's
// vmxnet3 adapter (or, for a default-mode VM, active on none), the DPUs the
// ESXi host reports, network offload on the distributed switch the VM's
// adapters use. The engine's half is steps/vsphere_check.go.

// VSphere check names, the values of a check step's vsphere: key.
const (
	VSphereUPTv2          = "uptv2"
	VSphereUPTv2Off       = "uptv2-off"
	VSphereDPUs           = "dpus"
	VSphereNetworkOffload = "network-offload"
)

// VSphereChecks lists them.
var VSphereChecks = []string{VSphereUPTv2, VSphereUPTv2Off, VSphereDPUs, VSphereNetworkOffload}

// checkStep reads a check step: verify: (a command) or vsphere: (a query
// of vCenter), one of the two.
func (p *parser) checkStep(s *Step, m *mapping, what string) {
	n := m.get("vsphere")
	if n == nil {
		if s.Verify == nil {
			p.errf(m.node, "%s: a check step needs verify: {run: COMMAND, ...} (or vsphere: %s)", what, strings.Join(VSphereChecks, "|"))
		}
		return
	}
	s.VSphere = p.str(n, what+" vsphere")
	if !slices.Contains(VSphereChecks, s.VSphere) {
		p.errf(n, "%s: vsphere: %q is not a vSphere check: use one of %s", what, s.VSphere, strings.Join(VSphereChecks, ", "))
	}
	if s.Verify != nil || len(s.Run) > 0 || s.Sudo {
		p.errf(n, "%s: a check step with vsphere: asks vCenter, it runs no command of its own: remove verify: and sudo: (skip_if: still runs on the host)", what)
	}
}
