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
)

// stepView is what the steps view shows of the selected step, read from
// the page's parts when a frame or a layout is made: its geometry, its
// heading, its commands and why it failed are drawn from it alone, and it
// changes nothing.
type stepView struct {
	// Common holds the styles, the key map and the page's size (the
	// status line included).
	common.Common
	// hints: the screen may name keys (not at a booth).
	hints bool
	focus Pane
	steps []steps.StepInfo
	sel   int
	// cannotRun is why the selected step cannot run here ("" it can).
	cannotRun string
	cmds      []steps.PlannedCommand
	planErr   string
	// failure is why it failed (nil: it did not); earlier says it failed
	// in an earlier session.
	failure *steps.StepFinished
	earlier bool
	// out is the step whose output the output pane shows, following
	// whether it follows new lines.
	out       int
	following bool
}

// geometry of the steps view, computed from the size and the selected step.
type geometry struct {
	leftW, rightW int
	titleH        int
	docH, cmdH    int
	failH, outH   int
}

func (v stepView) geometry() geometry {
	g := geometry{}
	g.leftW = min(max(v.Width/3, 24), 38)
	g.rightW = max(v.Width-g.leftW-1, 10)
	h := v.Height - 1 // status line
	g.titleH = len(v.titleLines(g.rightW))
	rest := h - g.titleH
	// Commands wrap (commandsView): their pane grows with them, up to 6
	// lines, and says how many more there are past that.
	g.cmdH = 1 + min(max(v.commandRows(g.rightW), 1), 6)
	if v.failure != nil {
		g.failH = len(v.failureLines(g.rightW))
	}
	g.outH = max(rest/3, 5)
	g.docH = max(rest-g.cmdH-g.failH-g.outH, 3)
	g.outH = max(rest-g.cmdH-g.failH-g.docH, 2)
	return g
}

// task reports whether the selected step is a task step whose commands
// (the answer) stay hidden until asked for.
func (v stepView) task() bool { return isTask(v.steps, v.sel) && v.hints }

// taskHint stands in the commands pane of a task step, whose commands
// are the answer, hidden until asked for.
func taskHint(km *keymap.KeyMap) string {
	return fmt.Sprintf("yours to do in a shell (%s) · %s shows how · %s does it for you",
		km.Shell.Help().Key, km.ShowMe.Help().Key, km.DoIt.Help().Key)
}

// commandRows is how many lines the commands take wrapped to w columns
// (as commandsView wraps them).
func (v stepView) commandRows(w int) int {
	if v.task() {
		return strings.Count(ansi.Wrap(taskHint(v.KeyMap), w, ""), "\n") + 1
	}
	n := 0
	for _, c := range v.cmds {
		l := cmp.Or(c.Host, "local") + " $ " + strings.ReplaceAll(c.Cmd, "\n", "⏎ ")
		if c.Sudo {
			l = "[sudo] " + l
		}
		n += strings.Count(ansi.Wrap(l, max(w-2, 10), " /"), "\n") + 1
	}
	return n
}

