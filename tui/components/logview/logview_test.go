package logview

import (
	"fmt"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/tui/common"
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
	m.Update(tea.KeyMsg{Type: tea.KeyUp})
	if m.Following() {
		t.Fatal("scrolling up must stop following")
	}
	off := m.vp.YOffset
	m.AppendLines(lines(10, 50))
	if m.vp.YOffset != off {
		t.Fatalf("new output moved a scrolled view from %d to %d", off, m.vp.YOffset)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("G")})
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
