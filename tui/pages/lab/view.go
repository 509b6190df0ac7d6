package lab

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/dpulab/dpulab/internal/termtext"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/steps/results"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/components/steplist"
	"github.com/dpulab/dpulab/tui/keymap"
	"github.com/dpulab/dpulab/tui/styles"
)

// geometry of the steps view, computed from the size and the selected step.
type geometry struct {
	leftW, rightW int
	titleH        int
	docH, cmdH    int
	failH, outH   int
}

func (m *Model) geometry() geometry {
	g := geometry{}
	g.leftW = min(max(m.Width/3, 24), 38)
	g.rightW = max(m.Width-g.leftW-1, 10)
	h := m.Height - 1 // status line
	g.titleH = len(m.titleLines(m.list.Selected(), g.rightW))
	rest := h - g.titleH
	// Commands wrap (commandsView): their pane grows with them, up to 6
	// lines, and says how many more there are past that.
	g.cmdH = 1 + min(max(m.commandRows(m.list.Selected(), g.rightW), 1), 6)
	if f, ok := m.facts.Failure(m.list.Selected()); ok {
		g.failH = len(m.failureLines(f, g.rightW))
	}
	g.outH = max(rest/3, 5)
	g.docH = max(rest-g.cmdH-g.failH-g.outH, 3)
	g.outH = max(rest-g.cmdH-g.failH-g.docH, 2)
	return g
}

func (m *Model) layout() {
	g := m.geometry()
	size := [...][2]int{PaneSteps: {g.leftW, m.Height - 2}, PaneDoc: {g.rightW, g.docH}, PaneOutput: {g.rightW, g.outH - 1}}
	for p, c := range m.panes {
		c.SetSize(size[p][0], size[p][1])
	}
	m.doc.SetContent(m.facts.Doc(m.list.Selected(), g.rightW))
	m.out.Show(m.outStep())
}

// taskHint stands in the commands pane of a task step, whose commands
// are the answer, hidden until asked for.
func taskHint(km *keymap.KeyMap) string {
	return fmt.Sprintf("yours to do in a shell (%s) · %s shows how · %s does it for you",
		km.Shell.Help().Key, km.ShowMe.Help().Key, km.DoIt.Help().Key)
}

// commandRows is how many lines step i's commands take wrapped to w
// columns (as commandsView wraps them).
func (m *Model) commandRows(i, w int) int {
	if isTask(m.list.Steps(), i) && m.keyHints() {
		return strings.Count(ansi.Wrap(taskHint(m.KeyMap), w, ""), "\n") + 1
	}
	n := 0
	for _, c := range m.facts.Commands(i) {
		l := cmp.Or(c.Host, "local") + " $ " + strings.ReplaceAll(c.Cmd, "\n", "⏎ ")
		if c.Sudo {
			l = "[sudo] " + l
		}
		n += strings.Count(ansi.Wrap(l, max(w-2, 10), " /"), "\n") + 1
	}
	return n
}

func (m *Model) commandsView(i, w, h int) string {
	st := m.Styles
	title := "Commands"
	if m.focus == PaneSteps && m.keyHints() {
		title += st.Muted.Render("  (y copies)")
	}
	lines := []string{heading(m.Styles, title, false, w)}
	cmds := m.facts.Commands(i)
	if isTask(m.list.Steps(), i) && m.keyHints() {
		// The answer stays hidden until asked for (show me).
		for _, l := range strings.Split(ansi.Wrap(taskHint(m.KeyMap), w, ""), "\n") {
			lines = append(lines, st.Muted.Render(l))
		}
		return strings.Join(lines, "\n")
	}
	switch {
	case m.facts.PlanErr(i) != "":
		lines = append(lines, st.Error.Render("cannot plan: ")+m.facts.PlanErr(i))
	case len(cmds) == 0:
		lines = append(lines, st.Muted.Render("(no shell commands of the lab's own: "+kindNote(m.list.Steps()[i].Kind)+")"))
	}
	for k, c := range cmds {
		if len(lines) >= h {
			more := fmt.Sprintf("… %d more", len(cmds)-k+1)
			if m.keyHints() {
				more += " (y copies all)"
			}
			lines[len(lines)-1] = st.Muted.Render(more)
			break
		}
		host := c.Host
		if host == "" {
			host = "local"
		}
		l := st.CmdHost.Render(host) + " "
		if c.Sudo {
			l += st.CmdSudo.Render("[sudo]") + " "
		}
		l += "$ " + st.CmdText.Render(strings.ReplaceAll(c.Cmd, "\n", "⏎ "))
		// Wrapped, never cut: a command is read (and typed) whole; the
		// lines after the first are indented.
		for j, wl := range strings.Split(ansi.Wrap(l, max(w-2, 10), " /"), "\n") {
			if j > 0 {
				wl = "  " + wl
			}
			if len(lines) >= h && j > 0 {
				lines[len(lines)-1] = ansi.Truncate(lines[len(lines)-1], w-1, "") + "…"
				break
			}
			lines = append(lines, wl)
		}
	}
	return strings.Join(lines, "\n")
}

