//go:build unix

package load

import (
	"math"
	"testing"
	"time"

	"github.com/dpulab/dpulab/steps/results"
)

// The RDMA ports' counters go from a `dpulab sample` line into the bench
// second's Point by metric name, summed over server hosts, so results.json,
// samples.csv, the compare table and the reports show them; a host without
// RDMA ports adds nothing, and a second with none has no such metric at all.
func TestSampleRDMAMetricsMerge(t *testing.T) {
	ib := []byte(`{"t":"2026-12-03T19:00:00Z","host":"srv1","cpu":{"idle":50},"net":{},"power_watts":null,` +
		`"rdma":{"mlx5_0/1":{"rx_bytes_per_sec":500000000,"tx_bytes_per_sec":750000000,"rx_packets_per_sec":1,"tx_packets_per_sec":1,` +
		`"errors":{"out_of_sequence":3,"packet_seq_err":1,"local_ack_timeout_err":0,"rnr_nak_retry_err":0}},` +
		`"mlx5_1/1":{"rx_bytes_per_sec":0,"tx_bytes_per_sec":0,"rx_packets_per_sec":0,"tx_packets_per_sec":0}}}`)
	ib2 := []byte(`{"t":"2026-12-03T19:00:00Z","host":"srv2","cpu":{"idle":50},"net":{},"power_watts":null,` +
		`"rdma":{"mlx5_0/1":{"rx_bytes_per_sec":125000000,"tx_bytes_per_sec":0,"rx_packets_per_sec":1,"tx_packets_per_sec":1,` +
		`"errors":{"out_of_sequence":2}}}}`)
	plain := []byte(`{"t":"2026-12-03T19:00:00Z","host":"tcp1","cpu":{"idle":50},"net":{"eth0":{"rx_bytes_per_sec":1,"tx_bytes_per_sec":1}},"power_watts":null}`)

	since := time.Now().Add(-time.Second)
	b := NewSampleBoard()
	for host, line := range map[string][]byte{"srv1": ib, "srv2": ib2, "tcp1": plain} {
		hs, ok := ParseHostSample(line)
		if !ok {
			t.Fatalf("%s: line not parsed", host)
		}
		b.Put(host, hs)
	}
	p := b.Merge(results.Point{Metrics: map[string]float64{results.MetricESXiCPU: 12}}, since)
	want := map[string]float64{
		results.MetricESXiCPU:            12, // kept
		results.MetricRDMAGbps:           11, // (0.5+0.75+0.125) GB/s × 8
		results.MetricRDMAPackets:        4,  // 2 + 0 on srv1, 2 on srv2
		results.MetricRDMAOutOfSequence:  5,  // 3 + 2 over hosts
		results.MetricRDMASeqNAKs:        1,  // srv1 only
		results.MetricRDMAAckTimeouts:    0,  // measured: zero
		results.MetricRDMARNRRetryErrors: 0,
	}
	if len(p.Metrics) != len(want) {
		t.Fatalf("metrics %v, want %v", p.Metrics, want)
	}
	for k, v := range want {
		if g, ok := p.Metrics[k]; !ok || math.Abs(g-v) > 1e-9 {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	for _, name := range []string{results.MetricRDMAGbps, results.MetricRDMAOutOfSequence} {
		m, ok := results.LookupMetric(name)
		if !ok || m.Sample == nil {
			t.Fatalf("metric %s not in the table", name)
		}
		if v, ok := m.Sample(&p); !ok || v != want[name] {
			t.Errorf("the table reads %s as %v, %v", name, v, ok)
		}
	}

	// Only hosts without InfiniBand: no RDMA metric, not a zero one.
	b2 := NewSampleBoard()
	hs, _ := ParseHostSample(plain)
	b2.Put("tcp1", hs)
	if p := b2.Merge(results.Point{}, since); p.Metrics != nil {
		t.Fatalf("metrics %v from a host without RDMA ports", p.Metrics)
	}
}

// TestSampleRDMAMetricsSoftRoCE: a Soft-RoCE port counts packets, not bytes
// (server/sample leaves its byte rates out): the second gets packets/s and
// rxe's trouble counters under the metrics of the same meaning, and no
// Gb/s at all rather than 0.
func TestSampleRDMAMetricsSoftRoCE(t *testing.T) {
	rxe := []byte(`{"t":"2026-12-03T19:00:00Z","host":"srv1","cpu":{"idle":50},"net":{},"power_watts":null,` +
		`"rdma":{"rxe0/1":{"rx_packets_per_sec":2500,"tx_packets_per_sec":1000,` +
		`"errors":{"out_of_seq_request":1,"rcvd_seq_err":2,"retry_rnr_exceeded_err":0,"completer_retry_err":7}}}}`)
	hs, ok := ParseHostSample(rxe)
	if !ok {
		t.Fatal("line not parsed")
	}
	b := NewSampleBoard()
	b.Put("srv1", hs)
	p := b.Merge(results.Point{}, time.Now().Add(-time.Second))
	want := map[string]float64{
		results.MetricRDMAPackets:        3500,
		results.MetricRDMAOutOfSequence:  1,
		results.MetricRDMASeqNAKs:        2,
		results.MetricRDMARNRRetryErrors: 0,
	}
	if len(p.Metrics) != len(want) {
		t.Fatalf("metrics %v, want %v (no rdma_gbps)", p.Metrics, want)
	}
	for k, v := range want {
		if g, ok := p.Metrics[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
}
