package benchwire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// MaxLatency is the highest latency the bench's histograms record (60 s):
// a capacity objective's cap must be within it.
const MaxLatency = 60 * time.Second

// CapacitySpec is a latency objective and how precisely to search for it.
type CapacitySpec struct {
	// Percentile is the latency percentile held under Cap (default 99).
	Percentile float64 `json:"percentile"`
	// Cap is the latency bound (default 1 ms).
	Cap time.Duration `json:"cap_ns"`
	// Precision is the relative width of the final bracket: the search
	// stops when the lowest failing rate is within (1 + Precision) of the
	// highest passing one (default 0.05).
	Precision float64 `json:"precision"`
	// StartRate is the first probe's rate in ops/s (default 1000).
	StartRate float64 `json:"start_rate_ops_per_sec"`
	// MaxRate, when > 0, is the highest rate probed: a search that passes
	// there stops and says so.
	MaxRate float64 `json:"max_rate_ops_per_sec,omitempty"`
}

// DefaultCapacity is p99 ≤ 1 ms, 5% precision, starting at 1000 ops/s.
func DefaultCapacity() CapacitySpec {
	return CapacitySpec{Percentile: 99, Cap: time.Millisecond, Precision: 0.05, StartRate: 1000}
}

// ParseCapacity reads an objective such as "p99<=1ms", "p99.9<=500us" or
// "p50 < 2ms" (< and <= both mean at most); the other fields are
// DefaultCapacity's.
func ParseCapacity(s string) (CapacitySpec, error) {
	spec := DefaultCapacity()
	t := strings.ReplaceAll(strings.TrimSpace(s), " ", "")
	bad := fmt.Errorf("capacity objective %q: want pPERCENTILE<=LATENCY, e.g. p99<=1ms or p99.9<=500us", s)
	if !strings.HasPrefix(strings.ToLower(t), "p") {
		return spec, bad
	}
	pct, lat, ok := strings.Cut(t[1:], "<=")
	if !ok {
		pct, lat, ok = strings.Cut(t[1:], "<")
	}
	if !ok {
		return spec, bad
	}
	p, err := strconv.ParseFloat(pct, 64)
	if err != nil {
		return spec, bad
	}
	d, err := time.ParseDuration(strings.ReplaceAll(lat, "µ", "u"))
	if err != nil {
		return spec, bad
	}
	spec.Percentile, spec.Cap = p, d
	return spec, spec.Validate()
}

// Objective writes the objective as ParseCapacity reads it.
func (s CapacitySpec) Objective() string {
	return "p" + strconv.FormatFloat(s.Percentile, 'g', -1, 64) + "<=" + s.Cap.String()
}

// Validate checks the spec's ranges.
func (s CapacitySpec) Validate() error {
	var errs []error
	if !(s.Percentile > 0 && s.Percentile < 100) {
		errs = append(errs, fmt.Errorf("capacity: percentile %g: want one in (0, 100), e.g. 99", s.Percentile))
	}
	if s.Cap <= 0 || s.Cap > MaxLatency {
		errs = append(errs, fmt.Errorf("capacity: latency cap %s: want a positive duration up to 60s, e.g. 1ms", s.Cap))
	}
	if !(s.Precision >= 0.001 && s.Precision <= 0.5) {
		errs = append(errs, fmt.Errorf("--capacity-precision %g: want 0.001..0.5 (0.05 = the answer within 5%%)", s.Precision))
	}
	if !(s.StartRate > 0) {
		errs = append(errs, fmt.Errorf("--capacity-start-rate %g: want ops/s > 0", s.StartRate))
	}
	if s.MaxRate < 0 || (s.MaxRate > 0 && s.MaxRate < s.StartRate) {
		errs = append(errs, fmt.Errorf("--capacity-max-rate %g: want 0 (no limit) or at least the start rate %g", s.MaxRate, s.StartRate))
	}
	return errors.Join(errs...)
}