// kindNote is the step kind's own word on what a step does that runs no
// shell command of the lab's.
func kindNote(kind string) string {
	if n := steps.DescribeKind(kind).Note; n != "" {
		return n
	}
	return kind
}

func (m *Model) failureLines(f steps.StepFinished, w int) []string {
	st := m.Styles
	inner := max(w-4, 10)
	var ls []string
	head := failureHead(f, m.facts.Earlier(f))
	// The error and the command wrap (a command or a path is read whole
	// at 80 columns, a booth's too, where nobody presses w); past a few
	// lines the whole-text view has the rest.
	hl, cut := wrapUpTo(head, inner, 3)
	for _, l := range hl {
		ls = append(ls, st.Error.Render(l))
	}
	if f.Cmd != "" {
		cl, ccut := wrapUpTo("  $ "+strings.ReplaceAll(f.Cmd, "\n", "⏎ "), inner, 4)
		cut = cut || ccut
		for _, l := range cl {
			ls = append(ls, st.CmdText.Render(l))
		}
	}
	tail := f.Tail
	if len(tail) > 3 {
		tail = tail[len(tail)-3:]
	}
	for _, t := range tail {
		// One row per line: a redraw's \r became a line break.
		l := "  " + termtext.Line(t)
		cut = cut || ansi.StringWidth(l) > inner
		ls = append(ls, st.Muted.Render(ansi.Truncate(l, inner, "…")))
	}
	if f.Hint != "" {
		wrapped := lipgloss.NewStyle().Width(inner).Render("Hint: " + tuiHint(m.KeyMap, f.Hint))
		for _, l := range strings.Split(wrapped, "\n") {
			ls = append(ls, st.Hint.Render(l))
		}
	}
	if m.keyHints() {
		km := m.KeyMap
		keys := []string{km.Retry.Help().Key + " retry", km.Skip.Help().Key + " skip", km.Next.Help().Key + " next"}
		if cut || len(f.Tail) > len(tail) {
			keys = append([]string{km.Whole.Help().Key + " reads it whole"}, keys...)
		}
		ls = append(ls, st.Muted.Render(strings.Join(keys, " · ")))
	}
	return append(append([]string{""}, ls...), "") // border lines
}

// wrapUpTo wraps s to w columns between words and at paths' slashes, at
// most n lines, the last one ending in "…" when there was more (cut).
func wrapUpTo(s string, w, n int) (lines []string, cut bool) {
	lines = strings.Split(ansi.Wrap(s, w, " /"), "\n")
	if len(lines) > n {
		lines = lines[:n]
		lines[n-1] = ansi.Truncate(lines[n-1], w-1, "") + "…"
		cut = true
	}
	return lines, cut
}

