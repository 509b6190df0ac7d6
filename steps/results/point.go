package results

import (
	"encoding/json"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
)

// Latency is a latency summary in milliseconds: the bench's own
// (benchwire.Latency, declared once for the bench's lines and results.json).
type Latency = benchwire.Latency

// Point is one second of a bench: the load generator's numbers merged with
// the samplers' of the server hosts. Unknown values are nil, never zero.
type Point struct {
	// T is seconds since the measured part of the run began.
	T         float64 `json:"t_seconds"`
	OpsPerSec float64 `json:"ops_per_sec"`
	LatencyMs Latency `json:"latency_ms"`
	Errors    int64   `json:"errors"`
	// ServerCPU is the busy share of the server hosts' CPUs in percent
	// (mean over hosts), Network the part of it spent in softirq + irq.
	ServerCPU  *float64 `json:"server_cpu_pct,omitempty"`
	NetworkCPU *float64 `json:"network_cpu_pct,omitempty"`
	// NetGbps is the server hosts' network traffic, rx + tx, in Gb/s.
	NetGbps *float64 `json:"net_gbps,omitempty"`
	// PowerWatts is the server hosts' RAPL power, when readable.
	PowerWatts *float64 `json:"power_watts,omitempty"`
	// Metrics holds, by metric name, the values of metrics that have no
	// field of their own (a table entry reading them with PointMetric);
	// absent means not measured that second.
	Metrics map[string]float64 `json:"metrics,omitempty"`
}

// UnmarshalJSON also reads results written before version 3, whose
// points named their time "t".
func (p *Point) UnmarshalJSON(b []byte) error {
	type plain Point
	var v struct {
		plain
		OldT *float64 `json:"t"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*p = Point(v.plain)
	if v.OldT != nil {
		p.T = *v.OldT
	}
	return nil
}
