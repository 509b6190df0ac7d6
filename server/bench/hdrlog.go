package bench

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
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
// 1 µs..2 ms encodes to a few hundred bytes (hdrlog_test.go measures it).
//
// Several client hosts measuring one load are merged with MergeSamples (one
// interval) and MergeTotals (one run): rates and counts summed, latencies
// read from the merged histograms. Averaged percentiles would be wrong: the
// p99 of a union is not the mean of the p99s.

// ErrNoHistogram is returned (wrapped) by the merge functions when a line
// has no "latency_hdr_us" (written by a bench older than the field): its
// rates and counts are merged, but no latency can be computed from it.
var ErrNoHistogram = errors.New("no latency histogram (latency_hdr_us) in the line: written by an older dpulab bench")

// encodeHist encodes h for the wire; "" for an empty histogram (nothing to
// merge) or one that would not encode (the library only fails on a broken
// writer, which a bytes.Buffer is not).
func encodeHist(h *hdrhistogram.Histogram) string {
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
		return newHist(), nil
	}
	h, err := hdrhistogram.Decode([]byte(enc))
	if err != nil {
		return nil, fmt.Errorf("latency_hdr_us: %w", err)
	}
	return h, nil
}

// Histogram returns the sample's latency histogram (microseconds), or
// ErrNoHistogram when the line had none although it counted replies.
func (s *Sample) Histogram() (*hdrhistogram.Histogram, error) {
	return lineHist(s.LatencyHDR, s.OpsPerSec > 0)
}

// Histogram returns the totals' latency histogram (microseconds), or
// ErrNoHistogram when the line had none although it counted replies.
func (t *Totals) Histogram() (*hdrhistogram.Histogram, error) {
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
	all := newHist()
	for _, h := range hs {
		if h.LowestTrackableValue() == all.LowestTrackableValue() && h.HighestTrackableValue() == all.HighestTrackableValue() && h.SignificantFigures() == all.SignificantFigures() {
			all.Merge(h)
			continue
		}
		for _, b := range h.Distribution() {
			if b.Count > 0 {
				_ = all.RecordValues(min(max(b.From, histMin), histMax), b.Count)
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
func MergeSamples(samples []*Sample) (*Sample, error) {
	if len(samples) == 0 {
		return nil, errors.New("merge samples: none given")
	}
	out := &Sample{Run: samples[0].Run, Target: samples[0].Target, OpsPerSecByCmd: map[string]float64{}}
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
		mergeClientCPU(&out.ClientCPUPct, &out.ClientHostBusyPct, s.ClientCPUPct, s.ClientHostBusyPct)
		h, err := s.Histogram()
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
	out.LatencyMs = latencyOf(h)
	out.LatencyHDR = encodeHist(h)
	return out, nil
}

// MergeTotals merges one run's totals from several client hosts that ran
// together: counts and bytes summed, rates summed (each host's own rate
// over its own measured time), Seconds the longest, the latency summary and
// the percentiles (the keys the inputs carry) read from the merged
// histograms. Per-command latencies are not merged (the line carries no
// per-command histogram) and are left out. A missing histogram is handled
// as in MergeSamples.
func MergeTotals(ts []Totals) (Totals, error) {
	out := Totals{OpsByCmd: map[string]int64{}, OpsPerSecByCmd: map[string]float64{}}
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
		h, err := t.Histogram()
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
	out.LatencyMs = latencyOf(h)
	out.LatencyHDR = encodeHist(h)
	var ps []float64
	for k := range pcts {
		if p, err := strconv.ParseFloat(k, 64); err == nil {
			ps = append(ps, p)
		}
	}
	out.LatencyMsPercentiles = percentilesOf(h, ps)
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
