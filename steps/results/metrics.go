package results

// A metric is one entry of the table below: every view that shows a
// sweep point's numbers (the compare table, report.md, the deltas, the
// TCO's inputs) renders from these descriptors, as Prometheus' Desc does,
// so a new metric is one entry here plus its source (the sampler or the
// bench) and the Stats field it summarises into.

// Better says which way a metric improves.
type Better int

const (
	// Higher is better: throughput, work per core.
	Higher Better = iota
	// Lower is better: latency, CPU, watts.
	Lower
	// Neither: a change is not better or worse in itself (network traffic
	// follows the load and the path).
	Neither
)

// MetricDesc describes one metric of a sweep point's summary.
type MetricDesc struct {
	// Name is the metric's key in results.json's delta_pct; stable.
	Name string
	// Label is its column title ("TPS", "p99 latency ms").
	Label string
	// Unit is what its numbers count ("ops/s", "ms", "%").
	Unit string
	// Help says in a line what it is.
	Help string
	// Better says which way is an improvement.
	Better Better
	// Parent names the metric this one is a part of (the network share
	// of server CPU): views may show it under its parent.
	Parent string
	// Read gets it from a sweep point's summary; nil when not measured.
	Read func(*Stats) *MeanStd
}

func measuredOrNil(m *MeanStd) *MeanStd {
	if m == nil || m.N == 0 {
		return nil
	}
	return m
}

// metricTable is every metric, in report order.
var metricTable = []MetricDesc{
	{Name: MetricOps, Label: "TPS", Unit: "ops/s", Help: "requests answered per second, all clients together", Better: Higher,
		Read: func(s *Stats) *MeanStd { return measuredOrNil(&s.OpsPerSec) }},
	{Name: MetricLatAvg, Label: "avg latency ms", Unit: "ms", Help: "mean time from a request's send (or due time under --rate) to its reply", Better: Lower,
		Read: func(s *Stats) *MeanStd { return measuredOrNil(&s.LatencyAvgMs) }},
	{Name: MetricLatP99, Label: "p99 latency ms", Unit: "ms", Help: "99th percentile of that time", Better: Lower,
		Read: func(s *Stats) *MeanStd { return measuredOrNil(&s.LatencyP99Ms) }},
	{Name: MetricServerCPU, Label: "server CPU %", Unit: "%", Help: "busy share of the server hosts' CPUs (mean over hosts)", Better: Lower,
		Read: func(s *Stats) *MeanStd { return measuredOrNil(s.ServerCPU) }},
	{Name: MetricNetworkCPU, Label: "network CPU %", Unit: "%", Help: "the part of it in softirq and irq: the host's networking work", Better: Lower, Parent: MetricServerCPU,
		Read: func(s *Stats) *MeanStd { return measuredOrNil(s.NetworkCPU) }},
	{Name: MetricOpsPerCore, Label: "TPS per busy core", Unit: "ops/s/core", Help: "throughput per busy server core", Better: Higher,
		Read: func(s *Stats) *MeanStd { return measuredOrNil(s.OpsPerBusyCore) }},
	{Name: MetricNetGbps, Label: "network Gb/s", Unit: "Gb/s", Help: "the server hosts' network traffic, received plus sent", Better: Neither,
		Read: func(s *Stats) *MeanStd { return measuredOrNil(s.NetGbps) }},
	{Name: MetricWattsPerMOps, Label: "W per M TPS", Unit: "W/MTPS", Help: "the server hosts' RAPL power per million requests per second", Better: Lower,
		Read: func(s *Stats) *MeanStd { return measuredOrNil(s.WattsPerMOps) }},
}

// MetricDescs returns the metrics in report order (a copy).
func MetricDescs() []MetricDesc { return append([]MetricDesc(nil), metricTable...) }

// LookupMetric returns the metric named name.
func LookupMetric(name string) (MetricDesc, bool) {
	for _, m := range metricTable {
		if m.Name == name {
			return m, true
		}
	}
	return MetricDesc{}, false
}
