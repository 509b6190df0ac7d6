package load

import (
	"slices"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/runner"
)

// TestSecondJoiner: a totals sample is held until its per-target lines
// came (or the next totals or run line closes it); stray target lines
// are dropped; without per-target lines asked for, a second is complete
// at once.
func TestSecondJoiner(t *testing.T) {
	tot := func(run int, tt float64) *benchwire.Sample { return &benchwire.Sample{Run: run, T: tt} }
	tgt := func(run int, tt float64, name string) *benchwire.Sample {
		return &benchwire.Sample{Run: run, T: tt, Target: name}
	}
	j := SecondJoiner{Want: 2}
	if got := j.Add(tgt(1, 1, "a")); got != nil {
		t.Fatalf("a target line before any totals completed %+v", got)
	}
	if got := j.Add(tot(1, 1)); got != nil {
		t.Fatalf("totals alone completed %+v", got)
	}
	j.Add(tgt(1, 1, "a"))
	j.Add(tgt(1, 0.5, "x")) // another second's: dropped
	got := j.Add(tgt(1, 1, "b"))
	if len(got) != 1 || got[0].Total.T != 1 || len(got[0].Targets) != 2 || got[0].Targets[1].Target != "b" {
		t.Fatalf("second 1: %+v", got)
	}
	j.Add(tot(1, 2))
	j.Add(tgt(1, 2, "a"))
	got = j.Add(tot(1, 3)) // b's line never came: the next totals closes it
	if len(got) != 1 || got[0].Total.T != 2 || len(got[0].Targets) != 1 {
		t.Fatalf("second 2 closed by the next: %+v", got)
	}
	if got := j.Flush(); len(got) != 1 || got[0].Total.T != 3 || got[0].Targets != nil {
		t.Fatalf("flush: %+v", got)
	}
	if got := j.Flush(); got != nil {
		t.Fatalf("second flush: %+v", got)
	}
	none := SecondJoiner{}
	if got := none.Add(tot(1, 1)); len(got) != 1 || got[0].Total.T != 1 {
		t.Fatalf("without per-target lines: %+v", got)
	}
}

// TestBenchOutput: a bench's stdout lines are its events; a stderr line
// is shown and kept, only the last BenchTailLines of them; a stdout line
// that is no JSON is shown and its error kept (the first one); a line of
// a type this dpulab does not know is skipped silently.
func TestBenchOutput(t *testing.T) {
	var o BenchOutput
	var shown []string
	show := func(l runner.Line) { shown = append(shown, l.Text) }
	var line strings.Builder
	if err := benchwire.Encode(&line, &benchwire.Sample{Run: 1, T: 2, OpsPerSec: 1000}); err != nil {
		t.Fatal(err)
	}
	ev := o.Take(runner.Line{Stream: runner.Stdout, Text: strings.TrimSpace(line.String())}, show)
	if s, ok := ev.(*benchwire.Sample); !ok || s.Run != 1 || s.T != 2 || s.OpsPerSec != 1000 {
		t.Fatalf("a sample line gave %#v", ev)
	}
	if ev := o.Take(runner.Line{Stream: runner.Stdout, Text: `{"type":"from_a_newer_bench"}`}, show); ev != nil || len(shown) != 0 || o.Err() != nil {
		t.Fatalf("an unknown type: event %#v, shown %q, err %v", ev, shown, o.Err())
	}
	for _, bad := range []string{"not json", "{also not"} {
		if ev := o.Take(runner.Line{Stream: runner.Stdout, Text: bad}, show); ev != nil {
			t.Fatalf("%q gave %#v", bad, ev)
		}
	}
	if o.Err() == nil || !slices.Equal(shown, []string{"not json", "{also not"}) {
		t.Fatalf("bad lines: err %v, shown %q", o.Err(), shown)
	}
	first := o.Err()
	shown = nil
	var want []string
	for i := range BenchTailLines + 3 {
		l := strings.Repeat("e", i+1)
		if ev := o.Take(runner.Line{Stream: runner.Stderr, Text: l}, show); ev != nil {
			t.Fatalf("stderr gave %#v", ev)
		}
		want = append(want, l)
	}
	if !slices.Equal(shown, want) {
		t.Fatalf("stderr shown %q", shown)
	}
	if got := o.LastLines(); !slices.Equal(got, want[3:]) {
		t.Fatalf("tail %q, want the last %d: %q", got, BenchTailLines, want[3:])
	}
	if o.Err() != first {
		t.Fatalf("the error kept changed: %v, was %v", o.Err(), first)
	}
}
