package steplist

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/common"
)

// TestSelectedStepShowsItsWholeTitle: the selected step's title wraps
// under itself instead of ending in "…"; the others keep one row, and the
// list keeps its height.
func TestSelectedStepShowsItsWholeTitle(t *testing.T) {
	long := "Check that the network interface named in the inventory carries the traffic"
	for _, w := range []int{26, 33} { // the step list at 80 and 100 columns
		m := New(common.NewCommon(true, w, 8))
		m.NoAnimation = true
		m.SetSize(w, 8)
		m.SetSteps([]steps.StepInfo{{Title: "Welcome"}, {Title: long}, {Title: long + " again"}})
		m.Select(1)
		v := ansi.Strip(m.View())
		lines := strings.Split(v, "\n")
		if len(lines) != 8 {
			t.Fatalf("w=%d: %d lines, want 8:\n%s", w, len(lines), v)
		}
		var words []string
		for _, l := range lines {
			if ansi.StringWidth(l) > w {
				t.Errorf("w=%d: line wider than the pane: %q", w, l)
			}
			words = append(words, strings.Fields(l)...)
		}
		joined := strings.Join(words, " ")
		// At 100 columns the title fits its four rows; at 80 this one
		// (75 characters) ends in "…" on the fourth (the step heading
		// beside the list and w show it whole).
		want := long
		if w == 26 {
			want = strings.Join(strings.Fields(long)[:10], " ")
		}
		if !strings.Contains(joined, want) {
			t.Errorf("w=%d: the selected title lacks %q:\n%s", w, want, v)
		}
		if !strings.Contains(v, "3 Check") || !strings.Contains(v, "…") {
			t.Errorf("w=%d: the unselected step should keep one cut row:\n%s", w, v)
		}
	}
}
