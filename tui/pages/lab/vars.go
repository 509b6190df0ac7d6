package lab

import (
	"fmt"
	"slices"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/steps/results"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/components/varform"
	"github.com/dpulab/dpulab/tui/pages/lab/runctl"
	"github.com/dpulab/dpulab/tui/session"
	"github.com/dpulab/dpulab/tui/styles"
)

// The variables form opens two ways: before the first step whose kind asks
// for the variables (enter there runs it), and from any step with its key
// (enter applies the values to the steps not yet run). Either way, what a
// change affects is found exactly: every step's plan (Session.Plan) before
// and after the new values; a step whose commands differ is affected. A
// step already done that is affected must run again, and the form says so
// and asks before the values stay.

// varsSession is what the variables form needs of the session.
type varsSession interface {
	Variables() []session.Variable
	ValidateVar(name, value string) error
	SetVars(vars map[string]string) error
	Plan(i int) ([]steps.PlannedCommand, error)
}

// varsFlow is the variables form and what its answers do to the session's
// values: it opens the form, sets the values submitted, finds what they
// change (impactOf) and, when done work must run again, asks first and
// takes the values back if the person goes back to the fields. It tells
// the page what follows (varsResult); the run control's part is the
// page's.
type varsFlow struct {
	common.Common
	sess varsSession
	// form is the open form (nil: closed).
	form *varform.Model
	// old holds the values before the form and pending what they change
	// while the form asks to confirm.
	old     map[string]string
	pending impact
}

// varsResult is what the page does once the form acted: fire events to
// the run control, in order, show err, and, when applied, settle the
// new values (their impact).
type varsResult struct {
	events  []runctl.Event
	err     error
	applied bool
	impact  impact
}

func newVarsFlow(c common.Common, sess varsSession) *varsFlow {
	return &varsFlow{Common: c, sess: sess}
}

// Form is the open form, nil when closed.
func (v *varsFlow) Form() *varform.Model { return v.form }

// Close closes the form as it is (a stop: the values stay as set).
func (v *varsFlow) Close() { v.form = nil }

// Open opens the variables form from step i of ss; run says that
// submitting runs step i. (The run control decided it may open: the lab
// has variables and no step runs.)
func (v *varsFlow) Open(ss []steps.StepInfo, i int, run bool) tea.Cmd {
	title := "Variables"
	if i >= 0 && i < len(ss) {
		title += " (at step " + fmt.Sprint(i+1) + ": " + ss[i].Title + ")"
	}
	if run {
		title = "Variables for " + ss[i].Title
	}
	v.form = varform.New(v.Common, title, v.sess.Variables(), v.sess.ValidateVar)
	if !run {
		v.form.SetSubmit("apply")
	}
	return v.form.Init()
}

// currentVars are the session's values now, by name.
func currentVars(sess varsSession) map[string]string {
	out := map[string]string{}
	for _, v := range sess.Variables() {
		out[v.Name] = v.Default
	}
	return out
}

// planAll plans every step with the session's values now; a step that
// cannot be planned keeps its error, so a change that fixes or breaks
// planning counts as a change.
func planAll(sess varsSession, n int) []string {
	out := make([]string, n)
	for i := range out {
		cmds, err := sess.Plan(i)
		if err != nil {
			out[i] = "error: " + err.Error()
			continue
		}
		var b strings.Builder
		for _, c := range cmds {
			fmt.Fprintf(&b, "%s\x00%v\x00%s\n", c.Host, c.Sudo, c.Cmd)
		}
		out[i] = b.String()
	}
	return out
}

// impact is what changing the values did to the steps' plans: the steps
// already done that must run again and those not yet run whose commands
// changed.
type impact struct {
	redo, changed []int
}

