package logview

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/keymap/keymaptest"
)

func lines(n, from int) []runner.Line {
	var out []runner.Line
	for i := 0; i < n; i++ {
		out = append(out, runner.Line{Host: "h1", Text: fmt.Sprint("line ", from+i)})
	}
	return out
}

func TestFollowsTailUntilScrolled(t *testing.T) {
	m := New(common.NewCommon(true, 60, 5))
	m.SetSize(60, 5)
	m.AppendLines(lines(50, 0))
	if !m.Following() || m.vp.YOffset != 45 {
		t.Fatalf("following=%v offset=%d, want the tail (45)", m.Following(), m.vp.YOffset)
	}
	m.Update(keymaptest.Press(m.KeyMap.Up))
	if m.Following() {
		t.Fatal("scrolling up must stop following")
	}
	off := m.vp.YOffset
	m.AppendLines(lines(10, 50))
	if m.vp.YOffset != off {
		t.Fatalf("new output moved a scrolled view from %d to %d", off, m.vp.YOffset)
	}
	m.Update(keymaptest.Press(m.KeyMap.Bottom))
	if !m.Following() || m.vp.YOffset != 55 {
		t.Fatalf("G must follow the tail again (following=%v offset=%d)", m.Following(), m.vp.YOffset)
	}
}

func TestOutputIsBoundedAndSanitised(t *testing.T) {
	m := New(common.NewCommon(true, 60, 5))
	m.AppendLines(lines(MaxLines+100, 0))
	if len(m.Lines()) != MaxLines {
		t.Fatalf("%d lines held, want %d", len(m.Lines()), MaxLines)
	}
	m.Clear()
	m.AppendLines([]runner.Line{{Host: "h1", Text: "red\x1b[31m text\x1b[2J"}})
	if got := m.Lines()[0]; got != "h1 │ red text" {
		t.Fatalf("line %q: escape sequences from commands must be stripped", got)
	}
}

// TestOutputKeepsSafeColours: with colour on, a command's SGR colours stay
// (ending with its line), everything else a command prints to the terminal
// goes, and a progress bar's redraws become lines of their own.
func TestOutputKeepsSafeColours(t *testing.T) {
	m := New(common.NewCommon(false, 60, 5))
	m.AppendLines([]runner.Line{
		{Host: "h1", Text: "\x1b[32mPASS\x1b[0m \x1b]52;c;aGk=\x07ok\x1b[2J\x9b1;1H\u202e"},
		{Host: "h1", Text: "10%\r50%\r100%"},
	})
	ls := m.Lines()
	if len(ls) != 4 {
		t.Fatalf("%d lines, want 1 + 3 redraws: %q", len(ls), ls)
	}
	if !strings.Contains(ls[0], "\x1b[32mPASS\x1b[0m ok\x1b[m") {
		t.Errorf("line %q: want the green PASS kept, the rest dropped, and a reset at the end", ls[0])
	}
	for _, bad := range []string{"52;c;", "2J", "\x9b", "\u202e", "1;1H"} {
		if strings.Contains(ls[0], bad) {
			t.Errorf("line %q holds %q", ls[0], bad)
		}
	}
	for i, want := range []string{"10%", "50%", "100%"} {
		if !strings.HasSuffix(ansi.Strip(ls[i+1]), "│ "+want) {
			t.Errorf("redraw line %q, want it to end in %q", ls[i+1], want)
		}
	}
}

