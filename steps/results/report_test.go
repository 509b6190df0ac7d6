package results

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func fp(x float64) *float64 { return &x }

func sampleResults() *Results {
	run := func(n int, ops, avg, p99, cpu float64) RunResult {
		r := RunResult{Run: n, OpsPerSec: ops, LatencyMs: Latency{Avg: avg, P99: p99}, ServerCPU: fp(cpu), BusyCores: fp(cpu / 100 * 8), PowerWatts: fp(200)}
		for i := 1; i <= 3; i++ {
			r.Series = append(r.Series, Point{T: float64(i), OpsPerSec: ops + float64(i), LatencyMs: Latency{P99: p99}, ServerCPU: fp(cpu)})
		}
		return r
	}
	c := Compare{Step: "compare", Title: "Compare", Sweep: "instances", Variants: []VariantResult{
		{Label: "tcp", Points: []SweepPoint{{Value: "10", Runs: []RunResult{run(1, 100, 1, 2, 50), run(2, 120, 1.2, 2.2, 50)}}, {Value: "20", Runs: []RunResult{run(1, 200, 1, 3, 80)}}}},
		{Label: "rdma", Points: []SweepPoint{{Value: "10", Runs: []RunResult{run(1, 132, 0.8, 1.5, 40), run(2, 132, 0.8, 1.5, 40)}}, {Value: "20", Runs: []RunResult{run(1, 300, 0.9, 2, 60)}}}},
	}}
	for vi := range c.Variants {
		for pi := range c.Variants[vi].Points {
			c.Variants[vi].Points[pi].Stats = Summarize(c.Variants[vi].Points[pi].Runs)
		}
	}
	ComputeDeltas(&c)
	return &Results{Version: ResultsVersion, Lab: "lab", Title: "A lab", RunID: "r", Benches: []Compare{c},
		References: []Reference{{Label: "servers saved", Value: "14–18%", Source: "seed 002, TCO section"},
			{Label: "throughput gain", Value: ">30%", Source: "seed 002, results", Step: "compare"}}}
}

func TestSummarizeAndDeltas(t *testing.T) {
	r := sampleResults()
	base := r.Benches[0].Variants[0].Points[0]
	if base.Stats.OpsPerSec.Mean != 110 || base.Stats.OpsPerSec.N != 2 || math.Abs(base.Stats.OpsPerSec.Stddev-14.142) > 0.01 {
		t.Errorf("ops stats = %+v", base.Stats.OpsPerSec)
	}
	if base.Stats.OpsPerBusyCore == nil || math.Abs(base.Stats.OpsPerBusyCore.Mean-110.0/4) > 1e-9 {
		t.Errorf("ops per busy core = %+v", base.Stats.OpsPerBusyCore)
	}
	if base.Stats.WattsPerMOps == nil || base.Stats.NetGbps != nil {
		t.Errorf("W/MTPS %v, net %v: want known power, unknown network", base.Stats.WattsPerMOps, base.Stats.NetGbps)
	}
	acc := r.Benches[0].Variants[1].Points[0]
	if d := acc.DeltaPct[MetricOps]; math.Abs(d-20) > 1e-9 {
		t.Errorf("TPS delta = %v, want +20%%", d)
	}
	if d := acc.DeltaPct[MetricLatAvg]; math.Abs(d-(0.8-1.1)/1.1*100) > 1e-9 {
		t.Errorf("avg latency delta = %v", d)
	}
	if base.DeltaPct != nil {
		t.Errorf("baseline has deltas %v", base.DeltaPct)
	}
	if d := r.Benches[0].Variants[1].Points[1].DeltaPct[MetricOps]; d != 50 {
		t.Errorf("second sweep point delta = %v, want against the baseline at the same point", d)
	}
	if got := (Delta{Pct: -25, P: 0.001, HasP: true}).Format(MetricLatP99); got != "-25.0% better, p=0.001" {
		t.Errorf("Format = %q", got)
	}
	if got := (Delta{Pct: -5, P: 0.01, HasP: true}).Format(MetricOps); got != "-5.0% worse, p=0.010" {
		t.Errorf("Format = %q", got)
	}
}

