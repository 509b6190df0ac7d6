package benchhdr

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
)

// Interval histograms on the wire.
//
// Every sample and every run's totals carry their latency histogram as
// "latency_hdr_us": HdrHistogram's V2 compressed encoding (zlib-deflated
// counts, base64), the string a line of an HdrHistogram interval log holds
// (.hlog, what HistogramLogReader reads). The histogram is the one the bench
// measured: microseconds, 1 µs .. 60 s, 3 significant digits (each value
// within 0.1% of the recorded one), so merging loses nothing that a single
// host's percentiles had. A second of a few thousand latencies spread over
// 1 µs..2 ms encodes to a few hundred bytes (server/bench's hdrlog_test.go measures it).
//
// Several client hosts measuring one load are merged with MergeSamples (one
// interval) and MergeTotals (one run): rates and counts summed, latencies
// read from the merged histograms. Averaged percentiles would be wrong: the
// p99 of a union is not the mean of the p99s.

// ErrNoHistogram is returned (wrapped) by the merge functions when a line
// has no "latency_hdr_us" (written by a bench older than the field): its
// rates and counts are merged, but no latency can be computed from it.
var ErrNoHistogram = errors.New("no latency histogram (latency_hdr_us) in the line: written by an older dpulab bench")

// Encode encodes h for the wire; "" for an empty histogram (nothing to
// merge) or one that would not encode (the library only fails on a broken
// writer, which a bytes.Buffer is not).
func Encode(h *hdrhistogram.Histogram) string {
	if h == nil || h.TotalCount() == 0 {
		return ""
	}
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return ""
	}
	return string(b)
}

// DecodeHistogram decodes a "latency_hdr_us" value: the latencies in
// microseconds. An empty string is an empty histogram of the bench's shape.
func DecodeHistogram(enc string) (*hdrhistogram.Histogram, error) {
	if enc == "" {
		return NewHistogram(), nil
	}
	h, err := hdrhistogram.Decode([]byte(enc))
	if err != nil {
		return nil, fmt.Errorf("latency_hdr_us: %w", err)
	}
	return h, nil
}

// SampleHistogram returns a sample's latency histogram (microseconds), or
// ErrNoHistogram when the line had none although it counted replies.
func SampleHistogram(s *benchwire.Sample) (*hdrhistogram.Histogram, error) {
	return lineHist(s.LatencyHDR, s.OpsPerSec > 0)
}

// TotalsHistogram returns a run's or probe's latency histogram
// (microseconds), or ErrNoHistogram when the line had none although it
// counted replies.
func TotalsHistogram(t *benchwire.Totals) (*hdrhistogram.Histogram, error) {
	return lineHist(t.LatencyHDR, t.Ops > 0)
}

func lineHist(enc string, hadReplies bool) (*hdrhistogram.Histogram, error) {
	if enc == "" && hadReplies {
		return nil, ErrNoHistogram
	}
	return DecodeHistogram(enc)
}

// mergeHists merges decoded histograms into one of the bench's shape. A
// histogram of another shape (another writer's) is folded in bar by bar,
// values clamped into the bench's range, so that counts still add up.
func mergeHists(hs []*hdrhistogram.Histogram) *hdrhistogram.Histogram {
	all := NewHistogram()
	for _, h := range hs {
		if h.LowestTrackableValue() == all.LowestTrackableValue() && h.HighestTrackableValue() == all.HighestTrackableValue() && h.SignificantFigures() == all.SignificantFigures() {
			all.Merge(h)
			continue
		}
		for _, b := range h.Distribution() {
			if b.Count > 0 {
				_ = all.RecordValues(min(max(b.From, MinValue), MaxValue), b.Count)
			}
		}
	}
	return all
}