func (m *Model) failureView(f steps.StepFinished, w int) string {
	ls := m.failureLines(f, w)
	return m.Styles.ErrorBox.Width(w - 2).Render(strings.Join(ls[1:len(ls)-1], "\n"))
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

// maxStatusLines bounds how far a long status line (a results path, a
// report's path, an error) wraps: the screen above gives up its bottom
// lines meanwhile.
const maxStatusLines = 3

// statusLines is the status line wrapped to the width, at paths' slashes
// and between words, never cut: a results or report path must be read
// whole at 80 columns. Past maxStatusLines it is cut after all.
func (m *Model) statusLines() []string {
	s := m.statusLine()
	if m.Width <= 0 || ansi.StringWidth(s) <= m.Width {
		return []string{s}
	}
	ls := strings.Split(ansi.Wrap(s, m.Width, "/"), "\n")
	if len(ls) > maxStatusLines {
		ls = ls[:maxStatusLines]
		ls[maxStatusLines-1] = ansi.Truncate(ls[maxStatusLines-1], m.Width-1, "") + "…"
	}
	return ls
}

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

// outStep is the step whose output the pane shows: the selected one's,
// or the step that just ended while the next one has none yet.
func (m *Model) outStep() int {
	sel := m.list.Selected()
	if m.outHold >= 0 && len(m.out.StepLines(sel)) == 0 && len(m.out.StepLines(m.outHold)) > 0 {
		return m.outHold
	}
	return sel
}

// titleLines is the selected step's heading: its whole title, wrapped (at
// most three lines; the whole-text view has the rest), then its kind and
// status.
func (m *Model) titleLines(i, w int) []string {
	if i < 0 || i >= len(m.list.Steps()) {
		return []string{""}
	}
	st := m.Styles
	s := m.list.Steps()[i]
	head := fmt.Sprintf("Step %d/%d: %s", i+1, len(m.list.Steps()), s.Title)
	tag := fmt.Sprintf("[%s · %s]", s.Kind, s.Status)
	ls := strings.Split(ansi.Wrap(head+"  "+tag, w, " "), "\n")
	if len(ls) > 3 {
		ls = ls[:3]
		ls[2] = ansi.Truncate(ls[2], w-1, "") + "…"
	}
	for k, l := range ls {
		// The tag, wherever the wrap put it, is muted; the title bold.
		if at := strings.Index(l, tag); at >= 0 {
			ls[k] = st.Title.Render(l[:at]) + st.Muted.Render(l[at:])
		} else {
			ls[k] = st.Title.Render(l)
		}
	}
	if why := m.list.CannotRun(i); why != "" && s.Status == results.Pending {
		for _, l := range strings.Split(ansi.Wrap(steplist.CannotRunIcon+" cannot run here: "+why, w, " "), "\n") {
			ls = append(ls, st.Error.Render(l))
		}
	}
	return ls
}

func (m *Model) stepsView() string {
	st := m.Styles
	if len(m.list.Steps()) == 0 {
		// Lint refuses such a lab; a session can still hold one.
		return st.Muted.Render("this lab has no steps")
	}
	g := m.geometry()
	i := m.list.Selected()
	left := heading(m.Styles, "Steps", m.focus == PaneSteps, g.leftW) + "\n" + m.list.View()
	left = common.Fit(left, g.leftW, m.Height-1)

	var right []string
	right = append(right, m.titleLines(i, g.rightW)...)
	m.doc.Width, m.doc.Height = g.rightW, g.docH
	right = append(right, common.Fit(m.doc.View(), g.rightW, g.docH))
	right = append(right, common.Fit(m.commandsView(i, g.rightW, g.cmdH), g.rightW, g.cmdH))
	if f, ok := m.facts.Failure(i); ok {
		right = append(right, m.failureView(f, g.rightW))
	}
	outTitle := "Output"
	if o := m.outStep(); o != i && o >= 0 && o < len(m.list.Steps()) {
		outTitle += st.Muted.Render(fmt.Sprintf(" of step %d (%s)", o+1, m.list.Status(o)))
	}
	if !m.out.Following() {
		outTitle += st.Muted.Render("  (scrolled: G/end follows again)")
	}
	right = append(right, heading(m.Styles, outTitle, m.focus == PaneOutput, g.rightW))
	right = append(right, common.Fit(m.out.View(), g.rightW, g.outH-1))
	r := common.Fit(strings.Join(right, "\n"), g.rightW, m.Height-1)
	sep := strings.TrimRight(strings.Repeat("│\n", m.Height-1), "\n")
	return lipgloss.JoinHorizontal(lipgloss.Top, left, st.Muted.Render(sep), r)
}

func (m *Model) statusLine() string {
	st := m.Styles
	var s string
	switch {
	case m.banner != "":
		s = m.banner
	case m.rc.Busy() != "":
		s = st.Countdown.Render(m.rc.Busy() + "…")
	case m.rc.Running >= 0:
		s = st.StepRunning.Render(fmt.Sprintf("running step %d", m.rc.Running+1))
		if m.rc.All {
			s += st.Muted.Render(" (running all)")
		}
		s += st.Muted.Render(" · q stops it and cleans up")
	}
	if status := m.status; status != "" && (status != dashboardHint || m.rc.View != ViewDashboard) {
		if s != "" {
			s += st.Muted.Render(" · ")
		}
		s += status
	}
	if s == "" {
		s = st.Muted.Render(m.info.Title)
		if m.resultsDir != "" && !m.unattended {
			s += st.Muted.Render(" · results: " + m.resultsDir)
		}
	}
	if e := (results.Figures{Emulation: m.figures.Emulation}); m.rc.Running >= 0 && e.Short() != "" {
		// The running variant's own label (the run's rehearsal and
		// software RDMA follow, said always): a real variant of the
		// same lab carries none.
		s = st.Error.Render(e.Short()) + st.Muted.Render(" · ") + s
	}
	if m.softRDMA != "" {
		// Said first and always: no number of this run is one of RDMA
		// hardware.
		s = st.Error.Render(results.SoftwareRDMALabel(m.softRDMA)) + st.Muted.Render(" ("+m.softRDMA+") · ") + s
	}
	if m.rehearsal != "" {
		// Said first and always: no number of this run is a DPU result.
		s = st.Error.Render("REHEARSAL: no DPU in this run") + st.Muted.Render(" ("+m.rehearsal+") · ") + s
	}
	return s
}
