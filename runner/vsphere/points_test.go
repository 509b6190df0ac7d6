package vsphere

import (
	"strings"
	"testing"
	"time"

	"github.com/vmware/govmomi/vim25/types"
)

// TestPointsConversion feeds points() a query result as vCenter returns it
// (oldest sample first, aligned 20 s samples) and checks the units, the
// per-second holding, Since and the -1 "no value" marker.
func TestPointsConversion(t *testing.T) {
	const (
		kUsage = iota + 1
		kUsed
		kReady
		kNet
		kPower
	)
	ci := func(key int32, group, name, rollup, unit string) *types.PerfCounterInfo {
		return &types.PerfCounterInfo{Key: key, GroupInfo: &types.ElementDescription{Key: group}, NameInfo: &types.ElementDescription{Key: name},
			RollupType: types.PerfSummaryType(rollup), UnitInfo: &types.ElementDescription{Key: unit}}
	}
	byKey := map[int32]*types.PerfCounterInfo{
		kUsage: ci(kUsage, "cpu", "usage", "average", "percent"),
		kUsed:  ci(kUsed, "cpu", "used", "summation", "millisecond"),
		kReady: ci(kReady, "cpu", "ready", "summation", "millisecond"),
		kNet:   ci(kNet, "net", "usage", "average", "kiloBytesPerSecond"),
		kPower: ci(kPower, "power", "power", "average", "watt"),
	}
	// vCenter's clock runs 3 s ahead of ours.
	offset := 3 * time.Second
	c := &Client{offset: offset}
	s := &Sampler{Client: c}
	base := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC) // our clock
	vc := func(d time.Duration) time.Time { return base.Add(offset + d) }
	series := func(key int32, inst string, v ...int64) types.BasePerfMetricSeries {
		return &types.PerfMetricIntSeries{PerfMetricSeries: types.PerfMetricSeries{Id: types.PerfMetricId{CounterId: key, Instance: inst}}, Value: v}
	}
	m := &types.PerfEntityMetric{
		SampleInfo: []types.PerfSampleInfo{{Timestamp: vc(20 * time.Second), Interval: 20}, {Timestamp: vc(40 * time.Second), Interval: 20}},
		Value: []types.BasePerfMetricSeries{
			series(kUsage, "", 4250, 5000),    // 42.50 %, 50.00 %
			series(kUsed, "", 160000, 200000), // ms over 20 s: 8 and 10 cores
			series(kReady, "", 400, -1),       // 2 % of one CPU; then no value
			series(kNet, "vmnic0", 125000, 0), // KB/s
			series(kNet, "vmnic1", 5, 7),      //
			series(kPower, "", 412, 455),      // W
		},
	}
	var notes []string
	note := func(n string) { notes = append(notes, n) }
	e := &entity{host: "esx02", interval: 20}
	since := base.Add(10 * time.Second)
	pts := s.points(e, m, byKey, since, note)

	// Since clips the first sample (0-20 s) to 10-20 s; the second is whole.
	if len(pts) != 30 {
		t.Fatalf("%d points, want 10 + 20", len(pts))
	}
	for i, p := range pts {
		if want := since.Add(time.Duration(i) * time.Second); !p.T.Equal(want) {
			t.Fatalf("point %d at %v, want %v (our clock, offset removed)", i, p.T, want)
		}
		if p.Source != Source || p.Host != "esx02" || p.Interval != 20*time.Second {
			t.Fatalf("point %d: %+v", i, p)
		}
	}
	first, second := pts[0], pts[10]
	if !first.SampleEnd.Equal(base.Add(20*time.Second)) || !second.SampleEnd.Equal(base.Add(40*time.Second)) {
		t.Fatalf("sample ends %v %v", first.SampleEnd, second.SampleEnd)
	}
	check := func(name string, got *float64, want float64) {
		t.Helper()
		if got == nil || *got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("cpu usage %", first.CPUUsagePct, 42.5)
	check("cpu used cores", first.CPUUsedCores, 8)
	check("cpu ready %", first.CPUReadyPct, 2)
	check("power W", first.PowerWatts, 412)
	check("cpu usage % (2nd)", second.CPUUsagePct, 50)
	check("cpu used cores (2nd)", second.CPUUsedCores, 10)
	check("power W (2nd)", second.PowerWatts, 455)
	if second.CPUReadyPct != nil {
		t.Errorf("-1 became %v: it means no value", *second.CPUReadyPct)
	}
	if first.NetKBps["vmnic0"] != 125000 || first.NetKBps["vmnic1"] != 5 || second.NetKBps["vmnic0"] != 0 {
		t.Errorf("net %v %v", first.NetKBps, second.NetKBps)
	}
	// Held values are copies: changing one second's map leaves the others.
	pts[0].NetKBps["vmnic0"] = -1
	if pts[1].NetKBps["vmnic0"] != 125000 {
		t.Error("seconds share one map")
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "no value for cpu.ready.summation") {
		t.Errorf("notes %q", notes)
	}
	// The same result again (a poll that returns what was read): nothing new.
	if again := s.points(e, m, byKey, since, note); len(again) != 0 {
		t.Errorf("%d points delivered twice", len(again))
	}
}