func impactOf(before, after []string, ss []steps.StepInfo) impact {
	var im impact
	for i := range min(len(before), len(after)) {
		if before[i] == after[i] {
			continue
		}
		if i < len(ss) && ss[i].Status == results.Done {
			im.redo = append(im.redo, i)
		} else {
			im.changed = append(im.changed, i)
		}
	}
	return im
}

// notes words an impact for the form and the status line.
func notes(st *styles.Styles, ss []steps.StepInfo, im impact) []string {
	title := func(is []int) string {
		var ts []string
		for _, i := range is {
			ts = append(ts, fmt.Sprintf("step %d %s", i+1, ss[i].Title))
		}
		return strings.Join(ts, ", ")
	}
	var out []string
	if len(im.redo) > 0 {
		// What the person must know first leads: the work redone.
		out = append(out, st.Countdown.Render(fmt.Sprintf("%s will run again: done, but its commands change.", title(im.redo))))
	}
	if len(im.changed) > 0 {
		out = append(out, "New commands for the steps not yet run: "+title(im.changed)+".")
	}
	if len(out) == 0 {
		out = append(out, "No step's commands change.")
	}
	return out
}

// Submitted sets the form's values and finds what they change in ss; a
// change that redoes finished work waits for the person's confirmation
// (Confirmed, Back).
func (v *varsFlow) Submitted(msg varform.SubmittedMsg, ss []steps.StepInfo) varsResult {
	v.old = currentVars(v.sess)
	before := planAll(v.sess, len(ss))
	if err := v.sess.SetVars(msg.Vars); err != nil {
		v.form = nil
		return varsResult{events: []runctl.Event{{Kind: runctl.VarsFailed}}, err: fmt.Errorf("variables: %w", err)}
	}
	im := impactOf(before, planAll(v.sess, len(ss)), ss)
	if len(im.redo) > 0 && v.form != nil {
		v.pending = im
		v.form.Confirm(notes(v.Styles, ss, im))
		return varsResult{}
	}
	return v.applied(im)
}

// Confirmed keeps the values the form asked about.
func (v *varsFlow) Confirmed() varsResult { return v.applied(v.pending) }

func (v *varsFlow) applied(im impact) varsResult {
	v.form, v.pending = nil, impact{}
	return varsResult{applied: true, impact: im}
}

// Back takes the values back: the person wants to edit them again.
func (v *varsFlow) Back() varsResult {
	v.pending = impact{}
	if err := v.sess.SetVars(v.old); err != nil {
		v.form = nil
		return varsResult{events: []runctl.Event{{Kind: runctl.VarsFailed}}, err: fmt.Errorf("variables: restoring the previous values: %w", err)}
	}
	return varsResult{}
}

// Cancelled closes the form; the values are the ones before it.
func (v *varsFlow) Cancelled() varsResult {
	var r varsResult
	if v.form != nil && v.form.Confirming() {
		// Not reached through the form (esc there goes back to the
		// fields), but an abort must not leave trial values behind.
		r = v.Back()
	}
	v.form = nil
	r.events = append(r.events, runctl.Event{Kind: runctl.VarsCancelled})
	return r
}

// appliedWords is the status line around settling new values of impact
// im: before is said as the run control hears of them, after (when not
// "") once it did; relayout says the commands pane must be drawn again
// (no step starts nor is selected that would draw it). runs is the run
// control's VarsRuns: the form was opened to run its step.
func appliedWords(st *styles.Styles, ss []steps.StepInfo, im impact, runs bool) (before, after string, redo int, relayout bool) {
	before = strings.Join(notes(st, ss, im), " ")
	redo = -1
	if len(im.redo) > 0 {
		redo = slices.Min(im.redo)
	}
	switch {
	case redo >= 0:
		after = fmt.Sprintf("new values set · step %d runs again: enter runs it", redo+1)
	case runs:
	case len(im.changed) == 0:
		after, relayout = "new values set · no step's commands change", true
	default:
		after, relayout = "new values set · "+notes(st, ss, im)[0], true
	}
	return before, after, redo, relayout
}