func TestReportFilesRoundTrip(t *testing.T) {
	dir := t.TempDir()
	r := sampleResults()
	if err := WriteResults(dir, r); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, ReportFile))
	for _, want := range []string{"| rdma | 10 | 2 | 132.0 ± 0.0 (~ no significant difference: +20.0%, p=0.272)", "40.00 ± 0.00 (-20.0% better, p<0.001)", "TPS against instances", "seed 002, TCO section", "• rdma", "- throughput gain: >30% (source: seed 002, results)"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(string(md), "\x1b[") {
		t.Error("report.md contains ANSI escapes")
	}
	csv, _ := os.ReadFile(filepath.Join(dir, SamplesFile))
	if lines := strings.Count(string(csv), "\n"); lines != 1+6*3 {
		t.Errorf("samples.csv has %d lines, want header + 18", lines)
	}
	// dpulab report: re-render from results.json alone.
	os.Remove(filepath.Join(dir, ReportFile))
	os.Remove(filepath.Join(dir, SamplesFile))
	back, err := LoadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := RenderFiles(dir, back); err != nil {
		t.Fatal(err)
	}
	md2, _ := os.ReadFile(filepath.Join(dir, ReportFile))
	if string(md2) != string(md) {
		t.Error("re-rendered report.md differs from the original")
	}
	// A results file from a newer dpulab is refused with advice.
	os.WriteFile(filepath.Join(dir, ResultsFile), []byte(`{"version": 99}`), 0o644)
	if _, err := LoadResults(dir); err == nil || !strings.Contains(err.Error(), "upgrade") {
		t.Errorf("newer version: %v", err)
	}
	if _, err := LoadResults(t.TempDir()); err == nil || !strings.Contains(err.Error(), "results folder") {
		t.Errorf("no results: %v", err)
	}
}

// TestEmptyResultsRender: results without runs render without panicking
// (the chart guards themselves moved to internal/plot with their test).
func TestEmptyResultsRender(t *testing.T) {
	_ = RenderMarkdown(&Results{Benches: []Compare{{Step: "x"}, {Step: "y", Variants: []VariantResult{{Label: "a"}}}}})
}

// TestServersSavedPct: the share of servers saved comes from the ops per
// busy core of the first and last variants at the most loaded point.
func TestServersSavedPct(t *testing.T) {
	r := sampleResults()
	pct, ok := ServersSavedPct(&r.Benches[0])
	// Last point: tcp 200 ops / 6.4 cores, rdma 300 / 4.8 → 1 − 31.25/62.5.
	if !ok || math.Abs(pct-50) > 1e-9 {
		t.Errorf("ServersSavedPct = %v, %v; want 50%%", pct, ok)
	}
}

// hostileText carries the sequences a lab file or a remote host might try on
// the operator's terminal: OSC 52 (clipboard), clear screen, cursor moves,
// 8-bit CSI, a title change and a right-to-left override.
const hostileText = "A\x1b]52;c;ZXZpbA==\x07B\x1b[2JC\x1b[10;10HD\u009b31mE\x1b]0;title\x1b\\F\u202eG"

func TestReportFiltersEverythingFromOutside(t *testing.T) {
	r := sampleResults()
	r.Title = hostileText
	r.Hosts = []HostInfo{{Name: "h" + hostileText, Address: "a", Roles: []string{"r"}, Labels: map[string]string{"nic": hostileText}}}
	r.Variables = map[string]string{"v": hostileText}
	r.References = []Reference{{Label: hostileText, Value: hostileText, Source: hostileText}}
	r.Status, r.FailedStep, r.Error = RunFailed, "s", hostileText
	r.Steps = []StepOutcome{{ID: "s", Title: hostileText, Kind: "run", Status: Failed, Error: hostileText}}
	md := RenderMarkdown(r)
	if strings.ContainsAny(md, "\x1b\x07\u009b\u202e") {
		t.Errorf("report.md carries a control sequence: %q", md)
	}
}