// Capacity search: the highest --rate at which a latency percentile stays
// under a cap ("TPS at p99 ≤ 1 ms"), the figure engineers quote.
//
// Method. Each probe is one run at a fixed total rate over the same
// connections, its latency measured from when each request was due
// (coordinated-omission-corrected: a server that falls behind shows in the
// latency of every request that waited). A probe passes when the
// percentile of all its requests is ≤ the cap, no request failed, and the
// rate was kept: a request still unsent half a probe (at least a second)
// after the probe's end would wait longer than any cap, so the probe is
// cut there and fails ("unsent"). The search starts at StartRate and
// doubles while probes pass; after a failure it halves while they fail
// (down to the lowest rate a probe can measure); between the highest pass
// and the lowest failure it bisects until the failure is within Precision
// of the pass (default 5%). The answer is the highest rate that passed:
// if the latency grows with the rate, the true capacity lies in [answer,
// answer × (1 + Precision)). Probes near the capacity are noisy; repeat the
// search (or lengthen the probes) to see how much.
//
// Every probe lasts --duration (after --warmup) and at least long enough for
// minProbeReplies replies, so that the percentile rests on at least ten
// requests beyond it (1,000 for p99, 10,000 for p99.9).

// maxProbes bounds a search: 1000 ops/s to 100 M ops/s is 17 doublings,
// 5% precision 5 bisections more.
const maxProbes = 40

// minProbeReplies is how many replies a probe needs for the percentile:
// ten beyond it, and never fewer than 1000.
func minProbeReplies(s CapacitySpec) float64 {
	return math.Max(1000, math.Ceil(10/(1-s.Percentile/100)))
}

// CapacityProbe is one probe of a capacity search (a line of its own,
// "capacity_probe", after the probe's samples).
type CapacityProbe struct {
	// Probe is 1-based; the probe's samples carry it as their "run".
	Probe int `json:"probe"`
	// RateOpsPerSec is the rate asked for; OpsPerSec what was answered
	// per second of the probe.
	RateOpsPerSec   float64 `json:"rate_ops_per_sec"`
	OpsPerSec       float64 `json:"ops_per_sec"`
	DurationSeconds float64 `json:"duration_seconds"`
	Ops             int64   `json:"ops"`
	LatencyMs       Latency `json:"latency_ms"`
	// PercentileMs is the objective's percentile of the probe's latency.
	PercentileMs float64 `json:"percentile_ms"`
	Errors       int64   `json:"errors"`
	// ErrorsByKind counts the errors by the server's error code.
	ErrorsByKind map[string]int64 `json:"errors_by_kind,omitempty"`
	// LatencyHDR is the probe's latency histogram (encoded as
	// Sample.LatencyHDR): what MergeProbes merges when several client
	// hosts ran the probe together.
	LatencyHDR string `json:"latency_hdr_us,omitempty"`
	// Unsent counts requests that fell due but were never sent before the
	// probe was cut.
	Unsent int64 `json:"unsent,omitempty"`
	Pass   bool  `json:"pass"`
	// Reason says why a probe failed.
	Reason string `json:"reason,omitempty"`
	// Err is set when the probe could not be measured (connection lost,
	// interrupted): no verdict on its rate, and the search ended there.
	Err               string   `json:"error,omitempty"`
	ClientCPUPct      *float64 `json:"client_cpu_pct,omitempty"`
	ClientHostBusyPct *float64 `json:"client_host_busy_pct,omitempty"`
	ClientBound       bool     `json:"client_bound,omitempty"`
}

