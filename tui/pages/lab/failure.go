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

// savedFailure is a failure from saved progress. The session's StepInfo
// carries only the status today; when it carries the error, host, command
// and hint (issue 15), they go here.
func savedFailure(i int, s steps.StepInfo) steps.StepFinished {
	return steps.StepFinished{
		Step:   s.ID,
		Index:  i,
		Status: results.Failed,
		Err:    "in an earlier session",
		Hint:   "That session saved no reason: r runs the step again and shows why if it fails.",
	}
}
