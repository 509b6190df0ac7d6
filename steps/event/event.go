// Package event holds the typed events a step kind sends to the front ends
// besides its lines of output: a running bench's progress and its seconds
// (the TUI's dashboard, `dpulab run --json`, a recording's replay). Package
// steps defines the rest of the engine's events (StepStarted, Output,
// StepFinished, ...) and names these by alias (steps.Progress is
// event.Progress), so callers do not change; a kind under steps/kinds/
// imports this package, never steps.
//
// A kind sends them through an Emitter, which takes only Live events: it
// cannot send one of the engine's own (StepStarted, StepFinished, a
// Prompt), which the engine alone decides.
package event

import (
	"encoding/json"
	"time"

	"github.com/dpulab/dpulab/steps/results"
)

// Event is something the engine reports while it runs a lab. The TUI and the
// headless printer render events; they never run anything themselves. Every
// event is plain data that encodes to JSON (`dpulab run --json` prints one per
// line, with its Kind as "type"), except the reply function of a Prompt.
type Event interface {
	// Kind names the event in JSON output ("step_started", ...).
	Kind() string
}

// Live is an event a kind may send while its step runs: Progress or
// Sample.
type Live interface {
	Event
	live()
}

// Emitter is the part of a kind's environment that takes its live events
// (the engine passes them on to Options.Emit, from the kind's goroutines).
type Emitter interface {
	Emit(Live)
}

// Progress reports how far a long step is (a bench or compare run).
type Progress struct {
	Step string `json:"step"`
	// Label says what is running now ("variant tcp, 20 instances, run 2/5").
	Label     string        `json:"label"`
	Fraction  float64       `json:"fraction"` // 0..1
	Elapsed   time.Duration `json:"-"`        // "elapsed_seconds" in JSON
	Remaining time.Duration `json:"-"`        // "remaining_seconds" in JSON
	// Figures is what the running job's figures are (results.Figures).
	Figures results.Figures `json:"figures,omitzero"`
}

// MarshalJSON gives the durations in seconds, named with their unit.
func (p Progress) MarshalJSON() ([]byte, error) {
	type plain Progress
	return json.Marshal(struct {
		plain
		ElapsedSeconds   float64 `json:"elapsed_seconds"`
		RemainingSeconds float64 `json:"remaining_seconds"`
	}{plain(p), p.Elapsed.Seconds(), p.Remaining.Seconds()})
}

// Sample is one Point of a running bench, tagged with where it belongs in a
// compare (variant, sweep point, repetition).
type Sample struct {
	Step    string        `json:"step"`
	Variant string        `json:"variant,omitempty"`
	Sweep   string        `json:"sweep,omitempty"`
	Run     int           `json:"run"`
	Point   results.Point `json:"point"`
	// Figures is what the point is (results.Figures): every view labels
	// it from here.
	Figures results.Figures `json:"figures,omitzero"`
	// Clients is the same second per client host, when several hosts ran
	// the load (Point is then their merge); empty with one client host.
	Clients []HostSecond `json:"clients,omitempty"`
	// Targets is the same second per server instance, when the bench
	// measured each one; empty otherwise.
	Targets []TargetSecond `json:"targets,omitempty"`
}

// HostSecond is one client host's share of a Sample's second.
type HostSecond struct {
	Host      string  `json:"host"`
	OpsPerSec float64 `json:"ops_per_sec"`
	P99Ms     float64 `json:"p99_ms"`
	Errors    int64   `json:"errors,omitempty"`
	// BusyPct is the client host's CPU busy share (all its CPUs), when
	// read: at benchwire.ClientBoundPct or more, the client, not the
	// server, bounds what the second measured.
	BusyPct *float64 `json:"busy_pct,omitempty"`
}

// TargetSecond is one server instance's share of a Sample's second.
type TargetSecond struct {
	// Target is the instance's address as the bench dialled it, Host the
	// inventory name of its server host.
	Target    string  `json:"target"`
	Host      string  `json:"host,omitempty"`
	OpsPerSec float64 `json:"ops_per_sec"`
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
	Errors    int64   `json:"errors,omitempty"`
}

// Kind implements Event.
func (Progress) Kind() string { return "progress" }

// Kind implements Event.
func (Sample) Kind() string { return "sample" }

func (Progress) live() {}
func (Sample) live()   {}
