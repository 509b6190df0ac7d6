package lab

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/dpulab/dpulab/internal/termtext"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/keymap"
	"github.com/dpulab/dpulab/tui/styles"
)

// textSource is what the pager asks of the session: a task step's
// solution and the files a step writes.
type textSource interface {
	Solution(i int) ([]steps.TaskSolution, error)
	Rendered(i int) (files []steps.RenderedFile, more int, err error)
}

// pager is the page's whole-text overlay: a step in full (Whole), a task
// step's show me (ShowMe) or the rendered files (Files), built when opened
// and read in a reader (reader.go) that takes the keys until closed. It
// covers the page above its status line.
type pager struct {
	common.Common
	src textSource
	// open is the reader shown (nil: closed).
	open *reader
}

func newPager(c common.Common, src textSource) *pager { return &pager{Common: c, src: src} }

// Reader is the open reader, nil when closed.
func (p *pager) Reader() *reader { return p.open }

// SetSize is the page's size; the reader takes all but the status line.
func (p *pager) SetSize(w, h int) {
	p.Common.SetSize(w, h)
	if p.open != nil {
		p.open.SetSize(w, h-1)
	}
}

// Key handles k while a reader is open: esc, q and the key that opened it
// close it, the others scroll.
func (p *pager) Key(k tea.KeyMsg) tea.Cmd {
	km := p.KeyMap
	if key.Matches(k, km.Back) || key.Matches(k, p.open.close) || key.Matches(k, km.Quit) {
		p.open = nil
		return nil
	}
	_, cmd := p.open.Update(k)
	return cmd
}

// show opens a reader over secs at the section titled start; close is the
// key that opened it.
func (p *pager) show(title string, secs []section, start string, close key.Binding) {
	c := p.Common
	c.Height-- // the status line is the page's
	p.open = newReader(c, title, secs, start)
	p.open.close = close
}

// stepText is what the whole-text view shows of one step: the page's
// facts about it, read when the view opens.
type stepText struct {
	index int
	steps []steps.StepInfo
	// failure is why it failed (nil: it did not); earlier says the
	// failure is an earlier session's.
	failure *steps.StepFinished
	earlier bool
	// status is the status line's own text as shown ("" none).
	status string
	// cmds and planErr are what it runs; hideCmds keeps a task step's
	// commands (the answer) hidden until show me.
	cmds     []steps.PlannedCommand
	planErr  string
	hideCmds bool
	output   []string
	// start is the section the view opens at (the focused pane's).
	start string
}

// Whole opens the whole-text view of a step.
func (p *pager) Whole(t stepText) {
	p.show("Step "+fmt.Sprint(t.index+1)+" in full", wholeText(p.KeyMap, t), t.start, p.KeyMap.Whole)
}

// Section titles of the whole-text view; the focused pane's opens first.
const (
	secStep     = "Step"
	secFailure  = "Why it failed"
	secStatus   = "Status"
	secCommands = "Commands"
	secOutput   = "Output"
)

// failureHead is a failure's first line: where and why.
func failureHead(f steps.StepFinished, earlier bool) string {
	head := "✘ failed"
	if earlier && f.Err != "in an earlier session" {
		head += " in an earlier session"
	}
	if f.Host != "" {
		head += " on " + f.Host
	}
	if f.Err != "" {
		head += ": " + f.Err
	}
	return head
}

// wholeText gathers everything about a step, unabridged.
func wholeText(km *keymap.KeyMap, t stepText) []section {
	var out []section
	i := t.index
	if i < 0 || i >= len(t.steps) {
		return nil
	}
	s := t.steps[i]
	out = append(out, section{secStep, []string{
		fmt.Sprintf("Step %d/%d: %s", i+1, len(t.steps), s.Title),
		fmt.Sprintf("kind %s · %s", s.Kind, s.Status),
	}})
	if f := t.failure; f != nil {
		ls := []string{failureHead(*f, t.earlier)}
		if f.Cmd != "" {
			ls = append(ls, "", "The command that failed:")
			for _, l := range strings.Split(f.Cmd, "\n") {
				ls = append(ls, "  "+l)
			}
		}
		if len(f.Tail) > 0 {
			ls = append(ls, "", "Its last lines of output:")
			for _, l := range f.Tail {
				ls = append(ls, "  "+termtext.Line(l))
			}
		}
		if f.Hint != "" {
			ls = append(ls, "", "Hint: "+tuiHint(km, f.Hint))
		}
		out = append(out, section{secFailure, ls})
	}
	if t.status != "" {
		out = append(out, section{secStatus, []string{ansi.Strip(t.status)}})
	}
	output := t.output
	if len(output) == 0 {
		output = []string{"(no output yet)"}
	}
	if t.hideCmds {
		// As the commands pane: the answer waits for show me.
		out = append(out, section{secCommands, []string{fmt.Sprintf("(yours to do in a shell: %s opens one, %s shows the commands that do it, %s runs them for you)",
			km.Shell.Help().Key, km.ShowMe.Help().Key, km.DoIt.Help().Key)}})
		return append(out, section{secOutput, output})
	}
	var cl []string
	if t.planErr != "" {
		cl = append(cl, "cannot plan: "+t.planErr)
	}
	for _, c := range t.cmds {
		host := c.Host
		if host == "" {
			host = "local"
		}
		pr := host + " "
		if c.Sudo {
			pr += "[sudo] "
		}
		// A multi-line script keeps its lines, each under the prompt.
		for k, l := range strings.Split(c.Cmd, "\n") {
			if k == 0 {
				cl = append(cl, pr+"$ "+l)
			} else {
				cl = append(cl, strings.Repeat(" ", ansi.StringWidth(pr))+"  "+l)
			}
		}
	}
	if len(cl) == 0 {
		cl = append(cl, "(no shell commands of the lab's own: "+kindNote(s.Kind)+")")
	}
	out = append(out, section{secCommands, cl})
	return append(out, section{secOutput, output})
}

