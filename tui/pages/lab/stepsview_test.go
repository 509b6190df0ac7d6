package lab

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/steps/results"
	"github.com/dpulab/dpulab/tui/common"
)

// aStepView is a steps view at 100×30 of step sel of a run step, a task
// step and a failed one, with key hints, the steps pane focused.
func aStepView(sel int) stepView {
	return stepView{
		Common: common.NewCommon(true, 100, 30), hints: true, focus: PaneSteps, sel: sel, out: sel, following: true,
		steps: []steps.StepInfo{
			{ID: "r", Title: "Start the servers", Kind: "run", Status: results.Pending},
			{ID: "t", Title: "Tune it yourself", Kind: "task", Status: results.Pending},
			{ID: "f", Title: "Bench", Kind: "run", Status: results.Failed},
		},
	}
}

// TestStepViewCommands: the commands pane of the selected step, by what
// is known of it: its commands wrapped whole (hosts, sudo), cut with how
// many more past its height; a plan's error; none; a task step's answer
// hidden, but at a booth (no key hints) shown.
func TestStepViewCommands(t *testing.T) {
	many := []steps.PlannedCommand{{Cmd: "a"}, {Cmd: "b"}, {Cmd: "c"}, {Cmd: "d"}, {Cmd: "e"}}
	for _, tc := range []struct {
		name  string
		v     func(v *stepView)
		h     int
		want  []string
		lacks []string
		rows  int
	}{
		{name: "commands", v: func(v *stepView) {
			v.cmds = []steps.PlannedCommand{{Cmd: "redis-server --port 6379"}, {Host: "server1", Sudo: true, Cmd: "sysctl -w a=1\nsysctl -w b=2"}}
		}, h: 7, want: []string{"Commands  (y copies)", "local $ redis-server --port 6379", "server1 [sudo] $ sysctl -w a=1⏎ sysctl -w b=2"}, rows: 2},
		{name: "cut", v: func(v *stepView) { v.cmds = many }, h: 4, want: []string{"local $ a", "local $ b", "… 3 more (y copies all)"}, lacks: []string{"local $ c"}, rows: 5},
		{name: "cut at a booth", v: func(v *stepView) { v.cmds, v.hints = many, false }, h: 4, want: []string{"… 3 more"}, lacks: []string{"y copies"}, rows: 5},
		{name: "output focused", v: func(v *stepView) { v.cmds, v.focus = many[:1], PaneOutput }, h: 7, lacks: []string{"y copies"}, rows: 1},
		{name: "cannot plan", v: func(v *stepView) { v.planErr = "no port" }, h: 7, want: []string{"cannot plan: no port"}, lacks: []string{"no shell commands"}},
		{name: "no commands", v: func(v *stepView) {}, h: 7, want: []string{"(no shell commands of the lab's own: "}},
		{name: "a task's answer hidden", v: func(v *stepView) { v.sel, v.cmds = 1, many[:1] }, h: 7,
			want: []string{"yours to do in a shell (t) · m shows how · f does it for you"}, lacks: []string{"local $ a"}, rows: 1},
		{name: "a task at a booth", v: func(v *stepView) { v.sel, v.cmds, v.hints = 1, many[:1], false }, h: 7,
			want: []string{"local $ a"}, lacks: []string{"yours to do"}, rows: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := aStepView(0)
			tc.v(&v)
			got := ansi.Strip(v.commandsView(70, tc.h))
			if n := strings.Count(got, "\n") + 1; n > tc.h {
				t.Errorf("%d lines in a pane of %d", n, tc.h)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("lacks %q:\n%s", w, got)
				}
			}
			for _, l := range tc.lacks {
				if strings.Contains(got, l) {
					t.Errorf("has %q:\n%s", l, got)
				}
			}
			if r := v.commandRows(70); r != tc.rows {
				t.Errorf("%d rows, want %d", r, tc.rows)
			}
		})
	}
}

// TestStepViewFailure: the failure box says where and why, an earlier
// session's as such, the hint worded for the form, and offers the whole
// text when it had to cut; at a booth it names no key.
func TestStepViewFailure(t *testing.T) {
	f := steps.StepFinished{Index: 2, Status: results.Failed, Host: "server1", Err: "exit 1", Cmd: "redis-server", Hint: "Try --set port=7000.", Tail: []string{"a", "b"}}
	long := f
	long.Tail = []string{"1", "2", "3", "4"}
	for _, tc := range []struct {
		name    string
		f       steps.StepFinished
		earlier bool
		hints   bool
		want    []string
		lacks   []string
	}{
		{name: "here", f: f, hints: true, want: []string{"✘ failed on server1: exit 1", "$ redis-server", "  a", "  b", "Hint: Try the variables form (v), field port.", "r retry · s skip · n next"},
			lacks: []string{"earlier", "reads it whole"}},
		{name: "earlier", f: f, earlier: true, hints: true, want: []string{"✘ failed in an earlier session on server1: exit 1"}},
		{name: "more lines than shown", f: long, hints: true, want: []string{"  2\n", "  4\n", "w reads it whole · r retry"}, lacks: []string{"  1\n"}},
		{name: "at a booth", f: long, want: []string{"  4"}, lacks: []string{"retry", "reads it whole"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := aStepView(2)
			v.failure, v.earlier, v.hints = &tc.f, tc.earlier, tc.hints
			ls := v.failureLines(70)
			if ls[0] != "" || ls[len(ls)-1] != "" {
				t.Errorf("no border lines: %q", ls)
			}
			got := ansi.Strip(strings.Join(ls, "\n"))
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("lacks %q:\n%s", w, got)
				}
			}
			for _, l := range tc.lacks {
				if strings.Contains(got, l) {
					t.Errorf("has %q:\n%s", l, got)
				}
			}
			if g := v.geometry(); g.failH != len(ls) {
				t.Errorf("geometry gives the failure %d lines, it has %d", g.failH, len(ls))
			}
		})
	}
}

