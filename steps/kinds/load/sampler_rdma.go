package load

import (
	"github.com/dpulab/dpulab/internal/wire/samplewire"
	"github.com/dpulab/dpulab/steps/results"
)

// rdmaErrorMetrics maps server/sample's hardware counters to the metrics
// that carry them (steps/results/metrics.go).
var rdmaErrorMetrics = map[string]string{
	"out_of_sequence":       results.MetricRDMAOutOfSequence,
	"packet_seq_err":        results.MetricRDMASeqNAKs,
	"local_ack_timeout_err": results.MetricRDMAAckTimeouts,
	"rnr_nak_retry_err":     results.MetricRDMARNRRetryErrors,
	// Soft-RoCE (rxe) names the nearest counts its own way: requests that
	// arrived out of sequence, sequence-error NAKs received, RC senders out
	// of RNR retries. Its completer_retry_err counts every resend, not
	// only timeouts, so it is not set beside mlx5's ack timeouts.
	"out_of_seq_request":     results.MetricRDMAOutOfSequence,
	"rcvd_seq_err":           results.MetricRDMASeqNAKs,
	"retry_rnr_exceeded_err": results.MetricRDMARNRRetryErrors,
}

// rdmaMetrics is one host's InfiniBand/RoCE figures for a second, by
// metric name: traffic over all its ports in Gb/s, and each error counter
// summed over the ports that have it. nil when the host has no RDMA ports,
// so such a host adds nothing (not zeros) to a merge.
func rdmaMetrics(s samplewire.Sample) map[string]float64 {
	if len(s.RDMA) == 0 {
		return nil
	}
	var bps, pps float64
	bytes := false
	out := map[string]float64{}
	for _, p := range s.RDMA {
		pps += p.RxPacketsPerSec + p.TxPacketsPerSec
		if !p.NoBytes {
			bytes = true
			bps += p.RxBytesPerSec + p.TxBytesPerSec
		}
		for counter, v := range p.Errors {
			if name, ok := rdmaErrorMetrics[counter]; ok {
				out[name] += v
			}
		}
	}
	out[results.MetricRDMAPackets] = pps
	// A port that counts no bytes (Soft-RoCE) gives no Gb/s: absent, not 0.
	if bytes {
		out[results.MetricRDMAGbps] = bps * 8 / 1e9
	}
	return out
}

// addMetrics sums src into dst by name (traffic and error counts add up
// over hosts), allocating dst on first use.
func addMetrics(dst, src map[string]float64) map[string]float64 {
	for k, v := range src {
		if dst == nil {
			dst = map[string]float64{}
		}
		dst[k] += v
	}
	return dst
}
