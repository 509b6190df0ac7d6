package results

import (
	"math"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/labs/tco"
)

// tcoCompare is a compare of a standard and an accelerated host swept over
// instances, with the cores each used per million TPS (mean, stddev, runs)
// at each point: as vSphere's host counters (esxi) or as the guests' TPS
// per busy core.
func tcoCompare(esxi bool, points map[string][2]MeanStd, tps float64) *Compare {
	c := &Compare{Step: "compare", Sweep: "instances", Variants: []VariantResult{{Label: "Standard NIC"}, {Label: "BlueField UPTv2"}}}
	for _, v := range []string{"10", "30", "80"} {
		pv, ok := points[v]
		if !ok {
			continue
		}
		for i := range 2 {
			m := pv[i]
			st := Stats{OpsPerSec: MeanStd{Mean: tps, N: m.N}}
			if esxi {
				st.Metrics = map[string]MeanStd{MetricESXiCoresPerMOps: m}
			} else {
				// TPS per busy core is the reciprocal; its spread scales
				// with it near the mean.
				per := MeanStd{Mean: 1e6 / m.Mean, Stddev: 1e6 / m.Mean * m.Stddev / m.Mean, N: m.N}
				st.OpsPerBusyCore = &per
			}
			c.Variants[i].Points = append(c.Variants[i].Points, SweepPoint{Value: v, Stats: st})
		}
	}
	return c
}

func msn(mean, sd float64, n int) MeanStd { return MeanStd{Mean: mean, Stddev: sd, N: n} }

func TestMeasuredSaving(t *testing.T) {
	sure := map[string][2]MeanStd{
		"10": {msn(10, 0.1, 3), msn(9.9, 0.1, 3)}, // 1%, within the noise
		"30": {msn(10, 0.1, 3), msn(8, 0.1, 3)},   // 20% fewer, beyond the noise
		"80": {msn(10, 0.1, 3), msn(11, 0.1, 3)},  // 10% more: no saving
	}
	for _, esxi := range []bool{true, false} {
		b, why := MeasuredSaving(tcoCompare(esxi, sure, 2e6))
		if b == nil {
			t.Fatalf("esxi=%v: %s", esxi, why)
		}
		wantCPU, wantMetric := CPUHostESXi, MetricESXiCoresPerMOps
		if !esxi {
			wantCPU, wantMetric = CPUServerHost, MetricOpsPerCore
		}
		if b.CPU != wantCPU || b.Metric != wantMetric || len(b.Points) != 3 {
			t.Fatalf("esxi=%v: basis %+v", esxi, b)
		}
		p10, _ := b.Point("10")
		p30, _ := b.Point("30")
		p80, _ := b.Point("80")
		if p10.Saving || !strings.Contains(p10.Why, "noise") {
			t.Errorf("esxi=%v at 10: %+v, want within the noise", esxi, p10)
		}
		// 2M TPS at 8 instead of 10 cores per M TPS: 4 cores freed, 20%.
		if !p30.Saving || math.Abs(p30.SavedPct-20) > 1e-9 || math.Abs(p30.CoresFreed-4) > 1e-9 || !p30.HasP || p30.P >= Alpha {
			t.Errorf("esxi=%v at 30: %+v, want a 20%% saving, 4 cores freed", esxi, p30)
		}
		if p80.Saving || p80.SavedPct >= 0 || !strings.Contains(p80.Why, "more cores") {
			t.Errorf("esxi=%v at 80: %+v, want no saving", esxi, p80)
		}
	}
	one := map[string][2]MeanStd{"30": {msn(10, 0, 1), msn(8, 0, 1)}}
	b, _ := MeasuredSaving(tcoCompare(true, one, 2e6))
	if p, _ := b.Point("30"); p.Saving || !strings.Contains(p.Why, "1 run a side") {
		t.Errorf("one run a side: %+v", p)
	}
	// Nothing to read: no CPU, one variant.
	none := tcoCompare(true, sure, 2e6)
	for i := range none.Variants {
		for j := range none.Variants[i].Points {
			none.Variants[i].Points[j].Stats.Metrics = nil
		}
	}
	if b, why := MeasuredSaving(none); b != nil || !strings.Contains(why, "no CPU") {
		t.Errorf("no CPU: %+v, %q", b, why)
	}
	single := tcoCompare(true, sure, 2e6)
	single.Variants = single.Variants[:1]
	if b, why := MeasuredSaving(single); b != nil || why == "" {
		t.Errorf("one variant: %+v, %q", b, why)
	}
}

// TestTCOReportLabels: report.md and report.html show each input with its
// unit and source, how the saving was measured, and, without a saving, the
// reason and no savings.
func TestTCOReportLabels(t *testing.T) {
	c := tcoCompare(true, map[string][2]MeanStd{"30": {msn(10, 0.1, 3), msn(8, 0.1, 3)}, "80": {msn(10, 0.1, 3), msn(11, 0.1, 3)}}, 2e6)
	b, _ := MeasuredSaving(c)
	b.Pick(30, true)
	p30, _ := b.Point("30")
	est, err := tco.Make(map[string]float64{tco.SavedPct: p30.Pct(), tco.Instances: 30, tco.Servers: 10000},
		tco.Provenance{Basis: b, Sources: map[string]string{tco.SavedPct: tco.Measured, tco.Servers: tco.Entered}})
	if err != nil {
		t.Fatal(err)
	}
	r := &Results{Version: ResultsVersion, Lab: "l", Title: "t", Benches: []Compare{*c}, TCO: est, Status: RunComplete}
	md := RenderMarkdown(r)
	for _, want := range []string{"| servers_saved_pct | 20 | % | measured |", "| servers | 10,000 | servers | entered |", "| dpu_premium | 2,560 | $ per server | assumed |",
		"| instances | 30 | instances per host | assumed |", "host (ESXi) CPU", "frees 4.0 cores per host", "| total_savings_usd |", "| 80 | -10.0% |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md[strings.Index(md, "## TCO"):])
		}
	}
	html, err := RenderHTML(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<td>measured</td>", "<td>$ per server</td>", "host (ESXi) CPU"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}

	b.Pick(80, true)
	p80, _ := b.Point("80")
	none, err := tco.Make(map[string]float64{tco.Instances: 80}, tco.Provenance{Basis: b, NoSaving: "no saving measured: " + p80.Why})
	if err != nil {
		t.Fatal(err)
	}
	r.TCO = none
	md = RenderMarkdown(r)
	sec := md[strings.Index(md, "## TCO"):]
	if !strings.Contains(sec, "No savings shown: no saving measured") || strings.Contains(sec, "total_savings_usd") || strings.Contains(sec, "| servers_saved_pct") {
		t.Errorf("no saving: report.md's TCO section:\n%s", sec)
	}
}
