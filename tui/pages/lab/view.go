package lab

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/styles"
)

// stepView reads what the steps view shows of the selected step from
// the page's parts.
func (m *Model) stepView() stepView {
	sel := m.list.Selected()
	v := stepView{
		Common: m.Common, hints: !m.unattended, focus: m.focus,
		steps: m.list.Steps(), sel: sel, cannotRun: m.list.CannotRun(sel),
		out: m.route.Shown(sel, m.out), following: m.out.Following(),
	}
	v.cmds, v.planErr = m.facts.Commands(sel), m.facts.PlanErr(sel)
	if f, ok := m.facts.Failure(sel); ok {
		v.failure, v.earlier = &f, m.facts.Earlier(f)
	}
	return v
}

// layout sizes the panes for the selected step and shows its text and
// output.
func (m *Model) layout() {
	g := m.stepView().geometry()
	size := [...][2]int{PaneSteps: {g.leftW, m.Height - 2}, PaneDoc: {g.rightW, g.docH}, PaneOutput: {g.rightW, g.outH - 1}}
	for p, c := range m.panes {
		c.SetSize(size[p][0], size[p][1])
	}
	m.doc.SetContent(m.facts.Doc(m.list.Selected(), g.rightW))
	m.out.Show(m.route.Shown(m.list.Selected(), m.out))
}

func heading(st *styles.Styles, title string, active bool, w int) string {
	mark := "── "
	if active {
		mark = "▶─ "
		title = st.Title.Render(title)
	} else {
		title = st.PaneTitle.Render(title)
	}
	s := mark + title + " "
	return s + strings.Repeat("─", max(w-ansi.StringWidth(s), 0))
}

// View draws the page in Width×Height.
//
// The root shows the too-small message for the terminal; the page itself
// is shorter by the footer (one line, seven with ? help), so it must not
// apply the terminal's minimum to its own height.
func (m *Model) View() string {
	status := m.statusLines()
	h := m.Height - len(status)
	var body string
	switch m.rc.View {
	case ViewDashboard:
		// The dashboard lays its charts out in the room the status line
		// leaves (it wraps to three lines): cut at the bottom, the last
		// row of charts would lose its captions, and their label.
		m.dash.SetSize(m.Width, h)
		body = m.dash.View()
	case ViewCompare:
		body = m.cmp.View()
	default:
		body = m.stepsView()
	}
	body = common.Fit(body, m.Width, h)
	if ov := m.overlay(); ov != "" {
		body = common.Overlay(body, ov, m.Width, h)
	}
	return body + "\n" + strings.Join(status, "\n")
}

// statusLines is the status line, wrapped to the page's width.
func (m *Model) statusLines() []string { return wrapStatus(m.bar.Line(m.Styles, m.rc), m.Width) }

func (m *Model) overlay() string {
	if p := m.Prompt(); p != nil {
		p.SetSize(m.Width, m.Height)
		return p.View()
	}
	if f := m.vars.Form(); f != nil {
		f.SetSize(m.Width, m.Height)
		return f.View()
	}
	if r := m.pager.Reader(); r != nil {
		return r.View()
	}
	return ""
}

// stepsView composes the steps view: the panes' own views in the
// geometry of the selected step.
func (m *Model) stepsView() string {
	if len(m.list.Steps()) == 0 {
		// Lint refuses such a lab; a session can still hold one.
		return m.Styles.Muted.Render("this lab has no steps")
	}
	v := m.stepView()
	g := v.geometry()
	m.doc.Width, m.doc.Height = g.rightW, g.docH
	return v.render(g, m.list.View(), m.doc.View(), m.out.View())
}
