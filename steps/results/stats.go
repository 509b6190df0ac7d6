package results

import (
	"math"
	"sort"
)

// Metric names: keys of SweepPoint.DeltaPct and samples.csv's columns.
const (
	MetricOps          = "ops_per_sec"
	MetricLatAvg       = "latency_avg_ms"
	MetricLatP50       = "latency_p50_ms"
	MetricLatP99       = "latency_p99_ms"
	MetricLatMax       = "latency_max_ms"
	MetricErrors       = "errors"
	MetricServerCPU    = "server_cpu_pct"
	MetricNetworkCPU   = "network_cpu_pct"
	MetricOpsPerCore   = "ops_per_busy_core"
	MetricNetGbps      = "net_gbps"
	MetricWattsPerMOps = "watts_per_million_ops"
	MetricPowerWatts   = "power_watts"
)

// LowerIsBetter says whether a smaller value of metric is an improvement
// (latency, CPU, watts), so renderers can colour a delta.
func LowerIsBetter(metric string) bool {
	m, ok := LookupMetric(metric)
	return ok && m.Better == Lower
}

// Neutral reports whether a change of metric is neither better nor worse
// in itself (network traffic follows the load and the path).
func Neutral(metric string) bool {
	m, ok := LookupMetric(metric)
	return ok && m.Better == Neither
}

// Metric returns a sweep point's mean of metric, and whether it was measured.
func (s Stats) Metric(metric string) (MeanStd, bool) {
	m, ok := LookupMetric(metric)
	if !ok || m.Read == nil {
		return MeanStd{}, false
	}
	if v := m.Read(&s); v != nil {
		return *v, true
	}
	return MeanStd{}, false
}

// MeanStdOf is the mean and sample standard deviation of xs (NaNs and
// infinities dropped).
func MeanStdOf(xs []float64) MeanStd {
	var m MeanStd
	var vals []float64
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			vals = append(vals, x)
		}
	}
	if len(vals) == 0 {
		return m
	}
	m.N = len(vals)
	m.Min, m.Max = vals[0], vals[0]
	sum := 0.0
	for _, v := range vals {
		sum += v
		m.Min = math.Min(m.Min, v)
		m.Max = math.Max(m.Max, v)
	}
	m.Mean = sum / float64(m.N)
	if m.N > 1 {
		ss := 0.0
		for _, v := range vals {
			ss += (v - m.Mean) * (v - m.Mean)
		}
		m.Stddev = math.Sqrt(ss / float64(m.N-1))
	}
	return m
}

// optMeanStd is meanStd over the runs where get reports a value; nil when
// no run measured it (unknown stays unknown, never zero).
func optMeanStd(runs []RunResult, get func(RunResult) (float64, bool)) *MeanStd {
	var xs []float64
	for _, r := range runs {
		if v, ok := get(r); ok {
			xs = append(xs, v)
		}
	}
	m := MeanStdOf(xs)
	if m.N == 0 {
		return nil
	}
	return &m
}

func deref(p *float64) (float64, bool) {
	if p == nil {
		return 0, false
	}
	return *p, true
}

// Summarize computes a sweep point's Stats from its runs.
func Summarize(runs []RunResult) Stats {
	var ops, avg, p99 []float64
	for _, r := range runs {
		ops = append(ops, r.OpsPerSec)
		avg = append(avg, r.LatencyMs.Avg)
		p99 = append(p99, r.LatencyMs.P99)
	}
	s := Stats{OpsPerSec: MeanStdOf(ops), LatencyAvgMs: MeanStdOf(avg), LatencyP99Ms: MeanStdOf(p99)}
	s.ServerCPU = optMeanStd(runs, func(r RunResult) (float64, bool) { return deref(r.ServerCPU) })
	s.NetworkCPU = optMeanStd(runs, func(r RunResult) (float64, bool) { return deref(r.NetworkCPU) })
	s.NetGbps = optMeanStd(runs, func(r RunResult) (float64, bool) { return deref(r.NetGbps) })
	s.OpsPerBusyCore = optMeanStd(runs, func(r RunResult) (float64, bool) {
		c, ok := deref(r.BusyCores)
		if !ok || c <= 0 {
			return 0, false
		}
		return r.OpsPerSec / c, true
	})
	s.WattsPerMOps = optMeanStd(runs, func(r RunResult) (float64, bool) {
		w, ok := deref(r.PowerWatts)
		if !ok || r.OpsPerSec <= 0 {
			return 0, false
		}
		return w / (r.OpsPerSec / 1e6), true
	})
	for _, name := range extraNames(runs, func(r RunResult) map[string]float64 { return r.Metrics }) {
		if m := optMeanStd(runs, func(r RunResult) (float64, bool) { v, ok := r.Metrics[name]; return v, ok }); m != nil {
			if s.Metrics == nil {
				s.Metrics = map[string]MeanStd{}
			}
			s.Metrics[name] = *m
		}
	}
	return s
}

