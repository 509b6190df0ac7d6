package load

import (
	"testing"

	"github.com/dpulab/dpulab/runner/vsphere"
	"github.com/dpulab/dpulab/steps/results"
)

// TestHostESXiMetricsPerSecond: the merge of one second, by hand.
func TestHostESXiMetricsPerSecond(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	hs := &hostSampler{hosts: []string{"h1", "h2"}, vms: []string{"vm1", "vm2"}, pts: map[string]map[int64]vsphere.Point{
		"h1": {10: {CPUUsagePct: f(20), CPUUsedCores: f(4), CPUReadyPct: f(3), PowerWatts: f(300), NetKBps: map[string]float64{"vmnic0": 1000, "vmnic1": 500}}},
		"h2": {10: {CPUUsagePct: f(40), CPUUsedCores: f(8), CPUReadyPct: f(5), NetKBps: map[string]float64{"vmnic0": 500}}, 11: {CPUUsagePct: f(1)}, 12: {CPUUsagePct: f(1)}},
	}, vmPts: map[string]map[int64]vsphere.Point{
		"vm1": {10: {VM: "vm1", VMNetKBps: f(700)}, 12: {VM: "vm1", VMNetKBps: f(1)}},
		"vm2": {10: {VM: "vm2", VMNetKBps: f(300)}},
	}}
	hs.pts["h1"][12] = vsphere.Point{CPUUsagePct: f(1)}
	m := hs.metricsAt(10, 2e6)
	want := map[string]float64{results.MetricESXiCPU: 30, results.MetricESXiCoresPerMOps: 6, results.MetricESXiCPUReady: 4,
		results.MetricESXiNetGbps: 2000 * 1024 * 8 / 1e9, results.MetricESXiVMNetGbps: 1000 * 1024 * 8 / 1e9}
	if len(m) != len(want) {
		t.Errorf("metrics %v, want %v (no watts: h2 reports no power)", m, want)
	}
	// A second one VM lacks has the hosts' figures, not the VMs'.
	if m := hs.metricsAt(12, 2e6); m == nil || m[results.MetricESXiCPU] != 1 {
		t.Errorf("second 12: %v, want the hosts' CPU", m)
	} else if _, ok := m[results.MetricESXiVMNetGbps]; ok {
		t.Errorf("second 12 has the VMs' network with vm2's second missing: %v", m)
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	if m := hs.metricsAt(11, 2e6); m != nil {
		t.Errorf("a second one host lacks: %v, want nothing", m)
	}
}
