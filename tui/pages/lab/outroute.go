package lab

import "github.com/dpulab/dpulab/steps"

// outRoute says which step's output the output pane shows and which step
// a line of output belongs to. The pane shows the selected step's output,
// but when a step ends and the selection moves on by itself, the ended
// step is held: the pane keeps showing how it ended until the next step
// has output of its own or the person moves the selection (Release).
type outRoute struct {
	// hold is the step held (-1: none).
	hold int
}

func newOutRoute() outRoute { return outRoute{hold: -1} }

// Hold holds step i (-1: none).
func (r *outRoute) Hold(i int) { r.hold = i }

// Release holds no step: the person moved, or a step starts.
func (r *outRoute) Release() { r.hold = -1 }

// stepLines is the output pane's lines of a step.
type stepLines interface{ StepLines(i int) []string }

// Shown is the step whose output the pane shows with step sel selected.
func (r outRoute) Shown(sel int, out stepLines) int {
	if r.hold >= 0 && len(out.StepLines(sel)) == 0 && len(out.StepLines(r.hold)) > 0 {
		return r.hold
	}
	return sel
}

// Owner is the step a line of output naming step id belongs to: the step
// of ss with that id; for a line naming no step of the list (the engine
// names every step; a note of its own may not), the running step (-1:
// none), else the one that just ended, its events still coming, else the
// step shown.
func (r outRoute) Owner(id string, ss []steps.StepInfo, running, shown int) int {
	for i, s := range ss {
		if s.ID == id {
			return i
		}
	}
	if running >= 0 {
		return running
	}
	if r.hold >= 0 {
		return r.hold
	}
	return shown
}
