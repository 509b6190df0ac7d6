package tui

import (
	"testing"

	"github.com/dpulab/dpulab/tui/session/sessiontest"
)

// TestLabMarksStepsThatCannotRun: inside a lab, a step this binary cannot
// run (LabInfo.CannotRunSteps) is marked in the step list, and selected
// it says why, in a few words, under its title.
func TestLabMarksStepsThatCannotRun(t *testing.T) {
	f := quickstartFake()
	f.LabInfo.CannotRunSteps = map[string]string{"bench": "transport rdma is not in this build"}
	app := testApp(Config{Catalog: &sessiontest.Catalog{Fakes: []*sessiontest.Fake{f}}})
	tm := start(t, app, 100, 30)
	press(tm, app.KeyMap.Enter)
	waitFor(t, tm, "What this lab does", "⊘  3 Benchmark")
	// The lab opens at its first step not done, step 2.
	press(tm, app.KeyMap.Next)
	waitFor(t, tm, "Step 3/4", "⊘ cannot run here: transport rdma is not in this build")
	press(tm, app.KeyMap.ForceQuit, app.KeyMap.ForceQuit)
	finish(t, tm)
}
