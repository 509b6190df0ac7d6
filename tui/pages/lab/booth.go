package lab

import (
	"fmt"
	"strings"

	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/session"
)

// What booth mode (package booth) needs of the page beyond its driver
// messages (driver.go): a frame for booth mode's own screens, and no key
// hints on a screen nobody types at.

// Frame draws body, a screen of booth mode's own (its headline, its
// cycle of views), where the page draws its views: under the page's
// dialogs and above its status line, which carries booth mode's banner.
func (m *Model) Frame(body string) string {
	status := m.statusLines()
	h := m.Height - len(status)
	body = common.Fit(body, m.Width, h)
	if ov := m.overlay(); ov != "" {
		body = common.Overlay(body, ov, m.Width, h)
	}
	return body + "\n" + strings.Join(status, "\n")
}

// A booth's visitor reads the screen, never types at it: what a lab says
// to the trainee at the keyboard (a task step's "this step is yours", the
// user a step must run as, where the results folder is) is not for them.

// runAs are the notes a title carries for the person who runs the lab
// (the quickstart's "(as root)"): booth mode is started by its staff,
// with the rights its steps need.
var runAs = []string{" (as root)", " (root)", " (with sudo)"}

// boothTitles is ss with titles as a booth shows them: without the notes
// that tell a trainee which user a step needs.
func boothTitles(ss []steps.StepInfo) []steps.StepInfo {
	out := append([]steps.StepInfo(nil), ss...)
	for i := range out {
		for _, n := range runAs {
			out[i].Title = strings.ReplaceAll(out[i].Title, n, "")
		}
	}
	return out
}

// boothTaskDoc stands in for a task step's text at the booth: the lab's
// is written to the trainee who opens a shell; at the booth dpulab does
// the work itself ("do it for me") and checks it as the lab would.
func boothTaskDoc(title string) string {
	return fmt.Sprintf("# %s\n\nIn the lab, a trainee does this step by hand, in a shell on the host, and the lab checks the work. "+
		"Here dpulab does it: the commands below, then the same check.", title)
}

// shownSteps is ss as the step list shows them: a booth's titles without
// the trainee's notes.
func shownSteps(ss []steps.StepInfo, unattended bool) []steps.StepInfo {
	if unattended {
		return boothTitles(ss)
	}
	return ss
}

// cannotRun is, per step index, why this binary or machine cannot run the
// step (LabInfo.CannotRunSteps, by step id).
func cannotRun(info session.LabInfo, ss []steps.StepInfo) map[int]string {
	out := map[int]string{}
	for i, s := range ss {
		if why := info.CannotRunSteps[s.ID]; why != "" {
			out[i] = why
		}
	}
	return out
}
