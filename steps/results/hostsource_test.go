package results

import (
	"strings"
	"testing"
)

// TestHostMetricsSourceLine: a real vCenter is named by its product and
// url, a simulator as SIMULATED first, whatever product it reports; the
// report says so only for a simulator.
func TestHostMetricsSourceLine(t *testing.T) {
	real := HostMetricsSource{Step: "compare", VCenter: "https://vc.lab/sdk", Product: "VMware vCenter Server 8.0.2 build-22385739", ESXiHosts: []string{"esx1", "esx2"}, VMs: []string{"redis-dpu"}}
	if l := real.Line(); l != "VMware vCenter Server 8.0.2 build-22385739 at https://vc.lab/sdk; ESXi host(s) esx1, esx2; VM(s) redis-dpu" {
		t.Errorf("real: %s", l)
	}
	sim := real
	sim.Simulated, sim.Simulator = true, "govmomi vCenter simulator (vcsim)"
	if l := sim.Line(); !strings.HasPrefix(l, "SIMULATED: made-up figures from govmomi vCenter simulator (vcsim) at https://vc.lab/sdk (it reports itself as VMware vCenter Server 8.0.2") {
		t.Errorf("simulated: %s", l)
	}
	for _, tc := range []struct {
		src  HostMetricsSource
		want bool
	}{{real, false}, {sim, true}} {
		r := &Results{Lab: "l", Status: RunComplete, Benches: []Compare{{Step: "compare"}}, HostMetricsFrom: []HostMetricsSource{tc.src}}
		md := RenderMarkdown(r)
		if got := strings.Contains(md, "> **SIMULATED"); got != tc.want {
			t.Errorf("simulated=%v: banner %v:\n%s", tc.src.Simulated, got, md)
		}
		if !strings.Contains(md, "Host (ESXi) figures of this step from: "+tc.src.Line()) {
			t.Errorf("report.md lacks the source line:\n%s", md)
		}
	}
}
