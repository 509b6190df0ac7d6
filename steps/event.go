package steps

import (
	"encoding/json"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/event"
	stepkind "github.com/dpulab/dpulab/steps/kind"
)

// Event is something the engine reports while it runs a lab. The TUI and the
// headless printer render events; they never run anything themselves. Every
// event is plain data that encodes to JSON (`dpulab run --json` prints one per
// line, with its Kind as "type"), except the reply function of a Prompt.
type Event = event.Event

// The events a kind sends while it runs (a bench's progress and seconds)
// are package steps/event's, which a kind imports instead of steps; here
// they keep their names.
type (
	Progress     = event.Progress
	Sample       = event.Sample
	HostSecond   = event.HostSecond
	TargetSecond = event.TargetSecond
)

// StepInfo describes a step of the lab as the engine will run it.
type StepInfo struct {
	ID     string         `json:"id"`
	Title  string         `json:"title"`
	Kind   string         `json:"kind"`
	Status results.Status `json:"status"`
	// Failure is why the step failed, when it did: in this process, or
	// in the run whose progress was saved.
	Failure *Failure `json:"failure,omitempty"`
}

// Failure is a failed step's reason, as StepFinished gave it.
type Failure struct {
	Err  string   `json:"error"`
	Host string   `json:"host,omitempty"`
	Cmd  string   `json:"command,omitempty"`
	Hint string   `json:"hint,omitempty"`
	Tail []string `json:"tail,omitempty"`
	// Earlier says the failure is an earlier run's, read from saved
	// progress.
	Earlier bool `json:"earlier_run,omitempty"`
}

// PlannedCommand is a command exactly as it will run: the shell text with
// every value already quoted, the host, and whether it runs under sudo.
type PlannedCommand = stepkind.PlannedCommand

// LabStarted opens a run. Resume is the index of the first step to run (more
// than zero when saved progress is resumed).
type LabStarted struct {
	Lab    string     `json:"lab"`
	Title  string     `json:"title"`
	RunID  string     `json:"run_id"`
	Steps  []StepInfo `json:"steps"`
	Resume int        `json:"resume"`
	DryRun bool       `json:"dry_run,omitempty"`
	// ResultsDir is where the run's results will be written (empty in a
	// dry run), said before the first step.
	ResultsDir string `json:"results_dir,omitempty"`
	// Rehearsal, when set, says why this run is a rehearsal: no figure of
	// it measures the hardware the lab is about.
	Rehearsal string `json:"rehearsal,omitempty"`
	// SoftwareRDMA names the software RDMA devices an earlier part of
	// this run (resumed) went through; SoftwareRDMAFound says it when
	// found later.
	SoftwareRDMA string `json:"software_rdma,omitempty"`
}

// SoftwareRDMAFound says the RDMA benches of this run go through software
// RDMA devices (Soft-RoCE, soft-iWARP), found before the first one
// (softrdma.go): from now on every figure of the run is labelled
// results.SoftwareRDMALabel(Devices). Sent again when more devices are
// found (another host), with all of them.
type SoftwareRDMAFound struct {
	Step string `json:"step"`
	// Devices is results.Results.SoftwareRDMA: "rxe0 on server, rxe1 on
	// client".
	Devices string `json:"devices"`
}

// StepStarted says a step began; Commands are what it will run (empty for
// kinds that run no shell commands of the lab's own).
type StepStarted struct {
	Step     string           `json:"step"`
	Index    int              `json:"index"`
	Commands []PlannedCommand `json:"commands,omitempty"`
}

// Output is one line of a command's output, attributed to its host.
type Output struct {
	Step string      `json:"step"`
	Line runner.Line `json:"line"`
}

// StepFinished closes a step. Err is the error's text (empty when done);
// Hint is the lab's advice for a failure.
type StepFinished struct {
	Step   string         `json:"step"`
	Index  int            `json:"index"`
	Status results.Status `json:"status"`
	Err    string         `json:"error,omitempty"`
	Hint   string         `json:"hint,omitempty"`
	Host   string         `json:"host,omitempty"`
	// Cmd is the command that failed, when one did.
	Cmd      string        `json:"command,omitempty"`
	Tail     []string      `json:"tail,omitempty"`
	Duration time.Duration `json:"-"` // "duration_seconds" in JSON
}

// MarshalJSON gives the duration in seconds, named with its unit.
func (f StepFinished) MarshalJSON() ([]byte, error) {
	type plain StepFinished
	return json.Marshal(struct {
		plain
		DurationSeconds float64 `json:"duration_seconds"`
	}{plain(f), f.Duration.Seconds()})
}

