package main

import (
	"io"

	"github.com/dpulab/dpulab/internal/agentcmd"
)

// Every JSON-lines stream dpulab writes starts with a header line naming
// the stream and its schema version, and every line carries "type"
// (FORMATS.md). The bench stream's header is server/bench's (StreamHeader),
// the sample stream's internal/agentcmd's.
const (
	streamRun  = "run"
	streamLabs = "labs"

	// runSchemaVersion is the version of the engine's event lines (steps'
	// EventJSON). 2: durations in seconds named with their unit
	// ("duration_seconds", "elapsed_seconds", "remaining_seconds", a
	// point's "t_seconds"); 1 had nanoseconds under "duration", "elapsed",
	// "remaining" and "t".
	runSchemaVersion = 2
	// labsSchemaVersion 2: JSON lines (1 was one indented array).
	labsSchemaVersion = 2
)

// header is the first line of a stream.
type header = agentcmd.Header

// writeHeader writes a stream's header line, in the agent's one format.
func writeHeader(w io.Writer, stream string, version int) {
	agentcmd.WriteHeader(w, stream, version)
}
