package benchwire

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/dpulab/dpulab/internal/termtext"
)

// The JSON-lines contract of `dpulab bench --json`.
//
// Every line on stdout is one JSON object whose "type" names the event:
//
//	{"type":"header", "stream":"bench", "schema_version":2}  first, once
//	{"type":"start", ...}    once, before anything is measured: what will run
//	{"type":"prefill", ...}  with --prefill, once the key space is loaded
//	{"type":"sample", ...}   every second of every run (totals; "target" absent)
//	{"type":"sample", "target":"host:port", ...}  per target, only with --target-samples
//	{"type":"run", ...}      after each run: the run summarised, plus per target
//	{"type":"summary", ...}  once at the end: across runs (mean, stddev, min, max)
//
// The field names are a contract read by the step engine and the TUI on the
// other side of an SSH session: add fields, never repurpose them. Durations
// and sizes carry their unit in the name (_seconds, _ns, _ms, _bytes,
// _per_sec). Schema 2 renamed what did not: "t" → "t_seconds", "seconds" →
// "duration_seconds", config "data_size" → "data_size_bytes", "requests" →
// "requests_total", "rate" → "rate_ops_per_sec"; ParseLine reads both.
// Readers skip event types they do not know, so new types may be added.

// Event types as they appear in the "type" field.
const (
	TypeHeader  = "header"
	TypeStart   = "start"
	TypeSample  = "sample"
	TypeRun     = "run"
	TypeSummary = "summary"
)

// SchemaVersion is the version of the JSON-lines contract, carried by the
// stream's first line (Header). Version 1 had no header.
const SchemaVersion = 2

// Header is the first line of a stream: which stream, which schema.
type Header struct {
	Stream        string `json:"stream"`
	SchemaVersion int    `json:"schema_version"`
}

// EventType implements Event.
func (*Header) EventType() string { return TypeHeader }

// MarshalJSON writes the event with its "type" first.
func (h Header) MarshalJSON() ([]byte, error) {
	type plain Header
	return json.Marshal(struct {
		Type string `json:"type"`
		plain
	}{TypeHeader, plain(h)})
}

// StreamHeader is the header `dpulab bench --json` starts with.
func StreamHeader() *Header { return &Header{Stream: "bench", SchemaVersion: SchemaVersion} }

// Event is one line of the stream: a *Start, *Prefill, *Sample, *RunResult or
// *Summary.
type Event interface {
	// EventType is the value of the line's "type" field.
	EventType() string
}

