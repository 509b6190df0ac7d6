// Package benchhdr is the latency histograms `dpulab bench --json` lines
// carry ("latency_hdr_us"), and what the controller computes from them:
// MergeSamples, MergeTotals and MergeProbes merge several client hosts'
// lines of one interval, run or capacity probe, their percentiles read from
// the union of the hosts' histograms (never averaged), and Judge reads a
// probe's percentile for benchwire's verdict. The bench records into
// histograms of the shape declared here (NewHistogram) and encodes them
// with Encode.
//
// Why a package of its own, with HdrHistogram: the step engine merges the
// lines of several client hosts, and the p99 of a union is only known from
// the union of the histograms; decoding HdrHistogram's compressed V2
// encoding and merging is what github.com/HdrHistogram/hdrhistogram-go
// does (v1.4.0: pure Go, standard library only, about 3,400 lines). The wire
// types stay in internal/wire/benchwire, which links nothing but the
// standard library; this package is benchwire plus that one library, and
// is what the engine imports for merging. Neither links go-redis or the
// bench (cmd/dpulab-agent's deps_test.go).
package benchhdr
