package compare

import (
	"fmt"
	"math"

	"github.com/dpulab/dpulab/steps"
)

// metric is one row of the compare table. Keys match SweepPoint.DeltaPct.
type metric struct {
	key   string
	label string
	lower bool // a smaller value is better
	get   func(steps.Stats) *steps.MeanStd
}

func ms(m steps.MeanStd) *steps.MeanStd {
	if m.N == 0 {
		return nil
	}
	return &m
}

var metrics = []metric{
	{"ops_per_sec", "TPS (ops/s)", false, func(s steps.Stats) *steps.MeanStd { return ms(s.OpsPerSec) }},
	{"latency_avg_ms", "avg latency ms", true, func(s steps.Stats) *steps.MeanStd { return ms(s.LatencyAvgMs) }},
	{"latency_p99_ms", "p99 latency ms", true, func(s steps.Stats) *steps.MeanStd { return ms(s.LatencyP99Ms) }},
	{"server_cpu_pct", "server CPU %", true, func(s steps.Stats) *steps.MeanStd { return s.ServerCPU }},
	{"network_cpu_pct", "  network share %", true, func(s steps.Stats) *steps.MeanStd { return s.NetworkCPU }},
	{"ops_per_busy_core", "TPS per busy core", false, func(s steps.Stats) *steps.MeanStd { return s.OpsPerBusyCore }},
	{"net_gbps", "network Gb/s", false, func(s steps.Stats) *steps.MeanStd { return s.NetGbps }},
	{"watts_per_million_ops", "W per M TPS", true, func(s steps.Stats) *steps.MeanStd { return s.WattsPerMOps }},
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
// without colour: "+31.2% better". better reports the direction for colour.
func deltaText(mt metric, pct float64) (text string, better, same bool) {
	if math.Abs(pct) < 0.05 {
		return fmt.Sprintf("%+.1f%% same", pct), false, true
	}
	better = (pct < 0) == mt.lower
	word := "worse"
	if better {
		word = "better"
	}
	return fmt.Sprintf("%+.1f%% %s", pct, word), better, false
}
