package results

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/dpulab/dpulab/internal/plot"
)

// A metric is one entry of the table below: every view renders from these
// descriptors, as Prometheus' Desc does. The compare table, report.md's
// tables and the deltas show the metrics with a summary reader (Read);
// samples.csv has a column for each metric with a per-second reader
// (Sample); the live dashboard draws those with a Live entry; the compare
// view's charts and report.md's charts draw those whose Plots say so. A new
// metric is one entry here plus its source: a Point field (or a value the
// engine puts in Point.Metrics under the metric's name, which then needs no
// other code, see PointMetric and StatsMetric).

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

// Plots says which charts of a finished run draw a metric.
type Plots uint8

const (
	// PlotPerSecond draws its per-second series, the variants overlaid
	// (the compare view's charts tab and report.md); needs Sample.
	PlotPerSecond Plots = 1 << iota
	// PlotSweep draws its mean against the swept variable, a line per
	// variant (the sweep tab and report.md); needs Read.
	PlotSweep
)

// Live says how the dashboard shows a metric while a bench runs.
type Live struct {
	// Chart is the caption of the live chart it is drawn in; metrics with
	// the same caption share one chart ("latency (ms)": p50 and p99).
	Chart string
	// Legend names it in that chart's legend when the chart has several.
	Legend string
	// Big labels its current value in the row of big numbers ("p99");
	// empty for none. A part of a metric with a big number (Parent) is
	// shown inside its parent's box instead.
	Big string
	// OnlyWithData keeps its chart off the dashboard until a second
	// carries it, where the others are drawn ("waiting for data…") from
	// the start: a metric most hosts never have (RDMA ports).
	OnlyWithData bool
}

// MetricDesc describes one metric.
type MetricDesc struct {
	// Name is the metric's key in results.json's delta_pct and its column
	// in samples.csv; stable.
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
	// Read gets it from a sweep point's summary (nil result: not
	// measured); a nil Read means it has no summary (the per-second p50).
	Read func(*Stats) *MeanStd
	// Sample gets it from one second of a bench, ok false when that second
	// did not measure it; a nil Sample means it is not a per-second figure.
	Sample func(*Point) (v float64, ok bool)
	// Digits is the number of decimals samples.csv writes.
	Digits int
	// Live is how the dashboard shows it; nil keeps it off the dashboard.
	Live *Live
	// Plots says which charts of a finished run draw it.
	Plots Plots
}

// Human renders v compactly for a screen or a chart (12.7M, 0.051).
func (m MetricDesc) Human(v float64) string { return plot.Human(v) }

// WithUnit renders v compactly with the unit: "140k ops/s", "3.02%".
func (m MetricDesc) WithUnit(v float64) string { return plot.Human(v) + UnitSuffix(m.Unit) }

// CSV renders v as samples.csv writes it, at the metric's fixed precision.
func (m MetricDesc) CSV(v float64) string { return strconv.FormatFloat(v, 'f', m.Digits, 64) }

// UnitSuffix is how a unit follows a number: "%" directly, any other after
// a space.
func UnitSuffix(unit string) string {
	if unit == "%" || unit == "" {
		return unit
	}
	return " " + unit
}

func measuredOrNil(m *MeanStd) *MeanStd {
	if m == nil || m.N == 0 {
		return nil
	}
	return m
}

func known(p *float64) (float64, bool) {
	if p == nil {
		return 0, false
	}
	return *p, true
}

