package results

// Status is the state of a step (or of a whole run).
type Status int

const (
	// Pending has not run yet.
	Pending Status = iota
	// Running is in flight.
	Running
	// Done finished successfully.
	Done
	// Failed finished with an error.
	Failed
	// Skipped was skipped by the person, by skip_if, or by --only/--from.
	Skipped
	// Interrupted was stopped mid-way by the person or a signal (Ctrl-C,
	// SIGTERM, quitting the TUI): not a failure of the step, and run again
	// on resume.
	Interrupted
)

var statusNames = [...]string{"pending", "running", "done", "failed", "skipped", "interrupted"}

func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "unknown"
}

// MarshalText makes a Status read as its name in JSON and state files.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a Status name.
func (s *Status) UnmarshalText(b []byte) error {
	for i, n := range statusNames {
		if n == string(b) {
			*s = Status(i)
			return nil
		}
	}
	*s = Pending
	return nil
}
