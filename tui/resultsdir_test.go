package tui

import (
	"testing"

	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/session/sessiontest"
)

// TestResultsDirShownBeforeFirstStep: lab_started's ResultsDir (issue 18)
// reaches the status line as one sanitised line, before any step output.
func TestResultsDirShownBeforeFirstStep(t *testing.T) {
	f := quickstartFake()
	dir := "/home/u/.local/share/dpulab/results/quickstart/20261203-101500"
	f.Script[1].Emit = append([]steps.Event{steps.LabStarted{Lab: "quickstart", ResultsDir: dir + hostileRaw},
		// The step waits here, so the line is on screen for the test.
		steps.Prompt{Step: "deploy", Type: steps.PromptConfirm, Message: "Start the servers?", Choices: []string{"yes", "no"}}}, f.Script[1].Emit...)
	app := testApp(Config{Catalog: &sessiontest.Catalog{Fakes: []*sessiontest.Fake{f}}})
	tm := start(t, app, 160, 30)
	press(tm, app.KeyMap.Enter)
	waitFor(t, tm, "What this lab does")
	press(tm, app.KeyMap.Run) // deploy, where the lab resumes
	waitFor(t, tm, "Start the servers?", "results go to "+dir)
	press(tm, app.KeyMap.ForceQuit, app.KeyMap.ForceQuit)
	finish(t, tm)
}
