package steps

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/dpulab/dpulab/steps/results"
)

// How a run ends, and how a resumed run keeps its attempts apart.
//
// A run's status in results.json is one of complete, failed, interrupted,
// incomplete, running (written mid-run) or killed. Whatever stops a run
// says what it was through the context it cancels (Interruption, read with
// context.Cause): a headless run's signal handler, the TUI's quit. A run
// stopped between steps is interrupted too when something stopped it
// (Engine.Leave), and incomplete only when --only or --from ran part of the
// lab. A file still saying "running" names its writer (pid and host):
// readers call it killed when that process is gone (results.State), and
// the next run of the lab writes "killed" into it (markKilled) or, when it
// resumes that run, records it as a killed attempt (newAttempt).
//
// A resumed run keeps its results folder; each resume is a new attempt.
// The earlier attempts are listed in results.json (attempts) with how each
// ended, and every bench says which attempt measured it, so the views
// label figures an earlier attempt measured (results.EarlierAttempt). A
// step run again replaces its bench whole with the new attempt's figures.

// Interruption is the cause a context is cancelled with when something
// stops a run: By says what, as a person reads it ("SIGTERM", "q in the
// TUI"). It ends up in results.json's interrupted_by.
type Interruption struct{ By string }

func (i Interruption) Error() string { return "interrupted by " + i.By }

// interruptedBy is what stopped ctx, when it was cancelled with an
// Interruption.
func interruptedBy(ctx context.Context) string {
	var in Interruption
	if errors.As(context.Cause(ctx), &in) {
		return in.By
	}
	return ""
}

// newAttempt starts a new attempt in the results r of a run being resumed:
// the attempt that wrote r is added to r.Attempts with how it ended (a file
// still saying "running" was killed: this process holds the lab's lock, so
// its writer is gone), and benches without an attempt number are the
// first attempt's.
func newAttempt(r *results.Results, now time.Time) {
	if r.Status == "" {
		return
	}
	a := results.Attempt{Started: r.Started, Finished: r.Finished, Status: r.Status, FailedStep: r.FailedStep, Error: r.Error, InterruptedBy: r.InterruptedBy}
	if !r.AttemptStarted.IsZero() {
		a.Started = r.AttemptStarted
	}
	if a.Status == results.RunRunning {
		a.Status = results.RunKilled
	}
	for i := range r.Benches {
		if r.Benches[i].Attempt == 0 {
			r.Benches[i].Attempt = r.Attempt()
		}
	}
	r.Attempts = append(r.Attempts, a)
	r.AttemptStarted = now
	r.Status, r.FailedStep, r.Error, r.InterruptedBy = results.RunRunning, "", "", ""
	r.WriterPID, r.WriterHost = 0, ""
}

// markKilled writes "killed" into the results an earlier run of the lab
// left saying "running" in dir (not the new run's folder, cur), and
// renders its reports again: this process holds the lab's lock, so the
// run that wrote it has ended without recording how. A run of this very
// process (the booth's earlier loop) is left alone. Best effort: a folder
// that cannot be read or written stays as it was.
func markKilled(dir, cur string) {
	if dir == "" || dir == cur {
		return
	}
	r, err := results.LoadResults(dir)
	if err != nil || r.Status != results.RunRunning || r.WriterPID == os.Getpid() {
		return
	}
	r.Status = results.RunKilled
	r.WriterPID, r.WriterHost = 0, ""
	_ = results.WriteResults(dir, r)
}