// metricTable is every metric, in report order; metricMu guards it against
// RegisterMetric.
var (
	metricMu    sync.RWMutex
	metricTable = []MetricDesc{
		{Name: MetricOps, Label: "TPS", Unit: "ops/s", Help: "requests answered per second, all clients together", Better: Higher,
			Read:   func(s *Stats) *MeanStd { return measuredOrNil(&s.OpsPerSec) },
			Sample: func(p *Point) (float64, bool) { return p.OpsPerSec, true }, Digits: 1,
			Live: &Live{Chart: "TPS (ops/s)", Big: "TPS"}, Plots: PlotPerSecond | PlotSweep},
		{Name: MetricLatAvg, Label: "avg latency ms", Unit: "ms", Help: "mean time from a request's send (or due time under --rate) to its reply", Better: Lower,
			Read:   func(s *Stats) *MeanStd { return measuredOrNil(&s.LatencyAvgMs) },
			Sample: func(p *Point) (float64, bool) { return p.LatencyMs.Avg, true }, Digits: 4,
			Plots: PlotSweep},
		{Name: MetricLatP50, Label: "p50 latency ms", Unit: "ms", Help: "median of that time in the second", Better: Lower,
			Sample: func(p *Point) (float64, bool) { return p.LatencyMs.P50, true }, Digits: 4,
			Live: &Live{Chart: "latency (ms)", Legend: "p50"}},
		{Name: MetricLatP99, Label: "p99 latency ms", Unit: "ms", Help: "99th percentile of that time", Better: Lower,
			Read:   func(s *Stats) *MeanStd { return measuredOrNil(&s.LatencyP99Ms) },
			Sample: func(p *Point) (float64, bool) { return p.LatencyMs.P99, true }, Digits: 4,
			Live: &Live{Chart: "latency (ms)", Legend: "p99", Big: "p99"}, Plots: PlotPerSecond},
		{Name: MetricLatMax, Label: "max latency ms", Unit: "ms", Help: "the slowest reply of the second", Better: Lower,
			Sample: func(p *Point) (float64, bool) { return p.LatencyMs.Max, true }, Digits: 4},
		{Name: MetricErrors, Label: "errors", Unit: "errors/s", Help: "requests answered with an error in the second", Better: Lower,
			Sample: func(p *Point) (float64, bool) { return float64(p.Errors), true }, Digits: 0},
		{Name: MetricServerCPU, Label: "server CPU %", Unit: "%", Help: "busy share of the server hosts' CPUs (mean over hosts)", Better: Lower,
			Read:   func(s *Stats) *MeanStd { return measuredOrNil(s.ServerCPU) },
			Sample: func(p *Point) (float64, bool) { return known(p.ServerCPU) }, Digits: 2,
			Live: &Live{Chart: "server CPU (%)", Legend: "server CPU", Big: "CPU"}},
		{Name: MetricNetworkCPU, Label: "network CPU %", Unit: "%", Help: "the part of it in softirq and irq: the host's networking work", Better: Lower, Parent: MetricServerCPU,
			Read:   func(s *Stats) *MeanStd { return measuredOrNil(s.NetworkCPU) },
			Sample: func(p *Point) (float64, bool) { return known(p.NetworkCPU) }, Digits: 2,
			Live: &Live{Chart: "server CPU (%)", Legend: "network share", Big: "net"}},
		{Name: MetricOpsPerCore, Label: "TPS per busy core", Unit: "ops/s/core", Help: "throughput per busy server core", Better: Higher,
			Read: func(s *Stats) *MeanStd { return measuredOrNil(s.OpsPerBusyCore) }},
		{Name: MetricNetGbps, Label: "network Gb/s", Unit: "Gb/s", Help: "the server hosts' network traffic, received plus sent", Better: Neither,
			Read:   func(s *Stats) *MeanStd { return measuredOrNil(s.NetGbps) },
			Sample: func(p *Point) (float64, bool) { return known(p.NetGbps) }, Digits: 4,
			Live: &Live{Chart: "network (Gb/s)", Big: "net"}},
		{Name: MetricWattsPerMOps, Label: "W per M TPS", Unit: "W/MTPS", Help: "the server hosts' RAPL power per million requests per second", Better: Lower,
			Read: func(s *Stats) *MeanStd { return measuredOrNil(s.WattsPerMOps) }},
		{Name: MetricPowerWatts, Label: "power W", Unit: "W", Help: "the server hosts' RAPL power", Better: Lower,
			Sample: func(p *Point) (float64, bool) { return known(p.PowerWatts) }, Digits: 1},
		// The hypervisor's own figures, from vSphere's real-time counters
		// (runner/vsphere, merged by steps/vsphere.go into Point.Metrics):
		// on vSphere the work a DPU takes over runs in ESXi, which the
		// guests' columns above cannot see. Each is labelled host (ESXi).
		{Name: MetricESXiCPU, Label: "host (ESXi) CPU %", Unit: "%", Help: "host (ESXi): the ESXi hosts' CPU use (cpu.usage.average, mean over hosts, 20 s real-time samples held over their seconds)", Better: Lower,
			Read: StatsMetric(MetricESXiCPU), Sample: PointMetric(MetricESXiCPU), Digits: 2, Plots: PlotPerSecond | PlotSweep,
			Live: &Live{Chart: "host (ESXi) CPU (%)", OnlyWithData: true}},
		{Name: MetricESXiCoresPerMOps, Label: "host (ESXi) cores per M TPS", Unit: "cores/MTPS", Help: "host (ESXi): CPU time the ESXi hosts used (cpu.used.summation, in cores) per million requests per second", Better: Lower,
			Read: StatsMetric(MetricESXiCoresPerMOps), Sample: PointMetric(MetricESXiCoresPerMOps), Digits: 3, Plots: PlotSweep},
		{Name: MetricESXiWattsPerMOps, Label: "host (ESXi) W per M TPS", Unit: "W/MTPS", Help: "host (ESXi): the ESXi hosts' power (power.power.average, where every host reports it) per million requests per second", Better: Lower,
			Read: StatsMetric(MetricESXiWattsPerMOps), Sample: PointMetric(MetricESXiWattsPerMOps), Digits: 2},
		{Name: MetricESXiNetGbps, Label: "host (ESXi) network Gb/s", Unit: "Gb/s", Help: "host (ESXi): the ESXi hosts' physical NICs' traffic (net.usage.average, received plus sent, summed over vmnics and hosts)", Better: Neither,
			Read: StatsMetric(MetricESXiNetGbps), Sample: PointMetric(MetricESXiNetGbps), Digits: 4,
			Live: &Live{Chart: "host (ESXi) network (Gb/s)", OnlyWithData: true}},
		{Name: MetricESXiVMNetGbps, Label: "host (ESXi) server VMs' network Gb/s", Unit: "Gb/s", Help: "host (ESXi): the server VMs' traffic as the hypervisor counts it (net.usage.average of each VM, over its adapters, received plus sent, summed over the VMs)", Better: Neither,
			Read: StatsMetric(MetricESXiVMNetGbps), Sample: PointMetric(MetricESXiVMNetGbps), Digits: 4},
		{Name: MetricESXiCPUReady, Label: "host (ESXi) CPU ready %", Unit: "% of a CPU", Help: "host (ESXi): time the ESXi hosts' worlds waited for a CPU (cpu.ready.summation over the interval, in percent of one CPU, VMware's formula; mean over hosts): high values mean the host's CPUs are oversubscribed", Better: Lower,
			Read: StatsMetric(MetricESXiCPUReady), Sample: PointMetric(MetricESXiCPUReady), Digits: 2},
		// The InfiniBand/RoCE ports' own counters (server/sample's rdma.go,
		// carried in Point.Metrics by name): RDMA moves data without the
		// kernel's network stack, so the network Gb/s above, from
		// /proc/net/dev, does not see it. A host without RDMA ports has none
		// of these, so they stay out of its tables.
		{Name: MetricRDMAGbps, Label: "RDMA ports Gb/s", Unit: "Gb/s", Help: "the server hosts' InfiniBand/RoCE ports' traffic, received plus sent, from the port counters (port_rcv_data + port_xmit_data, whole packets: RDMA and IPoIB alike)", Better: Neither,
			Read: StatsMetric(MetricRDMAGbps), Sample: PointMetric(MetricRDMAGbps), Digits: 4,
			Live: &Live{Chart: "RDMA ports (Gb/s)", OnlyWithData: true}},
		{Name: MetricRDMAPackets, Label: "RDMA ports packets/s", Unit: "packets/s", Help: "the server hosts' InfiniBand/RoCE ports' packets, received plus sent (port_rcv_packets + port_xmit_packets; on Soft-RoCE, which counts no bytes, hw_counters rcvd_pkts + sent_pkts, the counters rdma statistic prints)", Better: Neither,
			Read: StatsMetric(MetricRDMAPackets), Sample: PointMetric(MetricRDMAPackets), Digits: 0},
		{Name: MetricRDMAOutOfSequence, Label: "RDMA out-of-sequence/s", Unit: "packets/s", Help: "packets the server hosts' RDMA ports received out of sequence (hw_counters/out_of_sequence): on UC a lost packet, on RC one the sender resends", Better: Lower,
			Read: StatsMetric(MetricRDMAOutOfSequence), Sample: PointMetric(MetricRDMAOutOfSequence), Digits: 2},
		{Name: MetricRDMASeqNAKs, Label: "RDMA sequence NAKs/s", Unit: "NAKs/s", Help: "sequence-error NAKs the server hosts' RC senders received, each a resend (hw_counters/packet_seq_err)", Better: Lower,
			Read: StatsMetric(MetricRDMASeqNAKs), Sample: PointMetric(MetricRDMASeqNAKs), Digits: 2},
		{Name: MetricRDMAAckTimeouts, Label: "RDMA ack timeouts/s", Unit: "timeouts/s", Help: "RC acknowledgement timeouts on the server hosts' ports, each a resend (hw_counters/local_ack_timeout_err)", Better: Lower,
			Read: StatsMetric(MetricRDMAAckTimeouts), Sample: PointMetric(MetricRDMAAckTimeouts), Digits: 2},
		{Name: MetricRDMARNRRetryErrors, Label: "RDMA RNR retry errors/s", Unit: "errors/s", Help: "RC connections on the server hosts that ran out of retries because the peer had no receive posted (hw_counters/rnr_nak_retry_err): each breaks a connection", Better: Lower,
			Read: StatsMetric(MetricRDMARNRRetryErrors), Sample: PointMetric(MetricRDMARNRRetryErrors), Digits: 2},
	}
)