// MergeSamples merges the samples of one interval measured by several
// client hosts driving the same servers (the caller picks the lines of the
// same run and second). Rates, per-command rates, errors and bytes are
// summed; the latency summary is read from the merged histograms and the
// merged histogram is carried on. T is the latest of the samples' T, Target
// is kept when every sample names the same one. The client CPU figures are
// each host's own and are not merged: the result carries the busiest host's
// (a saturated host is what matters).
//
// When a sample has no histogram (an older bench), the counts are still
// merged and returned with the error ErrNoHistogram; the latency is left
// zero rather than made up.
func MergeSamples(samples []*benchwire.Sample) (*benchwire.Sample, error) {
	if len(samples) == 0 {
		return nil, errors.New("merge samples: none given")
	}
	out := &benchwire.Sample{Run: samples[0].Run, Target: samples[0].Target, OpsPerSecByCmd: map[string]float64{}}
	var hists []*hdrhistogram.Histogram
	var errs []error
	for i, s := range samples {
		if s == nil {
			return nil, fmt.Errorf("merge samples: sample %d is nil", i)
		}
		out.T = math.Max(out.T, s.T)
		if s.Target != out.Target {
			out.Target = ""
		}
		out.OpsPerSec += s.OpsPerSec
		for k, v := range s.OpsPerSecByCmd {
			out.OpsPerSecByCmd[k] += v
		}
		out.Errors += s.Errors
		out.ErrorsByKind = addKinds(out.ErrorsByKind, s.ErrorsByKind)
		out.BytesSentPerSec += s.BytesSentPerSec
		out.BytesRecvPerSec += s.BytesRecvPerSec
		benchwire.MergeClientCPU(&out.ClientCPUPct, &out.ClientHostBusyPct, s.ClientCPUPct, s.ClientHostBusyPct)
		h, err := SampleHistogram(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("sample %d (run %d, t %g s): %w", i, s.Run, s.T, err))
			continue
		}
		hists = append(hists, h)
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("merge samples: %w", errors.Join(errs...))
	}
	h := mergeHists(hists)
	out.LatencyMs = LatencyOf(h)
	out.LatencyHDR = Encode(h)
	return out, nil
}

// MergeTotals merges one run's totals from several client hosts that ran
// together: counts and bytes summed, rates summed (each host's own rate
// over its own measured time), Seconds the longest, the latency summary and
// the percentiles (the keys the inputs carry) read from the merged
// histograms. Per-command latencies are not merged (the line carries no
// per-command histogram) and are left out. A missing histogram is handled
// as in MergeSamples.
func MergeTotals(ts []benchwire.Totals) (benchwire.Totals, error) {
	out := benchwire.Totals{OpsByCmd: map[string]int64{}, OpsPerSecByCmd: map[string]float64{}}
	if len(ts) == 0 {
		return out, errors.New("merge totals: none given")
	}
	var hists []*hdrhistogram.Histogram
	var errs []error
	pcts := map[string]bool{}
	for i := range ts {
		t := &ts[i]
		out.Seconds = math.Max(out.Seconds, t.Seconds)
		out.Ops += t.Ops
		out.OpsPerSec += t.OpsPerSec
		for k, v := range t.OpsByCmd {
			out.OpsByCmd[k] += v
		}
		for k, v := range t.OpsPerSecByCmd {
			out.OpsPerSecByCmd[k] += v
		}
		for k := range t.LatencyMsPercentiles {
			pcts[k] = true
		}
		out.Errors += t.Errors
		out.ErrorsByKind = addKinds(out.ErrorsByKind, t.ErrorsByKind)
		out.Hits += t.Hits
		out.Misses += t.Misses
		out.BytesSent += t.BytesSent
		out.BytesRecv += t.BytesRecv
		out.BytesSentPerSec += t.BytesSentPerSec
		out.BytesRecvPerSec += t.BytesRecvPerSec
		h, err := TotalsHistogram(t)
		if err != nil {
			errs = append(errs, fmt.Errorf("totals %d: %w", i, err))
			continue
		}
		hists = append(hists, h)
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("merge totals: %w", errors.Join(errs...))
	}
	h := mergeHists(hists)
	out.LatencyMs = LatencyOf(h)
	out.LatencyHDR = Encode(h)
	var ps []float64
	for k := range pcts {
		if p, err := strconv.ParseFloat(k, 64); err == nil {
			ps = append(ps, p)
		}
	}
	out.LatencyMsPercentiles = PercentilesOf(h, ps)
	return out, nil
}

