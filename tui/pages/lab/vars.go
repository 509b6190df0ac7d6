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

// openVars opens the variables form from step i; run says that submitting
// runs step i. (The run control decided it may open: the lab has
// variables and no step runs.)
func (m *Model) openVars(i int, run bool) tea.Cmd {
	title := "Variables"
	if i >= 0 && i < len(m.list.Steps()) {
		title += " (at step " + fmt.Sprint(i+1) + ": " + m.list.Steps()[i].Title + ")"
	}
	if run {
		title = "Variables for " + m.list.Steps()[i].Title
	}
	m.form = varform.New(m.Common, title, m.sess.Variables(), m.sess.ValidateVar)
	if !run {
		m.form.SetSubmit("apply")
	}
	return m.form.Init()
}

// currentVars are the session's values now, by name.
func currentVars(sess session.Session) map[string]string {
	out := map[string]string{}
	for _, v := range sess.Variables() {
		out[v.Name] = v.Default
	}
	return out
}

// planAll plans every step with the session's values now; a step that
// cannot be planned keeps its error, so a change that fixes or breaks
// planning counts as a change.
func planAll(sess session.Session, n int) []string {
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

// formSubmitted applies the form's values and finds what they change; a
// change that redoes finished work waits for the person's confirmation.
func (m *Model) formSubmitted(msg varform.SubmittedMsg) tea.Cmd {
	m.formOld = currentVars(m.sess)
	n := len(m.list.Steps())
	before := planAll(m.sess, n)
	if err := m.sess.SetVars(msg.Vars); err != nil {
		m.form = nil
		return tea.Batch(m.fire(runctl.Event{Kind: runctl.VarsFailed}), common.ErrorCmd(fmt.Errorf("variables: %w", err)))
	}
	im := impactOf(before, planAll(m.sess, n), m.list.Steps())
	if len(im.redo) > 0 && m.form != nil {
		m.pending = im
		m.form.Confirm(notes(m.Styles, m.list.Steps(), im))
		return nil
	}
	return m.applied(im)
}

// formBack takes the values back: the person wants to edit them again.
func (m *Model) formBack() tea.Cmd {
	old := m.formOld
	m.pending = impact{}
	if err := m.sess.SetVars(old); err != nil {
		m.form = nil
		return tea.Batch(m.fire(runctl.Event{Kind: runctl.VarsFailed}), common.ErrorCmd(fmt.Errorf("variables: restoring the previous values: %w", err)))
	}
	return nil
}

// formCancelled closes the form; the values are the ones before it.
func (m *Model) formCancelled() tea.Cmd {
	var cmd tea.Cmd
	if m.form != nil && m.form.Confirming() {
		// Not reached through the form (esc there goes back to the
		// fields), but an abort must not leave trial values behind.
		cmd = m.formBack()
	}
	m.form = nil
	return tea.Batch(cmd, m.fire(runctl.Event{Kind: runctl.VarsCancelled}))
}

// applied settles new values: plans are read again, done steps whose
// commands changed are marked to run again, and the status line says what
// changed. A form opened before a step runs it, unless work before it must
// run again first.
func (m *Model) applied(im impact) tea.Cmd {
	runs := m.rc.VarsRuns
	m.form, m.pending = nil, impact{}
	// Plans depend on the variables.
	m.facts.ForgetPlans()
	for _, r := range im.redo {
		m.list.SetStatus(r, results.Pending)
	}
	m.status = strings.Join(notes(m.Styles, m.list.Steps(), im), " ")
	redo := -1
	if len(im.redo) > 0 {
		redo = slices.Min(im.redo)
	}
	cmd := m.fire(runctl.Event{Kind: runctl.VarsApplied, Redo: redo})
	switch {
	case redo >= 0:
		m.status = fmt.Sprintf("new values set · step %d runs again: enter runs it", redo+1)
	case runs:
	case len(im.changed) == 0:
		m.layout()
		m.status = "new values set · no step's commands change"
	default:
		m.layout()
		m.status = "new values set · " + notes(m.Styles, m.list.Steps(), im)[0]
	}
	return cmd
}
