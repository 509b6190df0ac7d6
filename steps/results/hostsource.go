package results

import (
	"fmt"
	"strings"
)

// HostMetricsSource says where a bench step's host (ESXi) figures came
// from: which vCenter, what it says it is, whether it is govmomi's
// simulator (every figure then made up: SIMULATED), and which ESXi hosts
// and VMs were read. One entry per bench or compare step that read
// vSphere.
type HostMetricsSource struct {
	Step string `json:"step"`
	// VCenter is the SDK url, without credentials.
	VCenter string `json:"vcenter"`
	// Product, Version and Build are what vCenter reports of itself
	// (AboutInfo); a simulator reports a real product's.
	Product string `json:"product,omitempty"`
	Version string `json:"version,omitempty"`
	Build   string `json:"build,omitempty"`
	// Simulated: the server was govmomi's vCenter simulator.
	Simulated bool `json:"simulated,omitempty"`
	// Simulator names the simulator when Simulated.
	Simulator string   `json:"simulator,omitempty"`
	ESXiHosts []string `json:"esxi_hosts"`
	VMs       []string `json:"vms,omitempty"`
}

// Line says the source in one line, SIMULATED first when it is.
func (s HostMetricsSource) Line() string {
	what := s.Product
	if what == "" {
		what = "vCenter (product not reported)"
	}
	var b strings.Builder
	if s.Simulated {
		fmt.Fprintf(&b, "SIMULATED: made-up figures from %s at %s (it reports itself as %s), not from a real vCenter", s.Simulator, s.VCenter, what)
	} else {
		fmt.Fprintf(&b, "%s at %s", what, s.VCenter)
	}
	fmt.Fprintf(&b, "; ESXi host(s) %s", strings.Join(s.ESXiHosts, ", "))
	if len(s.VMs) > 0 {
		fmt.Fprintf(&b, "; VM(s) %s", strings.Join(s.VMs, ", "))
	}
	return b.String()
}

// Simulated reports whether any host (ESXi) figure of the run came from a
// simulator.
func (r *Results) SimulatedHostMetrics() bool {
	for _, s := range r.HostMetricsFrom {
		if s.Simulated {
			return true
		}
	}
	return false
}

// hostSourcesFor lists the sources of one step's host (ESXi) figures.
func (r *Results) hostSourcesFor(step string) []string {
	var out []string
	for _, s := range r.HostMetricsFrom {
		if s.Step == step {
			out = append(out, s.Line())
		}
	}
	return out
}

// renderHostSourcesMD writes, under a bench's tables, where its host
// (ESXi) figures came from.
func renderHostSourcesMD(b *strings.Builder, r *Results, step string) {
	for _, l := range r.hostSourcesFor(step) {
		fmt.Fprintf(b, "Host (ESXi) figures of this step from: %s\n\n", l)
	}
}
