package tui

import (
	"testing"

	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/session/sessiontest"
)

// TestRehearsalOnStatusLine: a run the engine says is a rehearsal shows
// so on the lab page's status line, first, with the reason, whatever
// else the line says (issue 14).
func TestRehearsalOnStatusLine(t *testing.T) {
	f := quickstartFake()
	why := "asked for with --rehearse: the hardware checks are skipped"
	f.Script[1].Emit = append([]steps.Event{steps.LabStarted{Lab: "quickstart", Rehearsal: why + hostileRaw},
		steps.Prompt{Step: "deploy", Type: steps.PromptConfirm, Message: "Start the servers?", Choices: []string{"yes", "no"}}}, f.Script[1].Emit...)
	app := testApp(Config{Catalog: &sessiontest.Catalog{Fakes: []*sessiontest.Fake{f}}})
	tm := start(t, app, 160, 30)
	press(tm, app.KeyMap.Enter)
	waitFor(t, tm, "What this lab does")
	press(tm, app.KeyMap.Run)
	waitFor(t, tm, "Start the servers?", "REHEARSAL: no DPU in this run ("+why)
	press(tm, app.KeyMap.ForceQuit, app.KeyMap.ForceQuit)
	finish(t, tm)
}
