package bench

import (
	"context"
	"time"

	"github.com/dpulab/dpulab/internal/benchhdr"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
)

// CapacitySpec is a latency objective and how precisely to search for it
// (declared in internal/wire/benchwire, which labs and the engine read
// without linking the load generator).
type CapacitySpec = benchwire.CapacitySpec

// The capacity search's events, the search itself and its verdicts are
// benchwire's (capacity.go there has the method), so that the engine runs
// the same search over several client hosts without linking the bench.
type (
	CapacityProbe  = benchwire.CapacityProbe
	CapacityResult = benchwire.CapacityResult
	ProbeFunc      = benchwire.ProbeFunc
)

// Event types of a capacity search.
const (
	TypeCapacityProbe = benchwire.TypeCapacityProbe
	TypeCapacity      = benchwire.TypeCapacity
)

// DefaultCapacity is p99 ≤ 1 ms, 5% precision, starting at 1000 ops/s.
func DefaultCapacity() CapacitySpec { return benchwire.DefaultCapacity() }

// ParseCapacity reads an objective such as "p99<=1ms" (benchwire.ParseCapacity).
func ParseCapacity(s string) (CapacitySpec, error) { return benchwire.ParseCapacity(s) }

// Capacity runs a capacity search for spec with cfg's load shape (targets,
// connections, pipeline, ratio, keys, sizes; cfg.Duration per probe). The
// events are Start, Prefill (if asked), each probe's Samples (their "run"
// is the probe's number) and CapacityProbe, then the CapacityResult, which
// is also returned (with what was found when the search ended early on an
// error or ctx).
func Capacity(ctx context.Context, cfg Config, spec CapacitySpec, emit func(Event)) (*CapacityResult, error) {
	cfg.Capacity = &spec
	_, res, err := run(ctx, cfg, runOpts{}, emit)
	return res, err
}

// probeCutoff is how long after a probe's end a worker still behind the
// rate gives up: half the probe, at least a second (capacity's method,
// benchwire).
func probeCutoff(pc *Config) time.Duration { return max(pc.Duration/2, time.Second) }

// searchCapacity runs the search over connected workers, a fresh collector
// per probe.
func searchCapacity(ctx context.Context, cfg *Config, workers []*worker, set *connSet, probeCol func(*Config) *collector, emit func(Event)) (*CapacityResult, error) {
	spec := *cfg.Capacity
	probe := func(n int, rate float64) (*CapacityProbe, error) {
		pc := benchwire.ProbeConfig(cfg, &spec, rate)
		r, err := runOnce(ctx, &pc, probeCutoff(&pc), n, workers, probeCol(&pc), set, emit)
		return benchhdr.Judge(&spec, n, rate, r), err
	}
	return benchwire.Search(ctx, spec, benchwire.MinProbeRate(*cfg, spec), probe, emit)
}