// TestStepViewTitle: the heading names the step, its kind and status, wraps
// to three lines at most, and says why a pending step cannot run here.
func TestStepViewTitle(t *testing.T) {
	for _, tc := range []struct {
		name   string
		v      func(v *stepView)
		w      int
		want   []string
		lines  int
		cutOff bool
	}{
		{name: "short", v: func(v *stepView) {}, w: 70, want: []string{"Step 1/3: Start the servers  [run · pending]"}, lines: 1},
		{name: "cannot run", v: func(v *stepView) { v.cannotRun = "no RDMA device" }, w: 70, want: []string{"⊘ cannot run here: no RDMA device"}, lines: 2},
		{name: "cannot run, but done", v: func(v *stepView) { v.cannotRun, v.steps[0].Status = "no RDMA device", results.Done }, w: 70, lines: 1},
		{name: "long", v: func(v *stepView) { v.steps[0].Title = strings.Repeat("word ", 40) }, w: 30, lines: 3, cutOff: true},
		{name: "past the list", v: func(v *stepView) { v.sel = 5 }, w: 70, lines: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := aStepView(0)
			tc.v(&v)
			ls := v.titleLines(tc.w)
			got := ansi.Strip(strings.Join(ls, "\n"))
			if len(ls) != tc.lines || strings.HasSuffix(got, "…") != tc.cutOff {
				t.Errorf("%d lines (cut %v), want %d (cut %v):\n%s", len(ls), strings.HasSuffix(got, "…"), tc.lines, tc.cutOff, got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("lacks %q:\n%s", w, got)
				}
			}
		})
	}
}

// TestStepViewGeometry: the panes share the height but the status line,
// the commands pane grows with its commands up to six lines, and a failure
// takes its box's lines from the text.
func TestStepViewGeometry(t *testing.T) {
	var cmds []steps.PlannedCommand
	for range 10 {
		cmds = append(cmds, steps.PlannedCommand{Cmd: "x"})
	}
	for _, tc := range []struct {
		name       string
		v          func(v *stepView)
		cmdH       int
		withFailed bool
	}{
		{name: "no commands", v: func(v *stepView) {}, cmdH: 2},
		{name: "three commands", v: func(v *stepView) { v.cmds = cmds[:3] }, cmdH: 4},
		{name: "ten commands", v: func(v *stepView) { v.cmds = cmds }, cmdH: 7},
		{name: "failed", v: func(v *stepView) {
			v.sel = 2
			v.failure = &steps.StepFinished{Index: 2, Err: "exit 1"}
		}, cmdH: 2, withFailed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := aStepView(0)
			tc.v(&v)
			g := v.geometry()
			if g.leftW != 33 || g.rightW != 66 || g.cmdH != tc.cmdH || (g.failH > 0) != tc.withFailed {
				t.Errorf("geometry %+v: want 33 and 66 columns, %d lines of commands, a failure %v", g, tc.cmdH, tc.withFailed)
			}
			if sum := g.titleH + g.docH + g.cmdH + g.failH + g.outH; sum != v.Height-1 {
				t.Errorf("geometry %+v takes %d lines of %d", g, sum, v.Height-1)
			}
		})
	}
}

// TestStepViewRender: the whole steps view in the page's size, its output
// pane titled with the step it shows when that is not the selected one,
// and saying when it is scrolled.
func TestStepViewRender(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    func(v *stepView)
		want string
	}{
		{name: "its own output", v: func(v *stepView) {}, want: "── Output ─"},
		{name: "the step that just ended", v: func(v *stepView) { v.out = 2 }, want: "Output of step 3 (failed)"},
		{name: "scrolled", v: func(v *stepView) { v.following = false }, want: "Output  (scrolled: G/end follows again)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := aStepView(0)
			tc.v(&v)
			got := ansi.Strip(v.render(v.geometry(), "LIST", "DOC", "OUT"))
			ls := strings.Split(got, "\n")
			if len(ls) != v.Height-1 {
				t.Errorf("%d lines, want %d", len(ls), v.Height-1)
			}
			for _, l := range ls {
				if w := ansi.StringWidth(l); w > v.Width {
					t.Errorf("a line of %d columns in %d: %q", w, v.Width, l)
				}
			}
			for _, w := range []string{"▶─ Steps", "LIST", "DOC", "OUT", "Step 1/3: Start the servers", tc.want} {
				if !strings.Contains(got, w) {
					t.Errorf("lacks %q:\n%s", w, got)
				}
			}
		})
	}
}