// TestEachStepHasItsOwnOutput: a step's lines show under that step only,
// and output of a step not shown waits in its buffer.
func TestEachStepHasItsOwnOutput(t *testing.T) {
	m := New(common.NewCommon(true, 60, 5))
	m.SetSize(60, 5)
	m.Show(1)
	m.AppendLinesTo(1, lines(2, 0))
	m.Show(2)
	if len(m.Lines()) != 0 || !strings.Contains(ansi.Strip(m.View()), "no output yet") {
		t.Fatalf("step 2 shows %q, want nothing of step 1's", m.Lines())
	}
	m.AppendLinesTo(1, lines(1, 2)) // step 1 still runs while 2 is read
	m.AppendTextTo(2, "note")
	if len(m.Lines()) != 1 || strings.Contains(ansi.Strip(m.View()), "line") {
		t.Fatalf("step 2 shows %q", m.Lines())
	}
	m.Show(1)
	if got := len(m.Lines()); got != 3 {
		t.Fatalf("step 1 holds %d lines, want 3", got)
	}
	m.ClearStep(1)
	if len(m.Lines()) != 0 || len(m.StepLines(2)) != 1 {
		t.Fatalf("clearing step 1 left %d lines in it, %d in step 2", len(m.Lines()), len(m.StepLines(2)))
	}
}

// TestCutLinesEndInEllipsis: a line wider than the pane ends in "…" where
// it is cut (the viewport alone cut it silently); a line that fits is
// drawn as it is; Lines keeps the whole line for the whole-text view.
func TestCutLinesEndInEllipsis(t *testing.T) {
	m := New(common.NewCommon(true, 40, 4))
	m.SetSize(40, 4)
	long := "run 1/3: 246,041 ops/s, avg 1.033 ms (SATURATED SHARED HOST: the limit)"
	m.AppendLines([]runner.Line{{Host: "local", Text: "short"}, {Host: "local", Text: long}, {Host: "local", Text: "padded" + strings.Repeat(" ", 60)}})
	v := strings.Split(ansi.Strip(m.View()), "\n")
	if strings.TrimRight(v[0], " ") != "local │ short" {
		t.Errorf("a line that fits: %q", v[0])
	}
	if got := strings.TrimRight(v[1], " "); !strings.HasSuffix(got, "…") || ansi.StringWidth(got) != 40 {
		t.Errorf("a cut line: %q, want 40 columns ending in …", got)
	}
	if strings.Contains(v[2], "…") {
		t.Errorf("a line cut only of its padding gets no …: %q", v[2])
	}
	if !strings.Contains(m.Lines()[1], "(SATURATED SHARED HOST: the limit)") {
		t.Errorf("Lines lost the end of the line: %q", m.Lines()[1])
	}
	m.SetSize(200, 4)
	if v := ansi.Strip(m.View()); strings.Contains(v, "…") || !strings.Contains(v, "the limit)") {
		t.Errorf("wide enough, the line is whole:\n%s", v)
	}
}

// TestCutFormFollowsTheBuffer: the cut lines kept between appends stay
// those of the buffer as it is, through appends that push the oldest
// lines out, a width change and a switch of step.
func TestCutFormFollowsTheBuffer(t *testing.T) {
	m := New(common.NewCommon(true, 30, 4))
	m.SetSize(30, 4)
	check := func(when string) {
		t.Helper()
		if len(m.cut) != len(m.lines) {
			t.Fatalf("%s: %d cut lines for %d lines", when, len(m.cut), len(m.lines))
		}
		for i, l := range m.lines {
			if want := cutLine(l, max(m.vp.Width, 1)); m.cut[i] != want {
				t.Fatalf("%s: line %d drawn %q, want %q", when, i, m.cut[i], want)
			}
		}
	}
	for n := 0; n < MaxLines+50; n += 7 {
		var ls []runner.Line
		for j := range 7 {
			ls = append(ls, runner.Line{Host: "h", Text: strings.Repeat("x", (n+j)%60) + fmt.Sprint(n+j)})
		}
		m.AppendLines(ls)
	}
	check("after the buffer filled")
	m.SetSize(50, 4)
	check("after a width change")
	m.AppendLinesTo(1, []runner.Line{{Host: "h", Text: strings.Repeat("y", 80)}})
	m.Show(1)
	check("after a switch of step")
	m.AppendLines([]runner.Line{{Host: "h", Text: "z"}})
	check("after an append to it")
}