// CapacityResult ends a capacity search (the last line, "capacity").
type CapacityResult struct {
	// Objective is the spec as written ("p99<=1ms").
	Objective  string  `json:"objective"`
	Percentile float64 `json:"percentile"`
	CapMs      float64 `json:"cap_ms"`
	Precision  float64 `json:"precision"`
	// RateOpsPerSec is the highest probed rate that met the objective (0:
	// none did); OpsPerSec, LatencyMs and PercentileMs are that probe's.
	RateOpsPerSec float64 `json:"rate_ops_per_sec"`
	OpsPerSec     float64 `json:"ops_per_sec"`
	LatencyMs     Latency `json:"latency_ms"`
	PercentileMs  float64 `json:"percentile_ms"`
	// Probe is the number of the probe that found the answer (0: none).
	Probe int `json:"probe,omitempty"`
	// FailedRateOpsPerSec is the lowest probed rate that missed it (0:
	// none did, the search stopped at MaxRate).
	FailedRateOpsPerSec float64 `json:"failed_rate_ops_per_sec,omitempty"`
	// Probes counts the probes run.
	Probes int `json:"probes"`
	// Limit says why the search stopped short of a bracket, if it did:
	// "max_rate" (passed at --capacity-max-rate) or "min_rate" (failed
	// down to the lowest rate a probe can measure).
	Limit string `json:"limit,omitempty"`
	// ClientBound is set when the decisive probes (the highest pass or the
	// lowest failure) were client_bound: the capacity found may be the
	// client's.
	ClientBound bool `json:"client_bound,omitempty"`
	// Err states why the search ended early.
	Err string `json:"error,omitempty"`
}

// Event types of a capacity search.
const (
	TypeCapacityProbe = "capacity_probe"
	TypeCapacity      = "capacity"
)

// EventType implementations.
func (*CapacityProbe) EventType() string  { return TypeCapacityProbe }
func (*CapacityResult) EventType() string { return TypeCapacity }

// MarshalJSON writes the event with its "type" first.
func (p CapacityProbe) MarshalJSON() ([]byte, error) {
	type plain CapacityProbe
	return json.Marshal(struct {
		Type string `json:"type"`
		plain
	}{TypeCapacityProbe, plain(p)})
}

// MarshalJSON writes the event with its "type" first.
func (r CapacityResult) MarshalJSON() ([]byte, error) {
	type plain CapacityResult
	return json.Marshal(struct {
		Type string `json:"type"`
		plain
	}{TypeCapacity, plain(r)})
}

// ProbeFunc runs probe n at a total rate (ops/s) and returns its verdict
// (judged against the search's spec). An error means the probe could not
// be measured: the search ends there.
type ProbeFunc func(n int, rate float64) (*CapacityProbe, error)

// Search is the search proper over probe (capacity.go's doc): up by
// doubling while probes pass, down by halving while they fail (not below
// floor, the lowest rate a probe can measure), then bisection until the
// bracket is within spec.Precision. A probe's error (interrupted,
// connection lost, stall) ends the search: it is no verdict on the rate.
// Each probe and then the result are passed to emit (may be nil).
//
// `dpulab bench --capacity` runs it over its own connections; the lab
// engine runs it over probes that several client hosts run together
// (MergeProbes), so both searches are this one.
func Search(ctx context.Context, spec CapacitySpec, floor float64, probe ProbeFunc, emit func(Event)) (*CapacityResult, error) {
	if emit == nil {
		emit = func(Event) {}
	}
	res := &CapacityResult{Objective: spec.Objective(), Percentile: spec.Percentile, CapMs: float64(spec.Cap) / 1e6, Precision: spec.Precision}
	var best, failed *CapacityProbe
	rate := spec.StartRate
	var err error
	for n := 1; ; n++ {
		if n > maxProbes {
			err = fmt.Errorf("capacity search: no answer within %d probes", maxProbes)
			break
		}
		if ctx.Err() != nil {
			err = fmt.Errorf("capacity search interrupted: %w", ctx.Err())
			break
		}
		p, perr := probe(n, rate)
		res.Probes = n
		if perr != nil {
			if p == nil {
				p = &CapacityProbe{Probe: n, RateOpsPerSec: rate}
			}
			p.Pass, p.Reason, p.Err = false, "error: "+perr.Error(), perr.Error()
			emit(p)
			err = fmt.Errorf("capacity search, probe %d at %.0f ops/s: %w", n, rate, perr)
			break
		}
		emit(p)
		if p.Pass {
			best = p
		} else {
			failed = p
		}
		switch {
		case failed == nil && spec.MaxRate > 0 && rate >= spec.MaxRate:
			res.Limit = "max_rate"
		case failed == nil: // passing so far: go up
			rate *= 2
			if spec.MaxRate > 0 {
				rate = min(rate, spec.MaxRate)
			}
			continue
		case best == nil: // failing so far: go down
			if rate/2 >= floor {
				rate /= 2
				continue
			}
			res.Limit = "min_rate"
		case failed.RateOpsPerSec > best.RateOpsPerSec*(1+spec.Precision):
			rate = (best.RateOpsPerSec + failed.RateOpsPerSec) / 2
			continue
		}
		break
	}
	if best != nil {
		res.RateOpsPerSec, res.OpsPerSec, res.LatencyMs, res.PercentileMs = best.RateOpsPerSec, best.OpsPerSec, best.LatencyMs, best.PercentileMs
		res.Probe = best.Probe
		res.ClientBound = best.ClientBound
	}
	if failed != nil {
		res.FailedRateOpsPerSec = failed.RateOpsPerSec
		res.ClientBound = res.ClientBound || failed.ClientBound
	}
	if err != nil {
		res.Err = err.Error()
	}
	emit(res)
	return res, err
}

