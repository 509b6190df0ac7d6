package agentcmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit statuses, the same for every subcommand of both programs (and in
// FORMATS.md).
const (
	ExitOK     = 0
	ExitFailed = 1 // a step, the bench or a check failed
	ExitUsage  = 2 // a bad flag, argument, --set, lab or inventory
)

// ExitError carries a process exit status through cobra without printing
// anything more: the command has already said what went wrong.
type ExitError struct{ Code int }

func (e ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// UsageError is a mistake in how the program was called: exit status 2.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// UsageArgs makes a positional-argument check's error a usage error.
func UsageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return UsageError{err}
		}
		return nil
	}
}

// ExitStatus maps what Execute returned to the process's exit status and
// the message to print (empty: the command has said it already).
func ExitStatus(err error) (int, string) {
	if err == nil {
		return ExitOK, ""
	}
	var ee ExitError
	if errors.As(err, &ee) {
		return ee.Code, ""
	}
	var ue UsageError
	if errors.As(err, &ue) {
		return ExitUsage, err.Error() + " (see --help)"
	}
	return ExitFailed, err.Error()
}

// ExitCodeSignal is the conventional exit status of a process ended by sig.
func ExitCodeSignal(sig syscall.Signal) int { return 128 + int(sig) }

// InterruptSignals are the signals that end a run or a bench; SIGHUP only
// when it was not ignored at start (nohup).
func InterruptSignals() []os.Signal {
	sigs := []os.Signal{syscall.SIGINT, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	return sigs
}

// Every JSON-lines stream starts with a header line naming the stream and
// its schema version, and every line carries "type" (FORMATS.md). The
// bench stream's header is server/bench's (StreamHeader).
const (
	StreamSample = "sample"
	// SampleSchemaVersion 2: lines carry "type" (1 had none).
	SampleSchemaVersion = 2
)

// Header is the first line of a stream.
type Header struct {
	Type          string `json:"type"`
	Stream        string `json:"stream"`
	SchemaVersion int    `json:"schema_version"`
}

// WriteHeader writes a stream's header line. A write error surfaces with
// the stream's next line.
func WriteHeader(w io.Writer, stream string, version int) {
	b, _ := json.Marshal(Header{Type: "header", Stream: stream, SchemaVersion: version})
	w.Write(append(b, '\n'))
}

// Flags makes every command's bad flag or argument a usage error (exit
// status 2), as both programs' roots do.
func Flags(root *cobra.Command) {
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return UsageError{err} })
	for _, c := range append(root.Commands(), root) {
		if c.Args != nil {
			c.Args = UsageArgs(c.Args)
		}
	}
}