// PromptKind says what a Prompt asks for.
type PromptKind int

const (
	// PromptHostKey asks whether to trust an unknown host key.
	PromptHostKey PromptKind = iota
	// PromptSecret asks for a password or passphrase (masked input).
	PromptSecret
	// PromptConfirm asks to go ahead with a step marked confirm or sudo.
	PromptConfirm
)

// Answer is the reply to a Prompt.
type Answer struct {
	// Choice is one of the prompt's Choices (host key: "once", "save",
	// "refuse"; confirm: "yes", "no").
	Choice string
	// Secret is the typed password for PromptSecret.
	Secret string
	// NoTerminal is set when no one could be asked (headless, no
	// terminal): the engine then says what to do instead (Prompt.Fix).
	NoTerminal bool
}

// Prompt asks the person something; the engine waits until Reply is called
// (exactly once) or its context ends. Secrets travel only through Reply.
type Prompt struct {
	Step    string     `json:"step"`
	Type    PromptKind `json:"prompt"`
	Host    string     `json:"host,omitempty"`
	Message string     `json:"message"`
	// KeyType and Fingerprint (SHA256:...) describe an unknown host key.
	KeyType     string   `json:"key_type,omitempty"`
	Fingerprint string   `json:"fingerprint,omitempty"`
	Choices     []string `json:"choices,omitempty"`
	// Fix, when set, is what to do instead when there is no one to ask
	// (headless without a terminal), e.g. the variable to export.
	Fix string `json:"fix,omitempty"`
	// Reply answers the prompt.
	Reply func(Answer) `json:"-"`
}

// LabFinished closes a run; ResultsDir is where results were written.
type LabFinished struct {
	Lab    string         `json:"lab"`
	Status results.Status `json:"status"`
	// Run is how the run ended (complete, failed, interrupted, ...), as
	// results.json says.
	Run        results.RunStatus `json:"run_status,omitempty"`
	Err        string            `json:"error,omitempty"`
	ResultsDir string            `json:"results_dir,omitempty"`
	Duration   time.Duration     `json:"-"` // "duration_seconds" in JSON
	// Rehearsal repeats LabStarted's: the summary says it again.
	Rehearsal string `json:"rehearsal,omitempty"`
	// SoftwareRDMA is results.Results.SoftwareRDMA: the summary says it.
	SoftwareRDMA string `json:"software_rdma,omitempty"`
	// Variants are each variant's headline figure, labelled by what it
	// is (results.VariantSummaries): the summary's last lines.
	Variants []results.VariantSummary `json:"variants,omitempty"`
	// Leftovers are the working directories cleanup could not remove
	// (Engine.Leftovers): host, path, and how to remove each by hand.
	Leftovers []Leftover `json:"leftovers,omitempty"`
}

// MarshalJSON gives the duration in seconds, named with its unit.
func (f LabFinished) MarshalJSON() ([]byte, error) {
	type plain LabFinished
	return json.Marshal(struct {
		plain
		DurationSeconds float64 `json:"duration_seconds"`
	}{plain(f), f.Duration.Seconds()})
}

// Kind implementations.
func (LabStarted) Kind() string   { return "lab_started" }
func (StepStarted) Kind() string  { return "step_started" }
func (Output) Kind() string       { return "output" }
func (StepFinished) Kind() string { return "step_finished" }
func (Prompt) Kind() string       { return "prompt" }
func (LabFinished) Kind() string  { return "lab_finished" }

// Kind implements Event.
func (SoftwareRDMAFound) Kind() string { return "software_rdma" }

// lineJSON is runner.Line as it appears in JSON output: lower-case keys and
// the stream by name.
type lineJSON struct {
	Host   string    `json:"host"`
	Stream string    `json:"stream"`
	Text   string    `json:"text"`
	Time   time.Time `json:"time"`
}

// MarshalJSON writes the line with lower-case keys ("host", "stream":
// "stdout"|"stderr", "text", "time"), like every other event field.
func (o Output) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Step string   `json:"step"`
		Line lineJSON `json:"line"`
	}{o.Step, lineJSON{o.Line.Host, o.Line.Stream.String(), o.Line.Text, o.Line.Time}})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (o *Output) UnmarshalJSON(b []byte) error {
	var v struct {
		Step string   `json:"step"`
		Line lineJSON `json:"line"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	o.Step = v.Step
	o.Line = runner.Line{Host: v.Line.Host, Text: v.Line.Text, Time: v.Line.Time}
	if v.Line.Stream == "stderr" {
		o.Line.Stream = runner.Stderr
	}
	return nil
}
