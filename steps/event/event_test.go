package event_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/steps/event"
	"github.com/dpulab/dpulab/steps/kind/kindtest"
	"github.com/dpulab/dpulab/steps/results"
)

// TestLiveEventsJSON: the live events keep their JSON as the engine's
// events had it (`dpulab run --json`, recordings): a Progress's durations
// in seconds named with their unit, a Sample's per-host and per-instance
// views left out when empty, and each one's type name.
func TestLiveEventsJSON(t *testing.T) {
	b, err := json.Marshal(event.Progress{Step: "s", Label: "tcp, run 1/3", Fraction: 0.5, Elapsed: 1500 * time.Millisecond, Remaining: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"elapsed_seconds":1.5`, `"remaining_seconds":2`, `"fraction":0.5`, `"label":"tcp, run 1/3"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("progress JSON %s lacks %s", b, want)
		}
	}
	if strings.Contains(string(b), "Elapsed") {
		t.Errorf("progress JSON %s carries the duration in nanoseconds too", b)
	}
	b, err = json.Marshal(event.Sample{Step: "s", Variant: "tcp", Run: 2, Point: results.Point{T: 1, OpsPerSec: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "clients") || strings.Contains(string(b), "targets") || !strings.Contains(string(b), `"run":2`) {
		t.Errorf("sample JSON %s: want run 2 and no empty per-host or per-instance views", b)
	}
	if k := (event.Progress{}).Kind(); k != "progress" {
		t.Errorf("Progress kind %q", k)
	}
	if k := (event.Sample{}).Kind(); k != "sample" {
		t.Errorf("Sample kind %q", k)
	}
}

// TestFakeEnvKeepsLiveEvents: a kind's test reads what it sent the
// dashboard from kindtest's fake Env, in order.
func TestFakeEnvKeepsLiveEvents(t *testing.T) {
	env := kindtest.New(&labs.Lab{ID: "x"})
	var em event.Emitter = env
	em.Emit(event.Sample{Step: "b", Run: 1})
	em.Emit(event.Progress{Step: "b", Fraction: 1})
	got := env.Events()
	if len(got) != 2 || got[0].Kind() != "sample" || got[1].(event.Progress).Fraction != 1 {
		t.Errorf("events %+v, want the sample then the progress", got)
	}
}
