package bench

import (
	"errors"
	"fmt"
	"time"
)

// A capacity search from several client hosts (the lab engine's, when a
// step's load comes from more than one host): every probe at a total rate
// R runs on each host at its share of R, the hosts at once, and the
// probe's verdict is read from their probes merged (MergeProbes): the
// percentile from the union of their histograms, never from averaged
// percentiles. The search over those probes is Search, the one
// `dpulab bench --capacity` runs.

// ProbeDuration is how long a probe at rate (ops/s, cfg's connections)
// measures: cfg.Duration, or longer when that is too short for the
// replies the percentile needs, in whole intervals. Several hosts running
// one probe give each host the longest of their ProbeDurations, so that
// none lengthens its own.
func ProbeDuration(cfg Config, spec CapacitySpec, rate float64) time.Duration {
	if rate <= 0 || cfg.Interval <= 0 {
		return cfg.Duration
	}
	return probeConfig(&cfg, &spec, rate).Duration
}

// MinProbeRate is the lowest rate a probe with cfg's duration measures
// (Search's floor): one whose replies take at most ten probe durations.
func MinProbeRate(cfg Config, spec CapacitySpec) float64 {
	return minRate(&cfg, &spec)
}

// MergeProbes is probe n at total rate (ops/s) from the probes several
// client hosts ran together, each at its share: counts, rates and unsent
// requests summed, the latency summary and the objective's percentile read
// from the merged histograms, then judged against spec as one probe. A
// host's client-bound flag and its busiest CPU carry over. A host's probe
// without a histogram is an error (its latency cannot be merged).
func MergeProbes(spec CapacitySpec, n int, rate float64, hosts []*CapacityProbe) (*CapacityProbe, error) {
	if len(hosts) == 0 {
		return nil, errors.New("merge probes: none given")
	}
	ts := make([]Totals, len(hosts))
	r := &RunResult{Run: n}
	for i, p := range hosts {
		if p == nil {
			return nil, fmt.Errorf("merge probes: host %d has no probe", i)
		}
		ts[i] = Totals{Seconds: p.DurationSeconds, Ops: p.Ops, OpsPerSec: p.OpsPerSec, LatencyMs: p.LatencyMs,
			Errors: p.Errors, ErrorsByKind: p.ErrorsByKind, LatencyHDR: p.LatencyHDR}
		r.Unsent += p.Unsent
		r.ClientBound = r.ClientBound || p.ClientBound
		mergeClientCPU(&r.ClientCPUPct, &r.ClientHostBusyPct, p.ClientCPUPct, p.ClientHostBusyPct)
	}
	t, err := MergeTotals(ts)
	if err != nil {
		return nil, err
	}
	r.Totals = t
	return judge(&spec, n, rate, r), nil
}
