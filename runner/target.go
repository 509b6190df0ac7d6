package runner

import (
	"context"
	"io/fs"
	"time"
)

// Stream says which output stream a Line came from.
type Stream int

const (
	// Stdout is the command's standard output.
	Stdout Stream = iota
	// Stderr is the command's standard error.
	Stderr
)

func (s Stream) String() string {
	if s == Stderr {
		return "stderr"
	}
	return "stdout"
}

// Line is one line of a command's output, attributed to the host it came
// from so that output of a step fanned out to several hosts stays readable.
type Line struct {
	Host   string
	Stream Stream
	Text   string
	Time   time.Time
}

// Command is one shell command to run on a Target. Cmd is handed to
// `sh -c`; every value substituted into it must already be quoted with Quote.
type Command struct {
	// Cmd is the shell text to run.
	Cmd string
	// Sudo runs the command as root (sudo -S -p '' with the password on
	// stdin when one is needed, or passwordless sudo).
	Sudo bool
	// Timeout bounds the run; zero means no limit beyond the context.
	Timeout time.Duration
	// Stdin, when non-nil, is fed to the command's standard input.
	Stdin []byte
	// Output, when non-nil, is called for every line of output, in order
	// per stream, possibly from another goroutine.
	Output func(Line)
}

// Result is what a finished command left behind. A non-zero exit status is
// not an error of Run: it is reported in ExitCode.
type Result struct {
	ExitCode int
	Duration time.Duration
	// Tail holds the last lines of output (both streams), for error messages.
	Tail []Line
}

// ProcSpec describes a long-running process started detached (setsid, its
// own process group, output to a log file, pid recorded).
type ProcSpec struct {
	// Name labels the process in errors and state (e.g. "server-6379").
	Name string
	// Cmd is the shell text to run; values quoted with Quote.
	Cmd string
	// Sudo runs it as root.
	Sudo bool
	// LogFile receives stdout and stderr; a file under a temp dir when
	// empty. Put it under the run's working directory: that directory is
	// then the marker StopMarked finds the process by.
	LogFile string
}

// Proc is a process started with Target.Start. It is plain data so that it
// can be saved in a lab's progress and stopped by a later run.
type Proc struct {
	Host    string `json:"host"`
	Name    string `json:"name"`
	PID     int    `json:"pid"`
	LogFile string `json:"log_file"`
	Sudo    bool   `json:"sudo,omitempty"`
}

// Platform is a host's operating system and architecture, in Go's names
// (linux, arm64), as reported by `uname -sm`.
type Platform struct {
	OS   string `json:"os"`
	Arch string `json:"arch"`
}

// Target is somewhere commands run: this machine or a lab host over SSH.
// Implementations are safe for concurrent use: a step fanned out to several
// hosts, and several commands on one host, run at once.
type Target interface {
	// Name is the inventory name of the host ("local" for this machine).
	Name() string
	// Run runs a command to completion, streaming its output. The error is
	// for failures to run it (connection lost, cancelled, timed out); a
	// command that ran and failed has a non-zero Result.ExitCode.
	Run(ctx context.Context, c Command) (Result, error)
	// Start starts a detached process and returns once it has a pid. When
	// ctx ends before that, Start stops whatever it launched before
	// returning the error, so no process is left whose pid nobody has.
	// The group leader's command line names LogFile (and its .pid file),
	// so StopMarked with a directory above LogFile finds the process
	// from the instant it exists.
	Start(ctx context.Context, p ProcSpec) (Proc, error)
	// Stop ends a process started by Start, with its whole process group:
	// SIGTERM, then SIGKILL after grace.
	Stop(ctx context.Context, p Proc, grace time.Duration) error
	// Upload copies a local file to path on the target with mode, through a
	// temporary file in path's directory renamed over it (see WriteFile).
	Upload(ctx context.Context, localPath, remotePath string, mode fs.FileMode) error
	// ReadFile reads a small file on the target.
	ReadFile(ctx context.Context, path string) ([]byte, error)
	// Platform reports the target's OS and architecture.
	Platform(ctx context.Context) (Platform, error)
	// Close releases the connection, if any.
	Close() error
}
