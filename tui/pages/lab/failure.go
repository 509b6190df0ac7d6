package lab

import (
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/steps/results"
)

// failureOf is why step i failed: this session's StepFinished, else what
// the saved progress says of a step that failed in an earlier session.
func (m *Model) failureOf(i int) (steps.StepFinished, bool) {
	if f, ok := m.failures[i]; ok {
		return f, true
	}
	// Only a step that had failed before this session opened: one that
	// failed here has its StepFinished (on its way through the pump when
	// RunStep's return value comes first).
	if !m.savedFailed[i] || i >= len(m.list.Steps()) || m.list.Status(i) != results.Failed {
		return steps.StepFinished{}, false
	}
	return savedFailure(i, m.list.Steps()[i]), true
}

// savedFailure is a failure from saved progress: the error, host,
// command, hint and last lines the session reports (StepInfo.Failure), or,
// from progress saved before they were kept, only that it failed.
func savedFailure(i int, s steps.StepInfo) steps.StepFinished {
	f := steps.StepFinished{Step: s.ID, Index: i, Status: results.Failed}
	if r := s.Failure; r != nil {
		f.Err, f.Host, f.Cmd, f.Hint, f.Tail = r.Err, r.Host, r.Cmd, r.Hint, r.Tail
		return f
	}
	f.Err = "in an earlier session"
	f.Hint = "That session saved no reason: r runs the step again and shows why if it fails."
	return f
}

// earlier reports whether f is a failure from an earlier session.
func (m *Model) earlier(f steps.StepFinished) bool {
	_, here := m.failures[f.Index]
	return !here && m.savedFailed[f.Index]
}
