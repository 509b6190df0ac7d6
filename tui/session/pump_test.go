package session

import (
	"strings"
	"testing"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps"
)

func TestPumpCoalesces(t *testing.T) {
	p := NewPump()
	for i := 0; i < 1000; i++ {
		p.Emit(steps.Output{Line: runner.Line{Text: "x"}})
	}
	batch := p.Wait()().(EventsMsg)
	if len(batch) != 1000 {
		t.Fatalf("batch has %d events, want all 1000 in one message", len(batch))
	}
}

func TestPumpDropsOnlyOutput(t *testing.T) {
	p := NewPump()
	p.Emit(steps.Sample{Step: "bench"})
	p.Emit(steps.Prompt{Step: "deploy"})
	for i := 0; i < 3*maxPending; i++ {
		p.Emit(steps.Output{Line: runner.Line{Text: "noise"}})
	}
	p.Emit(steps.StepFinished{Step: "bench"})
	batch := p.Wait()().(EventsMsg)
	var samples, prompts, finished int
	note := ""
	for _, ev := range batch {
		switch e := ev.(type) {
		case steps.Sample:
			samples++
		case steps.Prompt:
			prompts++
		case steps.StepFinished:
			finished++
		case steps.Output:
			if strings.Contains(e.Line.Text, "dropped") {
				note = e.Line.Text
			}
		}
	}
	if samples != 1 || prompts != 1 || finished != 1 {
		t.Fatalf("samples %d prompts %d finished %d: only output may be dropped", samples, prompts, finished)
	}
	if len(batch) > maxPending+10 || note == "" {
		t.Fatalf("batch of %d events, note %q: want it bounded and the drop reported", len(batch), note)
	}
}
