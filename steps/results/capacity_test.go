package results

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/steps/results/svgchart"
)

// capacityCompare is a compare swept over instances with a capacity search
// at every point: the baseline ran flat out too, the other variant ran the
// search only (mode: instead); at one point nothing met the objective and
// at another the search stopped at its max_rate.
func capacityCompare() Compare {
	search := func(rate, failed float64, probes int) *Capacity {
		return &Capacity{Objective: "p99<=1ms", Percentile: 99, CapMs: 1, Precision: 0.05, RateOpsPerSec: rate, OpsPerSec: rate * 0.999,
			PercentileMs: 0.8, FailedRateOpsPerSec: failed, Probes: probes}
	}
	run := func(ops float64) []RunResult {
		return []RunResult{{Run: 1, OpsPerSec: ops, LatencyMs: Latency{Avg: 1, P99: 3}}, {Run: 2, OpsPerSec: ops * 1.02, LatencyMs: Latency{Avg: 1, P99: 3}}}
	}
	c := Compare{Step: "scale", Title: "Scale", Sweep: "instances", Variants: []VariantResult{
		{Label: "standard NIC", Points: []SweepPoint{{Value: "1", Runs: run(100_000)}, {Value: "2", Runs: run(150_000)}}},
		{Label: "DPU", Points: []SweepPoint{{Value: "1"}, {Value: "2"}}},
	}}
	for vi := range c.Variants {
		for pi := range c.Variants[vi].Points {
			p := &c.Variants[vi].Points[pi]
			p.Stats = Summarize(p.Runs)
		}
	}
	first := search(80_000, 84_000, 9)
	cpu := 41.5
	first.ServerCPU, first.ServerCPUProbe, first.Clients = &cpu, 7, []string{"load1", "load2", "load3"}
	SetCapacity(&c.Variants[0].Points[0], first)
	SetCapacity(&c.Variants[0].Points[1], search(0, 500, 12))
	c.Variants[0].Points[1].Capacity.Limit = "min_rate"
	SetCapacity(&c.Variants[1].Points[0], search(120_000, 125_000, 10))
	max := search(200_000, 0, 9)
	max.Limit = "max_rate"
	SetCapacity(&c.Variants[1].Points[1], max)
	ComputeDeltas(&c)
	return c
}

func TestCapacityInResults(t *testing.T) {
	c := capacityCompare()
	base, dpu := c.Variants[0].Points, c.Variants[1].Points
	if ms, ok := base[0].Stats.Metric(MetricCapacity); !ok || ms.Mean != 80_000 || ms.N != 1 {
		t.Errorf("the capped TPS is %+v, %v", ms, ok)
	}
	if _, ok := base[1].Stats.Metric(MetricCapacity); ok {
		t.Error("a search that met nothing has a capped TPS")
	}
	if d := dpu[0].DeltaPct[MetricCapacity]; d != 50 {
		t.Errorf("delta of the capped TPS %v, want +50%%", d)
	}
	if _, ok := dpu[0].Stats.Metric(MetricOps); ok {
		t.Error("a point that ran the search only has a flat-out TPS")
	}
	// SetCapacity replaces the map: a copy taken before keeps its own.
	before := base[0].Stats.Metrics
	SetCapacity(&base[0], nil)
	if _, ok := before[MetricCapacity]; !ok || base[0].Capacity != nil {
		t.Error("SetCapacity changed a map another copy holds, or kept the search")
	}

	// results.json carries the search.
	c = capacityCompare()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back Compare
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if k := back.Variants[1].Points[1].Capacity; k == nil || k.Limit != "max_rate" || k.RateOpsPerSec != 200_000 || k.Probes != 9 {
		t.Errorf("capacity after a round trip: %+v", k)
	}
}

func TestCapacityMarkdown(t *testing.T) {
	c := capacityCompare()
	var b strings.Builder
	renderCompare(&b, &c)
	md := b.String()
	for _, want := range []string{
		"| TPS at latency cap |",
		"### TPS at p99 ≤ 1 ms (capacity search)",
		"| variant | instances | flat-out TPS | TPS at p99 ≤ 1 ms | p99 there ms | server CPU there | lowest failing rate | precision | probes | outcome |",
		"| standard NIC | 1 | 101,000 ± 1,414 | 80,000 | 0.800 | 41.5% | 84,000 | 5% | 9 | capacity in [80,000, 84,000) ops/s |",
		"| standard NIC | 2 | 151,500 ± 2,121 | none met it | – | – | 500 | 5% | 12 | missed down to 500 ops/s, the lowest rate a probe measures |",
		"| DPU | 1 | – | 120,000 |",
		"| DPU | 2 | – | 200,000 | 0.800 | – | – | 5% | 9 | still met at the highest rate allowed (max_rate): the capacity is higher |",
		"The load came from 3 client hosts (load1, load2, load3): every probe ran on all of them at once",
		"TPS at p99 ≤ 1 ms and flat out, against instances (1, 2)",
		"DPU at p99 ≤ 1 ms",
		"standard NIC flat out",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "DPU flat out") {
		t.Error("the chart draws a flat-out line for a variant that ran the search only")
	}

	// Without a search, nothing of it.
	plain := capacityCompare()
	for vi := range plain.Variants {
		for pi := range plain.Variants[vi].Points {
			SetCapacity(&plain.Variants[vi].Points[pi], nil)
		}
	}
	b.Reset()
	renderCompare(&b, &plain)
	if strings.Contains(b.String(), "capacity search") || strings.Contains(b.String(), "latency cap") {
		t.Errorf("a compare without a search shows one:\n%s", b.String())
	}
}

func TestCapacityChart(t *testing.T) {
	c := capacityCompare()
	r := &Results{Benches: []Compare{c}}
	var found *ReportChart
	charts := ReportCharts(r, &r.Benches[0])
	for i := range charts {
		if charts[i].Name == "scale-capacity" {
			found = &charts[i]
		}
	}
	if found == nil {
		t.Fatalf("no capacity chart among %d", len(charts))
	}
	ch := found.Chart
	if ch.Title != "TPS at p99 ≤ 1 ms and flat out against instances" || len(ch.Series) != 3 {
		t.Errorf("chart %q with %d series, want the capped and flat-out lines of the baseline and the DPU's capped one", ch.Title, len(ch.Series))
	}
	notes := strings.Join(ch.Notes, "\n")
	for _, want := range []string{"precision 5%", "9–12 probes a point", "standard NIC, instances=2: missed down to 500", "DPU, instances=2: still met at the highest rate allowed"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if _, err := svgchart.SVG(ch); err != nil {
		t.Errorf("SVG: %v", err)
	}

	// Without a sweep, one point per variant still draws.
	one := capacityCompare()
	one.Sweep = ""
	for vi := range one.Variants {
		one.Variants[vi].Points = one.Variants[vi].Points[:1]
		one.Variants[vi].Points[0].Value = ""
	}
	rc, ok := capacityChart(nil, &one)
	if !ok || rc.Chart.XLabel != "(no sweep)" {
		t.Fatalf("no-sweep chart: %+v, %v", rc.Chart, ok)
	}
	if _, err := svgchart.SVG(rc.Chart); err != nil {
		t.Errorf("SVG without a sweep: %v", err)
	}
	html, err := RenderHTML(&Results{Benches: []Compare{capacityCompare()}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "TPS at p99 ≤ 1 ms and flat out against instances") || !strings.Contains(string(html), "TPS at latency cap") {
		t.Error("report.html lacks the capacity chart or column")
	}
}
