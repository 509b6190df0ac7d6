//go:build unix

package steps

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/steps/results"
)

// loadLab writes a lab.yaml into a temp dir and loads it with the real
// loader, so tests exercise the same parsing as `dpulab run --lab-dir`.
func loadLab(t testing.TB, yaml string) *labs.Lab {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "lab.yaml"), []byte(strings.TrimLeft(yaml, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := labs.Load(os.DirFS(dir), ".")
	if err != nil {
		t.Fatalf("test lab does not load: %v", err)
	}
	return l
}

// recorder collects events.
type recorder struct {
	mu  sync.Mutex
	evs []Event
	// onPrompt answers prompts; nil refuses.
	onPrompt func(Prompt)
}

func (r *recorder) emit(ev Event) {
	r.mu.Lock()
	r.evs = append(r.evs, ev)
	r.mu.Unlock()
	if p, ok := ev.(Prompt); ok {
		if r.onPrompt != nil {
			r.onPrompt(p)
		} else {
			p.Reply(Answer{Choice: "no"})
		}
	}
}

func (r *recorder) events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.evs...)
}

// finished returns the StepFinished events by step id (last wins).
func (r *recorder) finished() map[string]StepFinished {
	out := map[string]StepFinished{}
	for _, ev := range r.events() {
		if f, ok := ev.(StepFinished); ok {
			out[f.Step] = f
		}
	}
	return out
}

// output returns every output line's text.
func (r *recorder) output() []string {
	var out []string
	for _, ev := range r.events() {
		if o, ok := ev.(Output); ok {
			out = append(out, o.Line.Text)
		}
	}
	return out
}

// newEngine makes an engine with temp state and results dirs.
func newEngine(t testing.TB, lab *labs.Lab, opts Options, rec *recorder) *Engine {
	t.Helper()
	if opts.StateDir == "" {
		opts.StateDir = t.TempDir()
	}
	if opts.ResultsDir == "" {
		opts.ResultsDir = filepath.Join(t.TempDir(), "results")
	}
	if rec != nil {
		opts.Emit = rec.emit
	}
	e, err := New(lab, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	// Test labs without a cleanup step leave their working directory under
	// /tmp; the quickstart tests check that cleanup removed theirs before
	// this runs.
	t.Cleanup(func() { os.RemoveAll(e.workdir()) })
	return e
}

func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// writeAndLoadResults writes e's results folder now, as after a bench run,
// and reads results.json back.
func writeAndLoadResults(t testing.TB, e *Engine) *results.Results {
	t.Helper()
	e.mu.Lock()
	err := e.writeResultsLocked(false)
	dir := e.resDir
	e.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	r, err := results.LoadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
