package steps

import "time"

// ResultsVersion is the schema version of results.json. Bump it when a field
// changes meaning; readers refuse versions newer than theirs.
const ResultsVersion = 1

// Results is what a run of a lab leaves in results/LAB/TIMESTAMP/results.json:
// enough to re-render the report and to replay the run in the dashboard.
type Results struct {
	Version  int       `json:"version"`
	Lab      string    `json:"lab"`
	Title    string    `json:"title"`
	RunID    string    `json:"run_id"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Hosts are the inventory's hosts that took part, with their labels
	// (nic, mode, ...), so a replay can say where it was recorded.
	Hosts     []HostInfo        `json:"hosts"`
	Variables map[string]string `json:"variables"`
	// Benches holds one entry per bench or compare step.
	Benches []Compare `json:"benches"`
	// TCO holds the tco step's inputs and outputs, when the lab has one.
	TCO *TCO `json:"tco,omitempty"`
	// References are published figures shown beside ours, with sources.
	References []Reference `json:"references,omitempty"`
}

// HostInfo is one host of the inventory as it took part in a run.
type HostInfo struct {
	Name    string            `json:"name"`
	Address string            `json:"address"`
	Roles   []string          `json:"roles"`
	Labels  map[string]string `json:"labels,omitempty"`
	OS      string            `json:"os,omitempty"`
	Arch    string            `json:"arch,omitempty"`
}

// Compare is the result of a bench step (one variant) or a compare step
// (several variants, optionally swept over one variable).
type Compare struct {
	Step  string `json:"step"`
	Title string `json:"title"`
	// Sweep names the swept variable ("instances"); empty when not swept.
	Sweep string `json:"sweep,omitempty"`
	// Client is the host the load generator ran on.
	Client   string          `json:"client,omitempty"`
	Variants []VariantResult `json:"variants"`
}

// VariantResult is one variant's results at every sweep point. The first
// variant of a compare is the baseline that deltas are taken against.
type VariantResult struct {
	Label       string            `json:"label"`
	Description string            `json:"description,omitempty"`
	Hosts       []string          `json:"hosts,omitempty"`
	Settings    map[string]string `json:"settings,omitempty"`
	Points      []SweepPoint      `json:"points"`
}

// SweepPoint is the runs of one variant at one value of the swept variable
// (a single point with an empty Value when there is no sweep).
type SweepPoint struct {
	Value string      `json:"value,omitempty"`
	Runs  []RunResult `json:"runs"`
	Stats Stats       `json:"stats"`
	// DeltaPct holds, per metric name (ops_per_sec, latency_avg_ms, ...),
	// the change in percent against the first variant at the same point.
	DeltaPct map[string]float64 `json:"delta_pct,omitempty"`
}

// RunResult is one repetition: its summary and its per-second series.
type RunResult struct {
	Run        int      `json:"run"`
	OpsPerSec  float64  `json:"ops_per_sec"`
	LatencyMs  Latency  `json:"latency_ms"`
	Errors     int64    `json:"errors"`
	ServerCPU  *float64 `json:"server_cpu_pct,omitempty"`
	NetworkCPU *float64 `json:"network_cpu_pct,omitempty"`
	NetGbps    *float64 `json:"net_gbps,omitempty"`
	PowerWatts *float64 `json:"power_watts,omitempty"`
	// BusyCores is ServerCPU expressed in cores (for TPS per busy core).
	BusyCores *float64 `json:"busy_cores,omitempty"`
	Series    []Point  `json:"series"`
	// Err says why a run ended early; its partial numbers are kept.
	Err string `json:"error,omitempty"`
}

// MeanStd is a mean with its sample standard deviation over N runs.
type MeanStd struct {
	Mean   float64 `json:"mean"`
	Stddev float64 `json:"stddev"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int     `json:"n"`
}

// Stats summarises the runs of a sweep point. Metrics that could not be
// measured (no sampler, no RAPL) are nil, never zero.
type Stats struct {
	OpsPerSec      MeanStd  `json:"ops_per_sec"`
	LatencyAvgMs   MeanStd  `json:"latency_avg_ms"`
	LatencyP99Ms   MeanStd  `json:"latency_p99_ms"`
	ServerCPU      *MeanStd `json:"server_cpu_pct,omitempty"`
	NetworkCPU     *MeanStd `json:"network_cpu_pct,omitempty"`
	OpsPerBusyCore *MeanStd `json:"ops_per_busy_core,omitempty"`
	NetGbps        *MeanStd `json:"net_gbps,omitempty"`
	WattsPerMOps   *MeanStd `json:"watts_per_million_ops,omitempty"`
}

// TCO is the fleet-savings estimate of a tco step: its inputs (as the
// person left them) and what follows from them.
type TCO struct {
	Inputs  map[string]float64 `json:"inputs"`
	Outputs map[string]float64 `json:"outputs"`
	// Formula is the arithmetic, written out, as shown in the lab doc.
	Formula string `json:"formula"`
}

// Reference is a published figure shown beside ours, always with its source.
type Reference struct {
	Label  string `json:"label"`
	Value  string `json:"value"`
	Source string `json:"source"`
	// Step ties the figure to a bench or compare step, shown beside it.
	Step string `json:"step,omitempty"`
}