// Judge turns a probe's run into its verdict against spec; percentileMs is
// the objective's percentile of the run's latency, read from its histogram
// by the caller (benchhdr), which this package does not decode.
func Judge(spec *CapacitySpec, n int, rate float64, r *RunResult, percentileMs float64) *CapacityProbe {
	p := &CapacityProbe{
		Probe: n, RateOpsPerSec: rate, OpsPerSec: r.OpsPerSec, DurationSeconds: r.Seconds, Ops: r.Ops,
		LatencyMs: r.LatencyMs, Errors: r.Errors, ErrorsByKind: r.ErrorsByKind, LatencyHDR: r.LatencyHDR, Unsent: r.Unsent,
		ClientCPUPct: r.ClientCPUPct, ClientHostBusyPct: r.ClientHostBusyPct, ClientBound: r.ClientBound,
	}
	p.PercentileMs = percentileMs
	capMs := float64(spec.Cap) / 1e6
	switch {
	case r.Unsent > 0:
		p.Reason = fmt.Sprintf("rate not kept: %d requests due were still unsent long after the probe's end", r.Unsent)
	case r.Errors > 0:
		p.Reason = fmt.Sprintf("%d errors (%s)", r.Errors, KindsText(r.ErrorsByKind))
	case r.Ops == 0:
		p.Reason = "no replies"
	case p.PercentileMs > capMs:
		p.Reason = fmt.Sprintf("p%s %.3f ms > %.3f ms", strconv.FormatFloat(spec.Percentile, 'g', -1, 64), p.PercentileMs, capMs)
	default:
		p.Pass = true
	}
	return p
}

// ProbeConfig is cfg as one probe at rate runs it: no capacity, the rate
// fixed, and long enough for the replies the percentile needs.
func ProbeConfig(cfg *Config, spec *CapacitySpec, rate float64) Config {
	pc := *cfg
	pc.Capacity = nil
	pc.Rate = rate
	need := time.Duration(math.Ceil(minProbeReplies(*spec)/rate*1e9)) * time.Nanosecond
	if need > pc.Duration {
		// Whole intervals, so the samples are whole seconds.
		pc.Duration = (need + pc.Interval - 1) / pc.Interval * pc.Interval
	}
	return pc
}

// minRate is the lowest rate a probe measures: one whose minimum replies
// take at most ten probe durations.
func minRate(cfg *Config, spec *CapacitySpec) float64 {
	return minProbeReplies(*spec) / (10 * cfg.Duration.Seconds())
}

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
	return ProbeConfig(&cfg, &spec, rate).Duration
}

// MinProbeRate is the lowest rate a probe with cfg's duration measures
// (Search's floor): one whose replies take at most ten probe durations.
func MinProbeRate(cfg Config, spec CapacitySpec) float64 {
	return minRate(&cfg, &spec)
}

// MergeClientCPU keeps the busiest host's client CPU figures: merged
// lines carry the most loaded host's, since a saturated host is what
// matters.
func MergeClientCPU(proc, host **float64, p, h *float64) {
	if h != nil && (*host == nil || *h > **host) {
		*host = h
		*proc = p
	} else if *host == nil && p != nil && (*proc == nil || *p > **proc) {
		*proc = p
	}
}
