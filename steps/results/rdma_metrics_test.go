package results

import (
	"strings"
	"testing"
)

// The RDMA port metrics, put in Point.Metrics by the engine from the
// server's InfiniBand counters, reach the summaries, report.md and
// samples.csv; a compare whose hosts had no RDMA ports shows none of them.
func TestRDMAPortMetricsInReports(t *testing.T) {
	run := func(gbps, ooo float64) RunResult {
		var r RunResult
		for i := range 3 {
			p := Point{T: float64(i + 1), OpsPerSec: 1000}
			if gbps >= 0 {
				p.Metrics = map[string]float64{MetricRDMAGbps: gbps, MetricRDMAOutOfSequence: ooo, MetricRDMASeqNAKs: 0}
			}
			r.Series = append(r.Series, p)
		}
		r.SummarizeSeries(4)
		return r
	}
	compare := func(withIB bool) *Results {
		g := -1.0
		if withIB {
			g = 12.5
		}
		c := Compare{Step: "sizes", Variants: []VariantResult{
			{Label: "RDMA RC", Points: []SweepPoint{{Runs: []RunResult{run(g, 0), run(g, 0)}}}},
			{Label: "RDMA UC", Points: []SweepPoint{{Runs: []RunResult{run(g, 3), run(g, 5)}}}},
		}}
		for i := range c.Variants {
			c.Variants[i].Points[0].Stats = Summarize(c.Variants[i].Points[0].Runs)
		}
		ComputeDeltas(&c)
		return &Results{Benches: []Compare{c}}
	}

	r := compare(true)
	if got, ok := r.Benches[0].Variants[1].Points[0].Stats.Metric(MetricRDMAOutOfSequence); !ok || got.Mean != 4 {
		t.Fatalf("UC out-of-sequence summary %+v %v, want the mean of 3 and 5", got, ok)
	}
	md := RenderMarkdown(r)
	for _, want := range []string{"| RDMA ports Gb/s |", "| RDMA out-of-sequence/s |", "| RDMA sequence NAKs/s |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	// Counters the port did not have were never measured: no row.
	if strings.Contains(md, "RDMA ack timeouts/s") || strings.Contains(md, "RDMA RNR retry errors/s") {
		t.Errorf("report.md shows counters nobody measured:\n%s", md)
	}
	csv, err := SamplesCSV(r)
	if err != nil {
		t.Fatal(err)
	}
	header, _, _ := strings.Cut(string(csv), "\n")
	for _, col := range []string{MetricRDMAGbps, MetricRDMAOutOfSequence, MetricRDMASeqNAKs, MetricRDMAAckTimeouts, MetricRDMARNRRetryErrors} {
		if !strings.Contains(header, ","+col) {
			t.Errorf("samples.csv header lacks %s: %s", col, header)
		}
	}
	if !strings.Contains(string(csv), ",12.5000,") {
		t.Errorf("samples.csv lacks the RDMA Gb/s values:\n%s", csv)
	}

	// Hosts without InfiniBand: the metrics stay out of the tables.
	if md := RenderMarkdown(compare(false)); strings.Contains(md, "RDMA ports") || strings.Contains(md, "out-of-sequence") {
		t.Errorf("report.md shows RDMA rows for hosts without RDMA ports:\n%s", md)
	}
}