// The RDMA port metrics' names, carried by name like the hypervisor's.
// The error ones are "rdma_" plus the kernel's counter name.
const (
	MetricRDMAGbps           = "rdma_gbps"
	MetricRDMAPackets        = "rdma_packets_per_sec"
	MetricRDMAOutOfSequence  = "rdma_out_of_sequence"
	MetricRDMASeqNAKs        = "rdma_packet_seq_err"
	MetricRDMAAckTimeouts    = "rdma_local_ack_timeout_err"
	MetricRDMARNRRetryErrors = "rdma_rnr_nak_retry_err"
)

// The hypervisor metrics' names. They have no Point or Stats field of
// their own: they travel in Point.Metrics and Stats.Metrics by name.
const (
	MetricESXiCPU          = "esxi_cpu_pct"
	MetricESXiCoresPerMOps = "esxi_cores_per_million_ops"
	MetricESXiWattsPerMOps = "esxi_watts_per_million_ops"
	MetricESXiNetGbps      = "esxi_net_gbps"
	MetricESXiVMNetGbps    = "esxi_vm_net_gbps"
	MetricESXiCPUReady     = "esxi_cpu_ready_pct"
)

// byNameMetrics are the built-in metrics read from Stats.Metrics rather
// than a Stats field of their own.
var byNameMetrics = []string{MetricESXiCPU, MetricESXiCoresPerMOps, MetricESXiWattsPerMOps, MetricESXiNetGbps, MetricESXiVMNetGbps, MetricESXiCPUReady,
	MetricRDMAGbps, MetricRDMAPackets, MetricRDMAOutOfSequence, MetricRDMASeqNAKs, MetricRDMAAckTimeouts, MetricRDMARNRRetryErrors}

