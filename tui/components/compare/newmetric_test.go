package compare_test

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/steps/results"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/components/compare"
	"github.com/dpulab/dpulab/tui/components/dashboard"
)

const hypervisorCPU = "hypervisor_cpu_pct"

// hypervisorCPUDesc is a metric the next issues add (the hypervisor's CPU,
// read from vCenter): one table entry, its values carried by name.
var hypervisorCPUDesc = results.MetricDesc{
	Name: hypervisorCPU, Label: "hypervisor CPU %", Unit: "%", Help: "the ESXi host's CPU spent for the VM", Better: results.Lower,
	Sample: results.PointMetric(hypervisorCPU), Read: results.StatsMetric(hypervisorCPU), Digits: 2,
	Live:  &results.Live{Chart: "hypervisor CPU (%)", Big: "hyp"},
	Plots: results.PlotPerSecond | results.PlotSweep,
}

// swept is a compare of two variants over two sweep values whose points
// carry the hypervisor's CPU, summarised as the engine does.
func swept() *results.Results {
	run := func(ops, hyp float64) results.RunResult {
		r := results.RunResult{Run: 1, OpsPerSec: ops}
		for i := range 4 {
			r.Series = append(r.Series, results.Point{T: float64(i), OpsPerSec: ops, Metrics: map[string]float64{hypervisorCPU: hyp}})
		}
		r.SummarizeSeries(8)
		return r
	}
	c := results.Compare{Step: "compare", Title: "tcp vs rdma", Sweep: "instances", Variants: []results.VariantResult{
		{Label: "tcp", Points: []results.SweepPoint{{Value: "10", Runs: []results.RunResult{run(100, 40)}}, {Value: "20", Runs: []results.RunResult{run(180, 70)}}}},
		{Label: "rdma", Points: []results.SweepPoint{{Value: "10", Runs: []results.RunResult{run(130, 20)}}, {Value: "20", Runs: []results.RunResult{run(250, 35)}}}},
	}}
	for _, v := range c.Variants {
		for i := range v.Points {
			v.Points[i].Stats = results.Summarize(v.Points[i].Runs)
		}
	}
	results.ComputeDeltas(&c)
	return &results.Results{Version: results.ResultsVersion, Lab: "lab", Benches: []results.Compare{c}}
}

// views renders every view a metric can appear in: the dashboard during a
// bench, the compare view's table, charts and sweep tabs, report.md and
// samples.csv.
func views(t *testing.T, res *results.Results) map[string]string {
	t.Helper()
	out := map[string]string{}
	d := dashboard.New(common.NewCommon(true, 120, 40))
	for _, p := range res.Benches[0].Variants[0].Points[0].Runs[0].Series {
		d.AddSample(steps.Sample{Step: "compare", Variant: "tcp", Run: 1, Point: p})
	}
	out["dashboard"] = d.View()
	for tab, name := range map[compare.Tab]string{compare.TabTable: "compare table", compare.TabCharts: "compare charts", compare.TabSweep: "sweep chart"} {
		m := compare.New(common.NewCommon(true, 120, 60), res, nil)
		m.SetTab(tab)
		out[name] = ansi.Strip(m.View())
	}
	md := results.RenderMarkdown(res)
	out["report.md table"], _, _ = strings.Cut(md, "```")
	out["report.md charts"] = md[len(out["report.md table"]):]
	csv, err := results.SamplesCSV(res)
	if err != nil {
		t.Fatal(err)
	}
	out["samples.csv"] = string(csv)
	return out
}

// TestNewMetricShowsEverywhere: adding a metric's table entry is all it
// takes for it to show in the dashboard (a chart and a big number), the
// compare table with its delta, the per-second and sweep charts, report.md
// and samples.csv; without the entry it shows nowhere.
func TestNewMetricShowsEverywhere(t *testing.T) {
	want := map[string][]string{
		"dashboard":        {"hypervisor CPU (%)", "hyp 40.0 %"},
		"compare table":    {"hypervisor CPU %", "-50.0% ?"},
		"compare charts":   {"hypervisor CPU % per second"},
		"sweep chart":      {"mean hypervisor CPU % vs instances"},
		"report.md table":  {"| hypervisor CPU % |", "(-50.0%, 1 run a side: noise not measured)"},
		"report.md charts": {"mean hypervisor CPU % against instances", "hypervisor CPU % per second (run 1, instances=20)"},
		"samples.csv":      {"," + hypervisorCPU + "\n", ",40.00\n"},
	}
	before := views(t, swept())
	remove, err := results.RegisterMetric(hypervisorCPUDesc)
	if err != nil {
		t.Fatal(err)
	}
	after := views(t, swept())
	remove()
	for view, ws := range want {
		for _, w := range ws {
			if !strings.Contains(after[view], w) {
				t.Errorf("%s lacks %q with the entry:\n%s", view, w, after[view])
			}
			if strings.Contains(before[view], w) {
				t.Errorf("%s shows %q without the entry", view, w)
			}
		}
	}
	// The existing metrics keep their place beside the new one.
	for view, w := range map[string]string{"dashboard": "latency (ms)", "compare charts": "p99 latency ms per second", "sweep chart": "mean TPS vs instances"} {
		if !strings.Contains(after[view], w) {
			t.Errorf("%s lost %q:\n%s", view, w, after[view])
		}
	}
}
