//go:build unix

package steps

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/steps/results"
)

// readReport returns report.md and report.html of a results folder.
func readReport(t *testing.T, dir string) (md, html string) {
	t.Helper()
	m, err := os.ReadFile(filepath.Join(dir, results.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	h, err := os.ReadFile(filepath.Join(dir, results.ReportHTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	return string(m), string(h)
}

// TestLeaveRecordsInterrupted is the TUI's quit between steps: the run is
// recorded as interrupted, by what the TUI says, in results.json and both
// reports; leaving a lab where nothing ran writes no folder; leaving a
// run that already wrote its end changes nothing.
func TestLeaveRecordsInterrupted(t *testing.T) {
	dir := t.TempDir()
	lab := counterLab(t, dir)
	ctx := testCtx(t, 30*time.Second)

	t.Run("between steps", func(t *testing.T) {
		e := newEngine(t, lab, Options{}, nil)
		if got := e.RunStep(ctx, 0); got != results.Done {
			t.Fatalf("step one: %v", got)
		}
		if err := e.Cleanup(ctx); err != nil {
			t.Fatal(err)
		}
		got, err := e.Leave(ctx, "q in the TUI")
		if err != nil || got != e.ResultsDir() {
			t.Fatalf("Leave = %q, %v; want the results folder", got, err)
		}
		r, err := results.LoadResults(got)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != results.RunInterrupted || r.InterruptedBy != "q in the TUI" || r.WriterPID != 0 {
			t.Errorf("results: status %q by %q writer %d; want interrupted by q in the TUI, no writer", r.Status, r.InterruptedBy, r.WriterPID)
		}
		md, html := readReport(t, got)
		want := "INTERRUPTED by q in the TUI before its last step"
		if !strings.Contains(md, want) || !strings.Contains(html, want) {
			t.Errorf("reports do not say %q:\n%s", want, md)
		}
		if strings.Contains(md, "NOT FINISHED") || strings.Contains(md, "killed") {
			t.Errorf("report.md calls a quit a kill:\n%s", md)
		}
	})

	t.Run("nothing ran", func(t *testing.T) {
		e := newEngine(t, lab, Options{Restart: true}, nil)
		if err := e.Cleanup(ctx); err != nil {
			t.Fatal(err)
		}
		if got, err := e.Leave(ctx, "q in the TUI"); got != "" || err != nil {
			t.Errorf("Leave with no step run = %q, %v; want nothing written", got, err)
		}
		if _, err := os.Stat(filepath.Join(e.ResultsDir(), results.ResultsFile)); !os.IsNotExist(err) {
			t.Errorf("a results.json was written for a lab where nothing ran (stat: %v)", err)
		}
	})

	t.Run("after the end", func(t *testing.T) {
		os.WriteFile(filepath.Join(dir, "flag"), nil, 0o644)
		defer os.Remove(filepath.Join(dir, "flag"))
		e := newEngine(t, lab, Options{Restart: true}, nil)
		if err := e.Run(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Leave(ctx, "q in the TUI"); err != nil {
			t.Fatal(err)
		}
		r, err := results.LoadResults(e.ResultsDir())
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != results.RunComplete || r.InterruptedBy != "" {
			t.Errorf("a finished run left with q reads %q by %q; want complete", r.Status, r.InterruptedBy)
		}
	})
}

// TestInterruptionCause is a signal mid-step: the context's cause names
// it in results.json and the reports, with the step it stopped.
func TestInterruptionCause(t *testing.T) {
	dir := t.TempDir()
	lab := counterLab(t, dir)
	e := newEngine(t, lab, Options{Vars: map[string]string{"sleep": "30"}}, nil)
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() {
		for !strings.Contains(readLog(t, dir), "two") {
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond)
		cancel(Interruption{By: "SIGTERM"})
	}()
	if err := e.Run(ctx); err == nil {
		t.Fatal("an interrupted run returned no error")
	}
	r, err := results.LoadResults(e.ResultsDir())
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != results.RunInterrupted || r.FailedStep != "two" || r.InterruptedBy != "SIGTERM" {
		t.Errorf("results: %q at %q by %q; want interrupted at two by SIGTERM", r.Status, r.FailedStep, r.InterruptedBy)
	}
	md, _ := readReport(t, e.ResultsDir())
	if want := "INTERRUPTED by SIGTERM during step two"; !strings.Contains(md, want) {
		t.Errorf("report.md does not say %q:\n%s", want, md)
	}
}

// deadPID is the pid of a process that has ended.
func deadPID(t *testing.T) int {
	t.Helper()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	return c.Process.Pid
}

// TestResumeKeepsAttemptsApart is a run killed after a bench, then
// resumed: the killed attempt is listed as such, its figures are labelled
// as an earlier attempt's in results.json, report.md and report.html
// until the step runs again, and then only the new attempt's are shown.
func TestResumeKeepsAttemptsApart(t *testing.T) {
	dir := t.TempDir()
	lab := counterLab(t, dir)
	stateDir, resDir := t.TempDir(), filepath.Join(t.TempDir(), "results")
	ctx := testCtx(t, 30*time.Second)
	e := newEngine(t, lab, Options{StateDir: stateDir, ResultsDir: resDir}, nil)
	if got := e.RunStep(ctx, 0); got != results.Done {
		t.Fatalf("step one: %v", got)
	}
	old := results.Compare{Step: "two", Title: "Two", Variants: []results.VariantResult{{Label: "base", Points: []results.SweepPoint{{Runs: []results.RunResult{{OpsPerSec: 111}}}}}}}
	e.mu.Lock()
	e.upsertBenchLocked(old)
	e.mu.Unlock()
	first := writeAndLoadResults(t, e)
	if first.Status != results.RunRunning || first.WriterPID != os.Getpid() || first.Benches[0].Attempt != 1 {
		t.Fatalf("mid-run file: status %q writer %d attempt %d", first.Status, first.WriterPID, first.Benches[0].Attempt)
	}
	// The process "dies" here: its file names a writer that is gone.
	first.WriterPID = deadPID(t)
	if err := results.WriteResults(resDir, first); err != nil {
		t.Fatal(err)
	}
	if got := first.State(); got != results.RunKilled {
		t.Errorf("a running file whose writer is gone reads %q, want killed", got)
	}
	r, _ := results.LoadResults(resDir)
	if d := r.Describe(); !strings.HasPrefix(d, "KILLED") {
		t.Errorf("Describe of a killed run = %q", d)
	}

	e2 := newEngine(t, lab, Options{StateDir: stateDir, ResultsDir: resDir}, nil)
	got := e2.Results()
	if len(got.Attempts) != 1 || got.Attempts[0].Status != results.RunKilled || got.Attempt() != 2 {
		t.Fatalf("resumed: attempts %+v, current %d; want one killed attempt, current 2", got.Attempts, got.Attempt())
	}
	note := got.EarlierAttempt(&got.Benches[0])
	if !strings.Contains(note, "attempt 1 of 2") || !strings.Contains(note, "killed") {
		t.Errorf("earlier bench note = %q", note)
	}
	e2.mu.Lock()
	err := e2.writeResultsLocked(false)
	e2.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	md, html := readReport(t, resDir)
	for name, s := range map[string]string{"report.md": md, "report.html": html} {
		if !strings.Contains(s, "EARLIER ATTEMPT: measured by attempt 1 of 2") || !strings.Contains(s, "killed (it never finished)") {
			t.Errorf("%s does not label the earlier attempt's figures:\n%s", name, s)
		}
	}
	// The step runs again: its bench is the new attempt's, unlabelled.
	e2.mu.Lock()
	e2.upsertBenchLocked(results.Compare{Step: "two", Title: "Two", Variants: []results.VariantResult{{Label: "base", Points: []results.SweepPoint{{Runs: []results.RunResult{{OpsPerSec: 222}}}}}}})
	e2.mu.Unlock()
	got = e2.Results()
	if len(got.Benches) != 1 || got.Benches[0].Attempt != 2 || got.EarlierAttempt(&got.Benches[0]) != "" {
		t.Errorf("after the step ran again: %+v", got.Benches)
	}
	if got.Benches[0].Variants[0].Points[0].Runs[0].OpsPerSec != 222 {
		t.Errorf("the earlier attempt's figure is still shown: %+v", got.Benches[0].Variants[0].Points[0].Runs)
	}
}

// TestRestartMarksKilledRun is --restart after a killed run: the killed
// run's folder, left saying "running", is rewritten as killed.
func TestRestartMarksKilledRun(t *testing.T) {
	dir := t.TempDir()
	lab := counterLab(t, dir)
	stateDir := t.TempDir()
	ctx := testCtx(t, 30*time.Second)
	resA := filepath.Join(t.TempDir(), "a")
	e := newEngine(t, lab, Options{StateDir: stateDir, ResultsDir: resA}, nil)
	e.RunStep(ctx, 0)
	r := writeAndLoadResults(t, e)
	r.WriterPID = deadPID(t)
	if err := results.WriteResults(resA, r); err != nil {
		t.Fatal(err)
	}
	newEngine(t, lab, Options{StateDir: stateDir, Restart: true}, nil)
	got, err := results.LoadResults(resA)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != results.RunKilled {
		t.Errorf("the killed run's folder says %q, want killed", got.Status)
	}
	md, _ := readReport(t, resA)
	if !strings.Contains(md, "KILLED: the run never finished") {
		t.Errorf("its report.md was not rendered again:\n%s", md)
	}
}