// extraNames is every key of the maps get returns for xs, sorted.
func extraNames[T any](xs []T, get func(T) map[string]float64) []string {
	seen := map[string]bool{}
	for _, x := range xs {
		for k := range get(x) {
			seen[k] = true
		}
	}
	return sortedKeys(seen)
}

// ComputeDeltas fills DeltaPct of every variant after the first with the
// change in percent of each metric's mean against the first variant at the
// same sweep value. The first variant gets no deltas.
func ComputeDeltas(c *Compare) {
	if len(c.Variants) == 0 {
		return
	}
	base := map[string]Stats{}
	for _, p := range c.Variants[0].Points {
		base[p.Value] = p.Stats
		p.DeltaPct, p.DeltaP = nil, nil
	}
	for vi := 1; vi < len(c.Variants); vi++ {
		for pi := range c.Variants[vi].Points {
			p := &c.Variants[vi].Points[pi]
			p.DeltaPct, p.DeltaP = nil, nil
			b, ok := base[p.Value]
			if !ok {
				continue
			}
			for _, m := range MetricNames() {
				d, ok := DeltaOf(m, p.Stats, b)
				if !ok {
					continue
				}
				if p.DeltaPct == nil {
					p.DeltaPct = map[string]float64{}
				}
				p.DeltaPct[m] = d.Pct
				if d.HasP {
					if p.DeltaP == nil {
						p.DeltaP = map[string]float64{}
					}
					p.DeltaP[m] = d.P
				}
			}
		}
	}
}

// SummarizeSeries averages the sampler columns of the run's series (and
// every metric carried by name in Point.Metrics) into its summary (the bench's own numbers come from its run event); cores is the
// server hosts' CPU count, for the ops per busy core.
func (r *RunResult) SummarizeSeries(cores float64) {
	avg := func(get func(Point) *float64) *float64 {
		var xs []float64
		for _, p := range r.Series {
			if v := get(p); v != nil {
				xs = append(xs, *v)
			}
		}
		if len(xs) == 0 {
			return nil
		}
		m := MeanStdOf(xs).Mean
		return &m
	}
	r.ServerCPU = avg(func(p Point) *float64 { return p.ServerCPU })
	r.NetworkCPU = avg(func(p Point) *float64 { return p.NetworkCPU })
	r.NetGbps = avg(func(p Point) *float64 { return p.NetGbps })
	r.PowerWatts = avg(func(p Point) *float64 { return p.PowerWatts })
	r.Metrics = nil
	for _, name := range extraNames(r.Series, func(p Point) map[string]float64 { return p.Metrics }) {
		if v := avg(func(p Point) *float64 {
			if v, ok := p.Metrics[name]; ok {
				return &v
			}
			return nil
		}); v != nil {
			if r.Metrics == nil {
				r.Metrics = map[string]float64{}
			}
			r.Metrics[name] = *v
		}
	}
	if r.ServerCPU != nil && cores > 0 {
		bc := *r.ServerCPU / 100 * cores
		r.BusyCores = &bc
	}
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// ServersSavedPct derives the share of servers saved from a compare: if the
// accelerated variant serves the same load with fewer busy cores, a fleet
// sized by cores needs 1 − base/accel (ops per busy core) fewer servers. It
// uses the last variant against the first, at the sweep point with the most
// load; ok is false without CPU figures.
func ServersSavedPct(c *Compare) (pct float64, ok bool) {
	if c == nil || len(c.Variants) < 2 {
		return 0, false
	}
	first, last := c.Variants[0], c.Variants[len(c.Variants)-1]
	if len(first.Points) == 0 || len(last.Points) == 0 {
		return 0, false
	}
	b, ok1 := first.Points[len(first.Points)-1].Stats.Metric(MetricOpsPerCore)
	a, ok2 := last.Points[len(last.Points)-1].Stats.Metric(MetricOpsPerCore)
	if !ok1 || !ok2 || a.Mean <= 0 || b.Mean <= 0 {
		return 0, false
	}
	return max(0, (1-b.Mean/a.Mean)*100), true
}