// MetricDescs returns the metrics in report order (a copy).
func MetricDescs() []MetricDesc {
	metricMu.RLock()
	defer metricMu.RUnlock()
	return slices.Clone(metricTable)
}

// MetricNames lists every metric's name in report order.
func MetricNames() []string {
	metricMu.RLock()
	defer metricMu.RUnlock()
	out := make([]string, len(metricTable))
	for i, m := range metricTable {
		out[i] = m.Name
	}
	return out
}

// LookupMetric returns the metric named name.
func LookupMetric(name string) (MetricDesc, bool) {
	metricMu.RLock()
	defer metricMu.RUnlock()
	for _, m := range metricTable {
		if m.Name == name {
			return m, true
		}
	}
	return MetricDesc{}, false
}

// PointMetric is the Sample of a metric without a Point field of its own:
// the engine puts its per-second value in Point.Metrics under name.
func PointMetric(name string) func(*Point) (float64, bool) {
	return func(p *Point) (float64, bool) {
		v, ok := p.Metrics[name]
		return v, ok
	}
}

// StatsMetric is the Read of such a metric: RunResult.SummarizeSeries and
// Summarize carry Point.Metrics through to Stats.Metrics by name.
func StatsMetric(name string) func(*Stats) *MeanStd {
	return func(s *Stats) *MeanStd {
		v, ok := s.Metrics[name]
		if !ok {
			return nil
		}
		return measuredOrNil(&v)
	}
}

// RegisterMetric appends d to the table, after the built-in metrics, for a
// metric defined outside this package (and for tests, which call the
// returned remove when done). Call it before any view renders, as
// database/sql drivers register in init.
func RegisterMetric(d MetricDesc) (remove func(), err error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	metricMu.Lock()
	defer metricMu.Unlock()
	for _, m := range metricTable {
		if m.Name == d.Name {
			return nil, fmt.Errorf("metric %s is already registered", d.Name)
		}
	}
	metricTable = append(slices.Clip(metricTable), d)
	return func() {
		metricMu.Lock()
		defer metricMu.Unlock()
		metricTable = slices.DeleteFunc(slices.Clone(metricTable), func(m MetricDesc) bool { return m.Name == d.Name })
	}, nil
}

// check is what every table entry must satisfy (TestMetricTable runs it on
// the built-ins).
func (m MetricDesc) check() error {
	var errs []error
	if m.Name == "" || m.Label == "" || m.Unit == "" || m.Help == "" {
		errs = append(errs, errors.New("needs a name, label, unit and help"))
	}
	if m.Read == nil && m.Sample == nil {
		errs = append(errs, errors.New("needs a summary reader (Read), a per-second one (Sample) or both"))
	}
	if m.Live != nil && (m.Sample == nil || m.Live.Chart == "") {
		errs = append(errs, errors.New("a live metric needs a per-second reader and a chart caption"))
	}
	if m.Plots&PlotPerSecond != 0 && m.Sample == nil {
		errs = append(errs, errors.New("a per-second chart needs a per-second reader"))
	}
	if m.Plots&PlotSweep != 0 && m.Read == nil {
		errs = append(errs, errors.New("a sweep chart needs a summary reader"))
	}
	if m.Digits < 0 {
		errs = append(errs, errors.New("digits must not be negative"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("metric %q: %w", m.Name, err)
	}
	return nil
}
