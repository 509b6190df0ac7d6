package bench

import (
	"io"

	"github.com/dpulab/dpulab/internal/benchhdr"
	"github.com/dpulab/dpulab/internal/wire/benchwire"
)

// The JSON-lines contract of `dpulab bench --json` (its events, their
// encoding and ParseLine) is declared in internal/wire/benchwire, which
// the step engine reads without linking the load generator; the bench
// emits these types. The latency histograms the lines carry, and the
// merges of several client hosts' lines, are internal/benchhdr's.
type (
	Header       = benchwire.Header
	Event        = benchwire.Event
	Latency      = benchwire.Latency
	Start        = benchwire.Start
	Prefill      = benchwire.Prefill
	Sample       = benchwire.Sample
	Totals       = benchwire.Totals
	TargetResult = benchwire.TargetResult
	RunResult    = benchwire.RunResult
	Summary      = benchwire.Summary
)

// Event types as they appear in the "type" field.
const (
	TypeHeader  = benchwire.TypeHeader
	TypeStart   = benchwire.TypeStart
	TypePrefill = benchwire.TypePrefill
	TypeSample  = benchwire.TypeSample
	TypeRun     = benchwire.TypeRun
	TypeSummary = benchwire.TypeSummary

	// SchemaVersion is the version of the JSON-lines contract.
	SchemaVersion = benchwire.SchemaVersion
)

// ErrUnknownType is returned (wrapped) by ParseLine for a well-formed line
// whose "type" it does not know.
var ErrUnknownType = benchwire.ErrUnknownType

// ErrNoHistogram is returned (wrapped) by the merges for a line without
// "latency_hdr_us" (benchhdr's).
var ErrNoHistogram = benchhdr.ErrNoHistogram

// StreamHeader is the header `dpulab bench --json` starts with.
func StreamHeader() *Header { return benchwire.StreamHeader() }

// ParseLine decodes one line of the stream (benchwire.ParseLine).
func ParseLine(line []byte) (Event, error) { return benchwire.ParseLine(line) }

// Encode writes one event as one line (benchwire.Encode).
func Encode(w io.Writer, ev Event) error { return benchwire.Encode(w, ev) }

// Decode reads a `dpulab bench --json` stream (benchwire.Decode).
func Decode(r io.Reader, fn func(Event) error) error { return benchwire.Decode(r, fn) }