// commandsView is the commands pane in w×h.
func (v stepView) commandsView(w, h int) string {
	st := v.Styles
	title := "Commands"
	if v.focus == PaneSteps && v.hints {
		title += st.Muted.Render("  (y copies)")
	}
	lines := []string{heading(v.Styles, title, false, w)}
	cmds := v.cmds
	if v.task() {
		// The answer stays hidden until asked for (show me).
		for _, l := range strings.Split(ansi.Wrap(taskHint(v.KeyMap), w, ""), "\n") {
			lines = append(lines, st.Muted.Render(l))
		}
		return strings.Join(lines, "\n")
	}
	switch {
	case v.planErr != "":
		lines = append(lines, st.Error.Render("cannot plan: ")+v.planErr)
	case len(cmds) == 0:
		lines = append(lines, st.Muted.Render("(no shell commands of the lab's own: "+kindNote(v.steps[v.sel].Kind)+")"))
	}
	for k, c := range cmds {
		if len(lines) >= h {
			more := fmt.Sprintf("… %d more", len(cmds)-k+1)
			if v.hints {
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

// failureLines are the failure box's lines at width w, with a blank line
// for each border.
func (v stepView) failureLines(w int) []string {
	st := v.Styles
	f := *v.failure
	inner := max(w-4, 10)
	var ls []string
	head := failureHead(f, v.earlier)
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
		wrapped := lipgloss.NewStyle().Width(inner).Render("Hint: " + tuiHint(v.KeyMap, f.Hint))
		for _, l := range strings.Split(wrapped, "\n") {
			ls = append(ls, st.Hint.Render(l))
		}
	}
	if v.hints {
		km := v.KeyMap
		keys := []string{km.Retry.Help().Key + " retry", km.Skip.Help().Key + " skip", km.Next.Help().Key + " next"}
		if cut || len(f.Tail) > len(tail) {
			keys = append([]string{km.Whole.Help().Key + " reads it whole"}, keys...)
		}
		ls = append(ls, st.Muted.Render(strings.Join(keys, " · ")))
	}
	return append(append([]string{""}, ls...), "") // border lines
}

// failureView is the failure box at width w.
func (v stepView) failureView(w int) string {
	ls := v.failureLines(w)
	return v.Styles.ErrorBox.Width(w - 2).Render(strings.Join(ls[1:len(ls)-1], "\n"))
}

// titleLines is the selected step's heading: its whole title, wrapped (at
// most three lines; the whole-text view has the rest), then its kind and
// status.
func (v stepView) titleLines(w int) []string {
	i := v.sel
	if i < 0 || i >= len(v.steps) {
		return []string{""}
	}
	st := v.Styles
	s := v.steps[i]
	head := fmt.Sprintf("Step %d/%d: %s", i+1, len(v.steps), s.Title)
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
	if why := v.cannotRun; why != "" && s.Status == results.Pending {
		for _, l := range strings.Split(ansi.Wrap(steplist.CannotRunIcon+" cannot run here: "+why, w, " "), "\n") {
			ls = append(ls, st.Error.Render(l))
		}
	}
	return ls
}

// render draws the steps view in g from the panes' own views (the step
// list, the rendered text, the output), sized by the page to g.
func (v stepView) render(g geometry, list, doc, out string) string {
	st := v.Styles
	left := heading(v.Styles, "Steps", v.focus == PaneSteps, g.leftW) + "\n" + list
	left = common.Fit(left, g.leftW, v.Height-1)

	var right []string
	right = append(right, v.titleLines(g.rightW)...)
	right = append(right, common.Fit(doc, g.rightW, g.docH))
	right = append(right, common.Fit(v.commandsView(g.rightW, g.cmdH), g.rightW, g.cmdH))
	if v.failure != nil {
		right = append(right, v.failureView(g.rightW))
	}
	outTitle := "Output"
	if o := v.out; o != v.sel && o >= 0 && o < len(v.steps) {
		outTitle += st.Muted.Render(fmt.Sprintf(" of step %d (%s)", o+1, v.steps[o].Status))
	}
	if !v.following {
		outTitle += st.Muted.Render("  (scrolled: G/end follows again)")
	}
	right = append(right, heading(v.Styles, outTitle, v.focus == PaneOutput, g.rightW))
	right = append(right, common.Fit(out, g.rightW, g.outH-1))
	r := common.Fit(strings.Join(right, "\n"), g.rightW, v.Height-1)
	sep := strings.TrimRight(strings.Repeat("│\n", v.Height-1), "\n")
	return lipgloss.JoinHorizontal(lipgloss.Top, left, st.Muted.Render(sep), r)
}

// kindNote is the step kind's own word on what a step does that runs no
// shell command of the lab's.
func kindNote(kind string) string {
	if n := steps.DescribeKind(kind).Note; n != "" {
		return n
	}
	return kind
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