// Latency is a latency summary in milliseconds, read from an HDR
// histogram; P999 is the 99.9th percentile. It is the latency of every
// per-second sample, run and capacity probe of `dpulab bench --json`, and
// of results.json's points and runs: one type for all of them.
type Latency struct {
	Avg  float64 `json:"avg"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

// ClientBoundPct is the host CPU busy share, in percent, from which a run
// is marked client_bound (the load generator's host, not only the server,
// limited the figures).
const ClientBoundPct = 90.0

// PasswordEnv is the environment variable `dpulab bench` reads the password
// from when --password is not given, so that it never has to appear in argv
// (visible in ps on a shared lab host). The step engine sets it.
const PasswordEnv = "DPULAB_BENCH_PASSWORD"

// Start is printed once before the first run, so that a reader knows what is
// coming (how many runs, how long each is) before any number arrives. The
// password is never part of it.
type Start struct {
	Config Config `json:"config"`
	// Client is the client path actually used ("lean" or "go-redis"), after
	// "auto" was resolved.
	Client string `json:"client"`
	// Targets is every target as it is named in per-target results
	// ("host:port" or "unix:/path").
	Targets []string `json:"targets"`
	// Connections is the total number of connections (clients × targets).
	Connections int `json:"connections"`
	// Simulation, when set, says the targets are reached over a simulated
	// transport (the rdmasim build's rdma): the figures are not the real
	// transport's.
	Simulation string `json:"simulation,omitempty"`
	// StartLateMs, with --start-at (config.start_at_unix_ms), is how long
	// after that instant the bench began, on its host's clock: the
	// timer's wake-up, or connecting that took past the instant. The line
	// comes once connected and (with --start-at) at the instant.
	StartLateMs *float64 `json:"start_late_ms,omitempty"`
}

// Sample is one interval (normally one second) of a run.
type Sample struct {
	// Run is the 1-based run this sample belongs to.
	Run int `json:"run"`
	// T is seconds since the measured part of the run began, at the end of
	// this interval (1, 2, 3, ...; the last one may be fractional).
	T float64 `json:"t_seconds"`
	// Target is set on per-target samples and absent on totals.
	Target string `json:"target,omitempty"`
	// OpsPerSec counts replies (including error replies) per second.
	OpsPerSec float64 `json:"ops_per_sec"`
	// OpsPerSecByCmd splits OpsPerSec by command name ("set", "get").
	OpsPerSecByCmd map[string]float64 `json:"ops_per_sec_by_cmd"`
	LatencyMs      Latency            `json:"latency_ms"`
	// Errors counts error replies plus requests that got no reply (the
	// connection broke or the server stalled) in this interval.
	Errors int64 `json:"errors"`
	// ErrorsByKind splits Errors by kind: the error prefix of a server reply
	// ("ERR", "WRONGTYPE", "NOAUTH", ...) or "timeout", "io", "closed".
	ErrorsByKind    map[string]int64 `json:"errors_by_kind,omitempty"`
	BytesSentPerSec float64          `json:"bytes_sent_per_sec"`
	BytesRecvPerSec float64          `json:"bytes_recv_per_sec"`
	// LatencyHDR is the interval's latency histogram, microseconds, in
	// HdrHistogram's V2 compressed base64 encoding (internal/benchhdr): what
	// benchhdr.MergeSamples merges across client hosts. Absent when nothing was
	// measured, and in lines of benches older than the field.
	LatencyHDR string `json:"latency_hdr_us,omitempty"`
	// ClientCPUPct is the bench process's CPU over the interval, percent
	// of one core; ClientHostBusyPct its host's, percent of all CPUs
	// (server/bench/cpu.go). Totals samples only; absent when unreadable.
	ClientCPUPct      *float64 `json:"client_cpu_pct,omitempty"`
	ClientHostBusyPct *float64 `json:"client_host_busy_pct,omitempty"`
}

// Totals are the numbers of a run, or of one target of a run.
type Totals struct {
	// Seconds is the measured time (warmup and prefill excluded).
	Seconds float64 `json:"duration_seconds"`
	// Ops counts replies received, error replies included.
	Ops      int64            `json:"ops"`
	OpsByCmd map[string]int64 `json:"ops_by_cmd"`
	// OpsPerSec is Ops / Seconds.
	OpsPerSec      float64            `json:"ops_per_sec"`
	OpsPerSecByCmd map[string]float64 `json:"ops_per_sec_by_cmd"`
	LatencyMs      Latency            `json:"latency_ms"`
	// LatencyMsByCmd is the latency summary per command.
	LatencyMsByCmd map[string]Latency `json:"latency_ms_by_cmd,omitempty"`
	// LatencyMsPercentiles are the --print-percentiles, keyed by the
	// percentile as given ("50", "99.9").
	LatencyMsPercentiles map[string]float64 `json:"latency_ms_percentiles,omitempty"`
	// Errors counts error replies plus requests that got no reply.
	Errors       int64            `json:"errors"`
	ErrorsByKind map[string]int64 `json:"errors_by_kind,omitempty"`
	// Hits and Misses count GET replies that found a value or nil.
	Hits            int64   `json:"hits"`
	Misses          int64   `json:"misses"`
	BytesSent       int64   `json:"bytes_sent"`
	BytesRecv       int64   `json:"bytes_recv"`
	BytesSentPerSec float64 `json:"bytes_sent_per_sec"`
	BytesRecvPerSec float64 `json:"bytes_recv_per_sec"`
	// LatencyHDR is the latency histogram (microseconds) these totals'
	// figures were read from, encoded as Sample.LatencyHDR: what
	// MergeTotals merges across client hosts.
	LatencyHDR string `json:"latency_hdr_us,omitempty"`
}

// TargetResult is one target's share of a run.
type TargetResult struct {
	Target string `json:"target"`
	Totals
	// Err is the error that ended this target's connections early, if any.
	Err string `json:"error,omitempty"`
}

// RunResult is one whole run summarised, with the same numbers per target.
type RunResult struct {
	// Run is 1-based.
	Run int `json:"run"`
	Totals
	// Partial is true when the run ended before its duration or request
	// count (server died, Ctrl-C); the numbers cover what was measured.
	Partial bool `json:"partial,omitempty"`
	// Err states why the run ended early or failed.
	Err     string         `json:"error,omitempty"`
	Targets []TargetResult `json:"targets"`
	// ClientCPUPct and ClientHostBusyPct are the client's CPU over the
	// measured run, as in Sample. ClientBound is set when the client host
	// was at least ClientBoundPct busy: the run then measured the client
	// as much as the server.
	ClientCPUPct      *float64 `json:"client_cpu_pct,omitempty"`
	ClientHostBusyPct *float64 `json:"client_host_busy_pct,omitempty"`
	ClientBound       bool     `json:"client_bound,omitempty"`
	// Unsent counts requests that fell due under the fixed rate but were
	// never sent: only a capacity search's probes cut a run that falls
	// behind (capacity.go); other runs send every request that fell due.
	Unsent int64 `json:"unsent,omitempty"`
}

// Summary closes the stream: across all runs. OpsPerSec is the mean of the
// runs' OpsPerSec; LatencyMs comes from all runs' histograms merged (so it
// weighs every request equally); the P50/P99 spread across runs is given as
// min and max of the runs' values.
type Summary struct {
	Runs            int     `json:"runs"`
	OpsPerSec       float64 `json:"ops_per_sec"`
	OpsPerSecStddev float64 `json:"ops_per_sec_stddev"`
	OpsPerSecMin    float64 `json:"ops_per_sec_min"`
	OpsPerSecMax    float64 `json:"ops_per_sec_max"`
	// OpsPerSecByCmd is the mean across runs per command.
	OpsPerSecByCmd map[string]float64 `json:"ops_per_sec_by_cmd"`
	LatencyMs      Latency            `json:"latency_ms"`
	// LatencyMsMean is the mean of the runs' latency summaries and
	// LatencyMsStddev their standard deviation, field by field.
	LatencyMsMean   Latency          `json:"latency_ms_mean"`
	LatencyMsStddev Latency          `json:"latency_ms_stddev"`
	Ops             int64            `json:"ops"`
	Errors          int64            `json:"errors"`
	ErrorsByKind    map[string]int64 `json:"errors_by_kind,omitempty"`
	BytesSentPerSec float64          `json:"bytes_sent_per_sec"`
	BytesRecvPerSec float64          `json:"bytes_recv_per_sec"`
	// Partial is true when any run was partial.
	Partial bool `json:"partial,omitempty"`
	// Err is the first run error, if any.
	Err string `json:"error,omitempty"`
	// ClientBound is set when any run was client_bound;
	// ClientHostBusyPctMax is the busiest run's client host figure.
	ClientBound          bool     `json:"client_bound,omitempty"`
	ClientHostBusyPctMax *float64 `json:"client_host_busy_pct_max,omitempty"`
}

// EventType implementations.
func (*Start) EventType() string     { return TypeStart }
func (*Sample) EventType() string    { return TypeSample }
func (*RunResult) EventType() string { return TypeRun }
func (*Summary) EventType() string   { return TypeSummary }

// MarshalJSON writes the event with its "type" first.
func (s Start) MarshalJSON() ([]byte, error) {
	type plain Start
	return json.Marshal(struct {
		Type string `json:"type"`
		plain
	}{TypeStart, plain(s)})
}

// MarshalJSON writes the event with its "type" first.
func (s Sample) MarshalJSON() ([]byte, error) {
	type plain Sample
	return json.Marshal(struct {
		Type string `json:"type"`
		plain
	}{TypeSample, plain(s)})
}

// MarshalJSON writes the event with its "type" first.
func (r RunResult) MarshalJSON() ([]byte, error) {
	type plain RunResult
	return json.Marshal(struct {
		Type string `json:"type"`
		plain
	}{TypeRun, plain(r)})
}

// MarshalJSON writes the event with its "type" first.
func (s Summary) MarshalJSON() ([]byte, error) {
	type plain Summary
	return json.Marshal(struct {
		Type string `json:"type"`
		plain
	}{TypeSummary, plain(s)})
}

// ErrUnknownType is returned (wrapped) by ParseLine for a well-formed line
// whose "type" it does not know; Decode skips such lines.
var ErrUnknownType = errors.New("unknown event type")

// ParseLine decodes one line of the stream. Blank lines yield (nil, nil).
func ParseLine(line []byte) (Event, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, nil
	}
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return nil, fmt.Errorf("bench output: not a JSON object: %w", err)
	}
	var ev Event
	switch head.Type {
	case TypeHeader:
		ev = &Header{}
	case TypeStart:
		ev = &Start{}
	case TypeSample:
		ev = &Sample{}
	case TypeRun:
		ev = &RunResult{}
	case TypeSummary:
		ev = &Summary{}
	case TypePrefill:
		ev = &Prefill{}
	case TypeCapacityProbe:
		ev = &CapacityProbe{}
	case TypeCapacity:
		ev = &CapacityResult{}
	default:
		return nil, fmt.Errorf("bench output: %w %q", ErrUnknownType, head.Type)
	}
	if err := json.Unmarshal(line, ev); err != nil {
		return nil, fmt.Errorf("bench output: %s line: %w", head.Type, err)
	}
	if err := readLegacy(line, ev); err != nil {
		return nil, fmt.Errorf("bench output: %s line: %w", head.Type, err)
	}
	return ev, nil
}

// readLegacy fills the fields a schema-1 line (an older dpulab on a lab
// host) names without their unit. Fields already set are kept.
func readLegacy(line []byte, ev Event) error {
	switch ev := ev.(type) {
	case *Sample:
		if !bytes.Contains(line, []byte(`"t":`)) {
			return nil
		}
		var v struct {
			T float64 `json:"t"`
		}
		if err := json.Unmarshal(line, &v); err != nil {
			return err
		}
		if ev.T == 0 {
			ev.T = v.T
		}
	case *Prefill:
		var v struct {
			Seconds float64 `json:"seconds"`
		}
		if err := json.Unmarshal(line, &v); err != nil {
			return err
		}
		if ev.Seconds == 0 {
			ev.Seconds = v.Seconds
		}
	case *RunResult:
		if !bytes.Contains(line, []byte(`"seconds":`)) {
			return nil
		}
		var v struct {
			Seconds float64 `json:"seconds"`
			Targets []struct {
				Seconds float64 `json:"seconds"`
			} `json:"targets"`
		}
		if err := json.Unmarshal(line, &v); err != nil {
			return err
		}
		if ev.Seconds == 0 {
			ev.Seconds = v.Seconds
		}
		for i := range ev.Targets {
			if i < len(v.Targets) && ev.Targets[i].Seconds == 0 {
				ev.Targets[i].Seconds = v.Targets[i].Seconds
			}
		}
	}
	return nil
}

// Encode writes one event as one line.
func Encode(w io.Writer, ev Event) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encode %s: %w", ev.EventType(), err)
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// Decode reads the stream of a `dpulab bench --json` run and calls fn for
// every event in order, until EOF (nil) or the first error (fn's error is
// returned as is; a malformed line is an error naming its line number).
// Blank lines and lines of unknown types are skipped, so that a newer bench
// binary on a lab host can add events without breaking an older reader.
func Decode(r io.Reader, fn func(Event) error) error {
	sc := bufio.NewScanner(r)
	// A run line with 80 targets' results is a few tens of KB; allow plenty.
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	n := 0
	for sc.Scan() {
		n++
		ev, err := ParseLine(sc.Bytes())
		if errors.Is(err, ErrUnknownType) || (err == nil && ev == nil) {
			continue
		}
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		if err := fn(ev); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("bench output after line %d: %w", n, err)
	}
	return nil
}

// Prefill reports the key space loaded before the first run. (An event type
// added after the first contract; readers that do not know it skip it.)
type Prefill struct {
	Keys    int64   `json:"keys"`
	Seconds float64 `json:"duration_seconds"`
}

// TypePrefill is Prefill's "type".
const TypePrefill = "prefill"

// EventType implements Event.
func (*Prefill) EventType() string { return TypePrefill }

// MarshalJSON writes the event with its "type" first.
func (p Prefill) MarshalJSON() ([]byte, error) {
	type plain Prefill
	return json.Marshal(struct {
		Type string `json:"type"`
		plain
	}{TypePrefill, plain(p)})
}

// KindsText writes error counts by kind, most first ("WRONGTYPE ×3, ERR ×1").
func KindsText(m map[string]int64) string {
	var parts []string
	for _, k := range SortedKinds(m) {
		// The kind is the server's own error code: outside text.
		parts = append(parts, fmt.Sprintf("%s ×%d", termtext.Line(k), m[k]))
	}
	return strings.Join(parts, ", ")
}

// SortedKinds lists error kinds by count, most first, for display.
func SortedKinds(m map[string]int64) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		if m[ks[i]] != m[ks[j]] {
			return m[ks[i]] > m[ks[j]]
		}
		return ks[i] < ks[j]
	})
	return ks
}
