// Package headlinetest holds a fixed results fixture for the headline's
// tests and goldens. Its numbers are invented for the tests and its title
// says so: they are no measurement of anything.
package headlinetest

import (
	"time"

	"github.com/dpulab/dpulab/steps/results"
)

// Fixture is a run of three emulated variants, three runs each: TPS and the
// network share of CPU differ beyond the noise, p99 does not.
func Fixture() *results.Results {
	run := func(i int, ops, p99, cpu, net float64) results.RunResult {
		return results.RunResult{Run: i, OpsPerSec: ops, LatencyMs: results.Latency{P99: p99}, ServerCPU: &cpu, NetworkCPU: &net}
	}
	variant := func(label string, runs ...results.RunResult) results.VariantResult {
		return results.VariantResult{Label: label, Emulation: label + " (test fixture)",
			Points: []results.SweepPoint{{Runs: runs, Stats: results.Summarize(runs)}}}
	}
	c := results.Compare{Step: "compare", Title: "Test fixture: invented numbers, not a measurement", Variants: []results.VariantResult{
		variant("host does it all",
			run(1, 200000, 1.10, 92, 31.0), run(2, 204000, 1.30, 93, 30.2), run(3, 196000, 0.90, 91, 31.8)),
		variant("partial offload",
			run(1, 230000, 1.00, 90, 22.0), run(2, 226000, 1.20, 91, 23.1), run(3, 234000, 1.10, 89, 21.5)),
		variant("full offload",
			run(1, 278000, 1.05, 88, 12.1), run(2, 281000, 1.25, 89, 12.9), run(3, 275000, 1.15, 88, 11.7)),
	}}
	results.ComputeDeltas(&c)
	at := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	return &results.Results{
		Version: results.ResultsVersion, Lab: "quickstart", Title: "Test fixture", RunID: "fixture",
		Started: at, Finished: at.Add(2 * time.Minute), Status: results.RunComplete,
		Benches:   []results.Compare{c},
		Emulation: "network namespaces in this machine's kernel stand in for the DPU (test fixture)",
	}
}