func addKinds(dst, src map[string]int64) map[string]int64 {
	for k, v := range src {
		if dst == nil {
			dst = map[string]int64{}
		}
		dst[k] += v
	}
	return dst
}

// Histograms record microseconds from 1 µs to a minute at 3 significant
// digits (about 0.1% error), what redis-benchmark and memtier report.
const (
	MinValue = 1
	MaxValue = 60_000_000
	SigFigs  = 3
)

// NewHistogram is an empty histogram of the bench's shape.
func NewHistogram() *hdrhistogram.Histogram { return hdrhistogram.New(MinValue, MaxValue, SigFigs) }

// LatencyOf summarises a histogram in milliseconds.
func LatencyOf(h *hdrhistogram.Histogram) benchwire.Latency {
	if h == nil || h.TotalCount() == 0 {
		return benchwire.Latency{}
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return benchwire.Latency{
		Avg:  h.Mean() / 1000,
		P50:  ms(h.ValueAtQuantile(50)),
		P90:  ms(h.ValueAtQuantile(90)),
		P99:  ms(h.ValueAtQuantile(99)),
		P999: ms(h.ValueAtQuantile(99.9)),
		Max:  ms(h.Max()),
	}
}

// PercentilesOf reads the --print-percentiles from h, in milliseconds,
// keyed as the percentile is written ("50", "99.9").
func PercentilesOf(h *hdrhistogram.Histogram, ps []float64) map[string]float64 {
	if len(ps) == 0 || h == nil || h.TotalCount() == 0 {
		return nil
	}
	m := make(map[string]float64, len(ps))
	for _, p := range ps {
		m[strconv.FormatFloat(p, 'g', -1, 64)] = float64(h.ValueAtQuantile(p)) / 1000
	}
	return m
}

// MergeProbes is probe n at total rate (ops/s) from the probes several
// client hosts ran together, each at its share: counts, rates and unsent
// requests summed, the latency summary and the objective's percentile read
// from the merged histograms, then judged against spec as one probe. A
// host's client-bound flag and its busiest CPU carry over. A host's probe
// without a histogram is an error (its latency cannot be merged).
func MergeProbes(spec benchwire.CapacitySpec, n int, rate float64, hosts []*benchwire.CapacityProbe) (*benchwire.CapacityProbe, error) {
	if len(hosts) == 0 {
		return nil, errors.New("merge probes: none given")
	}
	ts := make([]benchwire.Totals, len(hosts))
	r := &benchwire.RunResult{Run: n}
	for i, p := range hosts {
		if p == nil {
			return nil, fmt.Errorf("merge probes: host %d has no probe", i)
		}
		ts[i] = benchwire.Totals{Seconds: p.DurationSeconds, Ops: p.Ops, OpsPerSec: p.OpsPerSec, LatencyMs: p.LatencyMs,
			Errors: p.Errors, ErrorsByKind: p.ErrorsByKind, LatencyHDR: p.LatencyHDR}
		r.Unsent += p.Unsent
		r.ClientBound = r.ClientBound || p.ClientBound
		benchwire.MergeClientCPU(&r.ClientCPUPct, &r.ClientHostBusyPct, p.ClientCPUPct, p.ClientHostBusyPct)
	}
	t, err := MergeTotals(ts)
	if err != nil {
		return nil, err
	}
	r.Totals = t
	return Judge(&spec, n, rate, r), nil
}

// Judge turns a probe's run into its verdict against spec
// (benchwire.Judge), the objective's percentile read from the run's
// histogram.
func Judge(spec *benchwire.CapacitySpec, n int, rate float64, r *benchwire.RunResult) *benchwire.CapacityProbe {
	var pct float64
	if h, err := TotalsHistogram(&r.Totals); err == nil && h.TotalCount() > 0 {
		pct = float64(h.ValueAtQuantile(spec.Percentile)) / 1000
	}
	return benchwire.Judge(spec, n, rate, r, pct)
}