// ShowMe opens the view of what would do task step i of ss: the commands
// "do it for me" runs on each host, and the check. When it cannot, it
// says why for the status line (opened: "").
func (p *pager) ShowMe(ss []steps.StepInfo, i int) (status string) {
	km := p.KeyMap
	if !isTask(ss, i) {
		return fmt.Sprintf("%s shows how to do a task step; step %d is not one", km.ShowMe.Help().Key, i+1)
	}
	sol, err := p.src.Solution(i)
	if err != nil {
		return p.Styles.Error.Render("show me: ") + err.Error()
	}
	var secs []section
	for _, s := range sol {
		prompt := s.Host + " $ "
		if s.Sudo {
			prompt = s.Host + " [sudo] $ "
		}
		var ls []string
		for _, c := range s.Run {
			ls = append(ls, prompt+c)
		}
		secs = append(secs, section{"On " + s.Host + ", these commands do it", ls})
		if s.Verify != "" {
			secs = append(secs, section{"On " + s.Host + ", the lab checks it with", []string{prompt + s.Verify}})
		}
	}
	secs = append(secs, section{"Your turn", []string{
		fmt.Sprintf("%s (or enter) opens a shell on the host to do it yourself; the lab checks your work when you exit it.", km.Shell.Help().Key),
		fmt.Sprintf("%s has dpulab run the commands above for you, then the check.", km.DoIt.Help().Key),
	}})
	p.show(fmt.Sprintf("Step %d: show me", i+1), secs, "", km.ShowMe)
	return ""
}

// Files opens the rendered-files view: the files step i of ss writes when
// it is a template or deploy step, else those of every such step of the
// lab. When there are none, it says so for the status line (opened: "").
func (p *pager) Files(ss []steps.StepInfo, i int) (status string) {
	var which []int
	if i >= 0 && i < len(ss) && steps.KindWritesFiles(ss[i].Kind) {
		which = []int{i}
	} else {
		for j, s := range ss {
			if steps.KindWritesFiles(s.Kind) {
				which = append(which, j)
			}
		}
	}
	if len(which) == 0 {
		return "this lab writes no files (it has no template or deploy step)"
	}
	secs := []section{{"About these files", []string{
		"What the lab's template and deploy steps write on each host, rendered with the lab's current values: " +
			"the files as dpulab writes them, not as they are on the host now (an edit of yours in a shell is not shown here). " +
			"Passwords show as " + steps.HiddenSecret + ".",
	}}}
	for _, j := range which {
		files, more, err := p.src.Rendered(j)
		step := fmt.Sprintf("step %d (%s, %s)", j+1, ss[j].ID, ss[j].Status)
		if err != nil {
			secs = append(secs, section{step, []string{"cannot render: " + err.Error()}})
			continue
		}
		for _, f := range files {
			src := "dpulab's minimal config"
			if f.Source != "" {
				src = f.Source
			}
			ls := []string{p.Styles.Muted.Render(fmt.Sprintf("%s writes it · from %s", step, src))}
			secs = append(secs, section{f.Host + ":" + f.Path, append(ls, highlight(p.Styles, f.Content)...)})
		}
		if more > 0 {
			secs = append(secs, section{step, []string{fmt.Sprintf("… and %d more files, not shown", more)}})
		}
	}
	title := "Rendered files"
	if len(which) == 1 {
		title = fmt.Sprintf("Step %d: rendered files", which[0]+1)
	}
	p.show(title, secs, "", p.KeyMap.Files)
	return ""
}

// highlight colours a config file's lines: comments muted, each
// directive's name bold. The text is clean already (the session's); the
// styles are ours.
func highlight(st *styles.Styles, content string) []string {
	lines := strings.Split(strings.TrimRight(content, "\n"), "\n")
	for k, l := range lines {
		l = strings.ReplaceAll(l, "\t", "    ")
		t := strings.TrimSpace(l)
		switch {
		case t == "":
		case strings.HasPrefix(t, "#"):
			l = st.Muted.Render(l)
		default:
			lead := l[:len(l)-len(strings.TrimLeft(l, " "))]
			name, rest, _ := strings.Cut(strings.TrimLeft(l, " "), " ")
			l = lead + st.PaneTitle.Render(name)
			if rest != "" {
				l += " " + rest
			}
		}
		lines[k] = l
	}
	return lines
}
