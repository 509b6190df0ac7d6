package compare

import (
	"math"

	"github.com/dpulab/dpulab/steps"
)

// metric is one row of the compare table. Keys match SweepPoint.DeltaPct.
type metric struct {
	key   string
	label string
	get   func(steps.Stats) *steps.MeanStd
}

func ms(m steps.MeanStd) *steps.MeanStd {
	if m.N == 0 {
		return nil
	}
	return &m
}

var metrics = []metric{
	{"ops_per_sec", "TPS (ops/s)", func(s steps.Stats) *steps.MeanStd { return ms(s.OpsPerSec) }},
	{"latency_avg_ms", "avg latency ms", func(s steps.Stats) *steps.MeanStd { return ms(s.LatencyAvgMs) }},
	{"latency_p99_ms", "p99 latency ms", func(s steps.Stats) *steps.MeanStd { return ms(s.LatencyP99Ms) }},
	{"server_cpu_pct", "server CPU %", func(s steps.Stats) *steps.MeanStd { return s.ServerCPU }},
	{"network_cpu_pct", "  network share %", func(s steps.Stats) *steps.MeanStd { return s.NetworkCPU }},
	{"ops_per_busy_core", "TPS per busy core", func(s steps.Stats) *steps.MeanStd { return s.OpsPerBusyCore }},
	{"net_gbps", "network Gb/s", func(s steps.Stats) *steps.MeanStd { return s.NetGbps }},
	{"watts_per_million_ops", "W per M TPS", func(s steps.Stats) *steps.MeanStd { return s.WattsPerMOps }},
}

// delta returns the change of metric at point p against the baseline point,
// preferring the engine's figure and computing it when absent.
func delta(mt metric, p, base steps.SweepPoint) (float64, bool) {
	if d, ok := p.DeltaPct[mt.key]; ok {
		return d, true
	}
	v, b := mt.get(p.Stats), mt.get(base.Stats)
	if v == nil || b == nil || b.Mean == 0 {
		return 0, false
	}
	return (v.Mean - b.Mean) / b.Mean * 100, true
}

// deltaText says the change with its sign and in words, so it reads right
// without colour: "+31.2% better" (steps.FormatDelta, as in report.md).
// better reports the direction for colour; same is true for a change too
// small to matter and for metrics that are neither better nor worse when
// they move (network Gb/s follows the load and the path).
func deltaText(mt metric, pct float64) (text string, better, same bool) {
	text = steps.FormatDelta(mt.key, pct)
	if steps.Neutral(mt.key) || math.Abs(pct) < 0.05 {
		return text, false, true
	}
	return text, (pct < 0) == steps.LowerIsBetter(mt.key), false
}
