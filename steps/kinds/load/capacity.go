package load

import (
	"fmt"
	"strconv"
	"time"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/results"
)

// DefaultObjective is the objective of a capacity: mapping without one.
const DefaultObjective = "p99<=1ms"

// CapacityConfig is flat, a job's bench configuration, as the capacity
// search spec runs it: the same targets and load shape, no rate, no request
// count, one search (benchwire.Config.Validate refuses those with --capacity).
func CapacityConfig(spec *labs.CapacitySpec, vars map[string]string, flat benchwire.Config) (benchwire.Config, error) {
	obj, err := spec.Objective.String(vars, DefaultObjective)
	if err != nil {
		return flat, fmt.Errorf("capacity objective: %w", err)
	}
	cs, err := benchwire.ParseCapacity(obj)
	if err != nil {
		return flat, err
	}
	if cs.Precision, err = spec.Precision.Float(vars, cs.Precision); err != nil {
		return flat, fmt.Errorf("capacity precision: %w", err)
	}
	if cs.StartRate, err = spec.StartRate.Float(vars, cs.StartRate); err != nil {
		return flat, fmt.Errorf("capacity start_rate: %w", err)
	}
	if cs.MaxRate, err = spec.MaxRate.Float(vars, 0); err != nil {
		return flat, fmt.Errorf("capacity max_rate: %w", err)
	}
	c := flat
	c.Rate, c.RateLimiting, c.Requests, c.RequestsPerClient, c.Runs = 0, 0, 0, 0, 1
	c.JSONOutFile, c.HDRFilePrefix = "", ""
	c.Capacity = &cs
	if err := c.Validate(); err != nil {
		return flat, fmt.Errorf("capacity search: %w", err)
	}
	return c, nil
}

// ProbeServerCPU is the servers' busy CPU over a probe's seconds (nil
// when no sampler reported during it).
func ProbeServerCPU(pts []results.Point, latest *SampleBoard) *float64 {
	r := results.RunResult{Series: pts}
	r.SummarizeSeries(latest.Cores())
	return r.ServerCPU
}

// SearchText says what a search looks for and how precisely.
func SearchText(s *benchwire.CapacitySpec) string {
	t := fmt.Sprintf("highest rate with %s, within %s%%, from %s ops/s", s.Objective(), strconv.FormatFloat(s.Precision*100, 'g', 3, 64), results.RateText(s.StartRate))
	if s.MaxRate > 0 {
		t += " up to " + results.RateText(s.MaxRate)
	}
	return t
}

// ProbeText is the line said after each probe (serverCPU: the servers'
// busy CPU during it, when sampled).
func ProbeText(label string, s *benchwire.CapacitySpec, p *benchwire.CapacityProbe, serverCPU *float64) string {
	verdict := "met"
	if !p.Pass {
		verdict = "missed: " + p.Reason
	}
	cpu := ""
	if serverCPU != nil {
		cpu = fmt.Sprintf(", server CPU %.1f%%", *serverCPU)
	}
	return fmt.Sprintf("%s capacity probe %d: %s ops/s asked, %s answered, p%s %.3f ms%s: %s", label, p.Probe,
		results.RateText(p.RateOpsPerSec), results.RateText(p.OpsPerSec), strconv.FormatFloat(s.Percentile, 'g', -1, 64), p.PercentileMs, cpu, verdict)
}

// FoundText is the line said when a search ends.
func FoundText(label string, k *results.Capacity) string {
	t := label + ": TPS at " + k.ObjectiveText() + ": "
	if k.RateOpsPerSec > 0 {
		t += results.RateText(k.RateOpsPerSec) + " ops/s"
		if k.ServerCPU != nil {
			t += fmt.Sprintf(", server CPU %.1f%% there (probe %d)", *k.ServerCPU, k.ServerCPUProbe)
		}
	} else {
		t += "none"
	}
	t += fmt.Sprintf(" (%d probes", k.Probes)
	if o := k.Outcome(); o != "" {
		t += "; " + o
	}
	return t + ")"
}

func ProbeResult(p *benchwire.CapacityProbe) results.CapacityProbe {
	return results.CapacityProbe{Probe: p.Probe, RateOpsPerSec: p.RateOpsPerSec, OpsPerSec: p.OpsPerSec, PercentileMs: p.PercentileMs,
		Errors: p.Errors, Unsent: p.Unsent, Pass: p.Pass, Reason: p.Reason, ClientBound: p.ClientBound}
}

// CapacityResult is the search's result as recorded, with the servers'
// CPU at the probe that found the answer.
func CapacityResult(r *benchwire.CapacityResult, probes []results.CapacityProbe) *results.Capacity {
	k := &results.Capacity{
		Objective: r.Objective, Percentile: r.Percentile, CapMs: r.CapMs, Precision: r.Precision,
		RateOpsPerSec: r.RateOpsPerSec, OpsPerSec: r.OpsPerSec, PercentileMs: r.PercentileMs, LatencyMs: results.Latency(r.LatencyMs),
		FailedRateOpsPerSec: r.FailedRateOpsPerSec, Probes: r.Probes, ProbeLog: probes,
		Limit: r.Limit, ClientBound: r.ClientBound, Err: r.Err,
	}
	if r.RateOpsPerSec > 0 {
		for _, p := range probes {
			// The probe's number, or (from an older bench without it)
			// the passing probe at the answer's rate.
			if (r.Probe > 0 && p.Probe == r.Probe) || (r.Probe == 0 && p.Pass && p.RateOpsPerSec == r.RateOpsPerSec) {
				if p.ServerCPU != nil {
					v := *p.ServerCPU
					k.ServerCPU, k.ServerCPUProbe = &v, p.Probe
				}
			}
		}
	}
	return k
}

// CapacityShares divides a search's load among the client hosts as
// SplitLoad divides a flat-out run's, and gives each host's fraction of a
// probe's total rate.
func CapacityShares(cfg benchwire.Config, hosts []kind.Host) (shares []ClientShare, weights []float64, note string) {
	c := cfg
	// A rate of 1 split is each host's fraction (SplitLoad keeps a
	// capacity search on one host: here this kind drives it, byKind).
	c.Capacity, c.Rate = nil, 1
	shares, note = SplitLoad(c, hosts)
	for i := range shares {
		weights = append(weights, shares[i].Config.Rate)
		shares[i].Config.Rate = 0
		shares[i].Config.Capacity = cfg.Capacity
	}
	return shares, weights, note
}

// HostProbeConfig is a host's bench for one probe: its share of the load,
// a capacity search whose first probe is at rate (its share of the total)
// and lasts d, prefilling only before the search's first probe.
func HostProbeConfig(share benchwire.Config, spec benchwire.CapacitySpec, rate float64, d time.Duration, prefill bool) benchwire.Config {
	c := share
	k := spec
	k.StartRate, k.MaxRate = rate, rate
	c.Capacity, c.Duration = &k, d
	c.Prefill = c.Prefill && prefill
	return c
}

// ProbeLength is how long every host's part of a probe at total rate
// lasts: the longest any host needs for its share's replies.
func ProbeLength(cfg benchwire.Config, spec benchwire.CapacitySpec, shares []ClientShare, weights []float64, rate float64) time.Duration {
	d := cfg.Duration
	for i, s := range shares {
		d = max(d, benchwire.ProbeDuration(s.Config, spec, rate*weights[i]))
	}
	return d
}
