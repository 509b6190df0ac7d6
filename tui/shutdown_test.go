package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/charmbracelet/x/exp/teatest"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/tui/session"
)

// writeLongLab writes a local lab whose second step asks for confirmation
// and then sleeps for an hour, and whose cleanup step touches marker.
func writeLongLab(t *testing.T, marker string) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "long-step")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"lab.yaml": fmt.Sprintf(`id: long-step
title: Long step
summary: A step that would run for an hour.
duration: 1h
roles:
  local: This machine.
steps:
  - id: intro
    title: About
    kind: read
    doc: doc.md
  - id: wait
    title: Wait an hour
    kind: run
    doc: doc.md
    confirm: Wait an hour?
    run:
      - echo waiting-an-hour && sleep 3600
  - id: cleanup
    title: Clean up
    kind: cleanup
    doc: doc.md
    run:
      - touch %s
`, runner.Quote(marker)),
		"doc.md": "# Long step\n\nA test lab.\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestShutdownStopsTheRunningStep ends the program the way an input error
// or a closed terminal does (the page never cleans up) while a step runs
// with a dialog open: App.Shutdown stops the step, answers the dialog and
// runs the lab's cleanup, instead of waiting for the step (an hour) or the
// engine's dialog bound (2 minutes) before the engine lets cleanup run.
func TestShutdownStopsTheRunningStep(t *testing.T) {
	for _, tc := range []struct {
		name string
		// open leaves the program with a step running and a dialog up.
		open func(t *testing.T, tm *teatest.TestModel, s *streamTap)
	}{
		{"the step's own confirmation open", func(t *testing.T, tm *teatest.TestModel, s *streamTap) {
			press(tm, km.Run)
			s.waitFor(t, "Wait an hour?")
		}},
		{"step running, quit dialog open", func(t *testing.T, tm *teatest.TestModel, s *streamTap) {
			press(tm, km.Run)
			s.waitFor(t, "Wait an hour?")
			answer(tm, "y")
			s.waitFor(t, "waiting-an-hour")
			press(tm, km.Quit)
			s.waitFor(t, "Quit while a step runs?")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "cleaned")
			labs := writeLongLab(t, marker)
			t.Chdir(t.TempDir()) // results/ goes here
			app := testApp(Config{Catalog: &session.EngineCatalog{LabDirs: []string{labs}, StateDir: t.TempDir()}})
			tm := start(t, app, 120, 40)
			s := &streamTap{tm: tm}
			s.waitFor(t, "pick a lab", "Long step")
			press(tm, km.Filter)
			tm.Type("long-step")
			s.waitFor(t, "Filter: long-step")
			press(tm, km.Enter) // ends the filter
			press(tm, km.Enter) // opens the lab
			s.waitFor(t, "Step 1/3")
			press(tm, km.Next)
			s.waitFor(t, "Step 2/3")
			tc.open(t, tm, s)

			// The program ends without the page's cleanup.
			a := finish(t, tm)
			if a.Lab() == nil || a.Lab().Running() != 1 {
				t.Fatalf("the test must end the program while step 2 runs")
			}
			done := make(chan error, 1)
			go func() { done <- a.Shutdown(t.Context()) }()
			// A hang guard, not a timing assertion: the old code returned
			// only after the engine's 2-minute dialog bound or the hour.
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("Shutdown: %v", err)
				}
			case <-time.After(90 * time.Second):
				t.Fatal("Shutdown still waits for the running step after 90s")
			}
			if _, err := os.Stat(marker); err != nil {
				t.Fatalf("the lab's cleanup step did not run: %v", err)
			}
			if st := a.Lab().Session().Steps()[1].Status; st == results.Done {
				t.Errorf("the hour-long step reads %v after Shutdown", st)
			}
		})
	}
}
