package results

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestEveryStatHasAMetric ties the table to the summary it reads: each
// Stats field (by its JSON name) is one metric, read from that field, and
// the names are the keys deltas use. Stats.Metrics, which holds metrics by
// name, is not one: TestMetricsByName covers it.
func TestEveryStatHasAMetric(t *testing.T) {
	st := reflect.TypeOf(Stats{})
	seen := map[string]bool{}
	for i := range st.NumField() {
		f := st.Field(i)
		if f.Type.Kind() == reflect.Map {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		m, ok := LookupMetric(name)
		if !ok {
			t.Errorf("Stats.%s (%s) has no metric: add it to metricTable", f.Name, name)
			continue
		}
		seen[name] = true
		// The descriptor reads this very field.
		var s Stats
		v := reflect.ValueOf(&s).Elem().Field(i)
		want := MeanStd{Mean: float64(i + 1), N: 1}
		if v.Kind() == reflect.Pointer {
			v.Set(reflect.ValueOf(&want))
		} else {
			v.Set(reflect.ValueOf(want))
		}
		if got := m.Read(&s); got == nil || got.Mean != want.Mean {
			t.Errorf("metric %s does not read Stats.%s (got %v)", name, f.Name, got)
		}
		if m.Label == "" || m.Unit == "" || m.Help == "" {
			t.Errorf("metric %s lacks a label, unit or help", name)
		}
	}
	summarised := 0
	for _, m := range MetricDescs() {
		if m.Read != nil && !slices.Contains(byNameMetrics, m.Name) {
			summarised++
		}
	}
	if len(seen) != summarised {
		t.Errorf("%d metrics in the table have a summary, %d Stats fields", summarised, len(seen))
	}
	if !LowerIsBetter(MetricLatP99) || LowerIsBetter(MetricOps) || !Neutral(MetricNetGbps) {
		t.Error("directions do not come from the table")
	}
}

// TestMetricTable: every entry is complete and consistent (RegisterMetric
// refuses the same faults), names are unique, and samples.csv keeps the
// columns it had before the table drove it.
func TestMetricTable(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range MetricDescs() {
		if err := m.check(); err != nil {
			t.Error(err)
		}
		if seen[m.Name] {
			t.Errorf("metric %s twice", m.Name)
		}
		seen[m.Name] = true
		if m.Parent != "" && !seen[m.Parent] {
			t.Errorf("metric %s: parent %s must come first", m.Name, m.Parent)
		}
	}
	b, err := SamplesCSV(&Results{})
	if err != nil {
		t.Fatal(err)
	}
	const header = "step,variant,figures,sweep,run,t_seconds,ops_per_sec,latency_avg_ms,latency_p50_ms,latency_p99_ms,latency_max_ms,errors,server_cpu_pct,network_cpu_pct,net_gbps,power_watts,esxi_cpu_pct,esxi_cores_per_million_ops,esxi_watts_per_million_ops,esxi_net_gbps,esxi_vm_net_gbps,esxi_cpu_ready_pct,rdma_gbps,rdma_packets_per_sec,rdma_out_of_sequence,rdma_packet_seq_err,rdma_local_ack_timeout_err,rdma_rnr_nak_retry_err\n"
	if string(b) != header {
		t.Errorf("samples.csv header\n%s\nwant\n%s", b, header)
	}
	for _, bad := range []MetricDesc{
		{Name: "x", Label: "x", Unit: "u", Help: "h"},
		{Name: "x", Label: "x", Unit: "u", Help: "h", Read: StatsMetric("x"), Plots: PlotPerSecond},
		{Name: "x", Label: "x", Unit: "u", Help: "h", Read: StatsMetric("x"), Live: &Live{Chart: "c"}},
		{Name: MetricOps, Label: "x", Unit: "u", Help: "h", Read: StatsMetric("x")},
	} {
		if remove, err := RegisterMetric(bad); err == nil {
			remove()
			t.Errorf("RegisterMetric(%+v) accepted", bad)
		}
	}
}

// TestMetricsByName: a metric without a field of its own goes from
// Point.Metrics through the run's summary to Stats.Metrics, and from there
// into deltas, report.md's table and samples.csv once it has an entry.
func TestMetricsByName(t *testing.T) {
	const name = "hypervisor_cpu_pct"
	remove, err := RegisterMetric(MetricDesc{Name: name, Label: "hypervisor CPU %", Unit: "%", Help: "the hypervisor's CPU", Better: Lower,
		Sample: PointMetric(name), Read: StatsMetric(name), Digits: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	run := func(v ...float64) RunResult {
		var r RunResult
		for i, x := range v {
			r.Series = append(r.Series, Point{T: float64(i), Metrics: map[string]float64{name: x}})
		}
		r.Series = append(r.Series, Point{T: 9}) // a second it did not report
		r.SummarizeSeries(4)
		return r
	}
	c := Compare{Step: "c", Variants: []VariantResult{
		{Label: "a", Points: []SweepPoint{{Runs: []RunResult{run(10, 20), run(30)}}}},
		{Label: "b", Points: []SweepPoint{{Runs: []RunResult{run(5, 10), run(15)}}}},
	}}
	for i := range c.Variants {
		c.Variants[i].Points[0].Stats = Summarize(c.Variants[i].Points[0].Runs)
	}
	ComputeDeltas(&c)
	if got, ok := c.Variants[0].Points[0].Stats.Metric(name); !ok || got.Mean != 22.5 || got.N != 2 {
		t.Fatalf("summary %+v %v, want the mean of the runs' means (15, 30)", got, ok)
	}
	if d := c.Variants[1].Points[0].DeltaPct[name]; d != -50 {
		t.Errorf("delta %v, want -50", d)
	}
	r := &Results{Benches: []Compare{c}}
	if md := RenderMarkdown(r); !strings.Contains(md, "| hypervisor CPU % |") || !strings.Contains(md, "(~ no significant difference: -50.0%, p=0.350)") {
		t.Errorf("report.md lacks the metric or its delta:\n%s", md)
	}
	csv, _ := SamplesCSV(r)
	if !strings.HasSuffix(strings.SplitN(string(csv), "\n", 2)[0], ","+name) || !strings.Contains(string(csv), ",10.00\n") || !strings.HasSuffix(string(csv), ",\n") {
		t.Errorf("samples.csv lacks the metric's column, its values or its gaps:\n%s", csv)
	}
	// Read back from results.json as written.
	dir := t.TempDir()
	if err := WriteResults(dir, r); err != nil {
		t.Fatal(err)
	}
	back, err := LoadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := back.Benches[0].Variants[1].Points[0].Stats.Metric(name); !ok || got.Mean != 11.25 {
		t.Errorf("after a round trip: %+v %v", got, ok)
	}
}
