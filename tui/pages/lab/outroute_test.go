package lab

import (
	"testing"

	"github.com/dpulab/dpulab/steps"
)

// linesBy is output lines by step.
type linesBy map[int][]string

func (l linesBy) StepLines(i int) []string { return l[i] }

// TestOutRouteShown: the pane shows the selected step's output, but a
// step held (it just ended and the selection moved on by itself) while
// the selected one has none yet and the held one has some.
func TestOutRouteShown(t *testing.T) {
	for _, tc := range []struct {
		name string
		hold int
		out  linesBy
		want int
	}{
		{name: "nothing held", hold: -1, out: linesBy{1: {"a"}}, want: 2},
		{name: "held, the next has none", hold: 1, out: linesBy{1: {"a"}}, want: 1},
		{name: "held, the next has its own", hold: 1, out: linesBy{1: {"a"}, 2: {"b"}}, want: 2},
		{name: "held, but it has none", hold: 1, out: linesBy{}, want: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newOutRoute()
			r.Hold(tc.hold)
			if got := r.Shown(2, tc.out); got != tc.want {
				t.Errorf("shows step %d, want %d", got, tc.want)
			}
			r.Release()
			if got := r.Shown(2, tc.out); got != 2 {
				t.Errorf("released: shows step %d, want the selected 2", got)
			}
		})
	}
}

// TestOutRouteOwner: a line belongs to the step it names, else to the
// running step, else to the held one, else to the step shown.
func TestOutRouteOwner(t *testing.T) {
	ss := []steps.StepInfo{{ID: "a"}, {ID: "b"}, {ID: "c"}}
	for _, tc := range []struct {
		name    string
		id      string
		running int
		hold    int
		want    int
	}{
		{name: "named", id: "b", running: 2, hold: 0, want: 1},
		{name: "unnamed, a step runs", id: "engine", running: 2, hold: 0, want: 2},
		{name: "unnamed, one just ended", id: "", running: -1, hold: 0, want: 0},
		{name: "unnamed, nothing runs or ended", id: "", running: -1, hold: -1, want: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newOutRoute()
			r.Hold(tc.hold)
			if got := r.Owner(tc.id, ss, tc.running, 1); got != tc.want {
				t.Errorf("step %d, want %d", got, tc.want)
			}
		})
	}
}
