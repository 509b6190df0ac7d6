package sessiontest

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/steps/results"
)

// Tasks scripts what a Fake answers for task steps and rendered files, by
// step index, and records what the page asked for.
type Tasks struct {
	// ShellArgv is the shell Shell hands out, started in a temporary
	// directory (nil: Shell fails, saying there is none).
	ShellArgv []string
	// Files are what Rendered answers; Solutions what Solution answers
	// (none: "not a task step").
	Files     map[int][]steps.RenderedFile
	Solutions map[int][]steps.TaskSolution
	// Checked is what CheckTask ends the step with (Done when unset); a
	// Failed check carries the step's Err and Hint.
	Checked map[int]results.Status

	// Shells and Checks record the steps a shell was opened and a check
	// run for.
	Shells, Checks []int
}

// Shell implements session.Session.
func (f *Fake) Shell(i int) (runner.Shell, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Shells = append(f.Shells, i)
	if f.ShellArgv == nil {
		return runner.Shell{}, errors.New("no shell in this test")
	}
	return runner.Shell{Argv: f.ShellArgv, Dir: os.TempDir()}, nil
}

// CheckTask implements session.Session: the step runs again, ending with
// its Checked status.
func (f *Fake) CheckTask(_ context.Context, i int) results.Status {
	f.mu.Lock()
	f.Checks = append(f.Checks, i)
	s := f.Script[i]
	f.Script[i].Info.Status = results.Running
	if st, ok := f.Checked[i]; ok {
		s.Final = st
	} else {
		s.Final = results.Done
	}
	f.mu.Unlock()
	f.send(steps.StepStarted{Step: s.Info.ID, Index: i})
	return f.finishStep(i, s)
}

// Solution implements session.Session.
func (f *Fake) Solution(i int) ([]steps.TaskSolution, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sol, ok := f.Solutions[i]
	if !ok {
		return nil, fmt.Errorf("step %d is not a task step", i+1)
	}
	return sol, nil
}

// Rendered implements session.Session.
func (f *Fake) Rendered(i int) ([]steps.RenderedFile, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.Files[i], 0, nil
}

// Calls returns the steps shells were opened and checks run for
// (race-free).
func (f *Fake) Calls() (shells, checks []int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int(nil), f.Shells...), append([]int(nil), f.Checks...)
}
