package results

import "testing"

func TestReadRefPoint(t *testing.T) {
	at := []string{"10", "20", "30", "40", "50", "60", "70", "80"}
	for _, tc := range []struct {
		label, value, sweep string
		ok                  bool
		metric, x           string
		y                   float64
		stem                string
	}{
		{"Peak TPS, EDP standard with UPTv2 (full DPU acceleration), 80 instances", "almost 20M", "instances", true, MetricOps, "80", 20e6, "Peak TPS, EDP standard with UPTv2 (full DPU acceleration)"},
		{"Peak TPS, standard ConnectX-5 NIC without offload (reached at 30 instances)", "about 12.75M", "instances", true, MetricOps, "30", 12.75e6, "Peak TPS, standard ConnectX-5 NIC without offload"},
		{"Throughput RC, instances=40", "125,000 ops/s", "instances", true, MetricOps, "40", 125000, "Throughput RC"},
		{"Average latency, instance: 10", "3.2 µs", "instances", true, MetricLatAvg, "10", 0.0032, "Average latency"},
		{"p99 latency at 20 instances", "1.5 ms", "instances", true, MetricLatP99, "20", 1.5, "p99 latency at"},
		// Not one number at one point of this run's sweep.
		{"Peak TPS, EDP standard with partial DPU offload (default mode)", "17.74M", "instances", false, "", "", 0, ""},
		{"Redis servers needed (30–80 instances per ESX host)", "14–18% fewer", "instances", false, "", "", 0, ""},
		{"Peak TPS at 30–80 instances", "20M", "instances", false, "", "", 0, ""},
		{"Throughput RC → UC, 16 / 32 instances", "125,000 → 158,000 ops/s (+26%)", "instances", false, "", "", 0, ""},
		{"Peak TPS, 90 instances", "20M", "instances", false, "", "", 0, ""},
		{"Peak TPS, 80 instances", "20M", "clients", false, "", "", 0, ""},
		{"Latency, 80 instances", "3.2 µs", "instances", false, "", "", 0, ""},
		{"DPU host against non-DPU host, 80 instances", ">30% more throughput", "instances", false, "", "", 0, ""},
		{"Peak TPS, 10 instances and 80 instances", "20M", "instances", false, "", "", 0, ""},
		{"Peak TPS, 80 instances", "20M", "", false, "", "", 0, ""},
	} {
		rp, ok := readRefPoint(Reference{Label: tc.label, Value: tc.value, Source: "s"}, tc.sweep, at)
		if ok != tc.ok {
			t.Errorf("%q = %q over %q: ok = %v, want %v", tc.label, tc.value, tc.sweep, ok, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		if rp.metric != tc.metric || rp.at != tc.x || rp.y != tc.y || rp.stem != tc.stem {
			t.Errorf("%q = %q: got %s at %s = %v (stem %q), want %s at %s = %v (stem %q)", tc.label, tc.value, rp.metric, rp.at, rp.y, rp.stem, tc.metric, tc.x, tc.y, tc.stem)
		}
	}
}

func TestRefLegendFitsAChart(t *testing.T) {
	l := refLegend("Peak TPS, EDP standard with UPTv2 (full DPU acceleration)", `NVIDIA/VMware whitepaper "Accelerating Redis Performance Using VMware vSphere 8 and NVIDIA BlueField DPUs", summary (seed 002)`)
	if want := `published (NVIDIA/VMware whitepaper…): Peak TPS, EDP standard with UPTv2 (full DPU acceleration)`; l != want {
		t.Errorf("legend %q, want %q", l, want)
	}
	if l := refLegend("Throughput RC", "seed 001"); l != "published (seed 001): Throughput RC" {
		t.Errorf("short legend cut: %q", l)
	}
}
