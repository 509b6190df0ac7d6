package benchwire

import (
	"errors"
	"fmt"
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
