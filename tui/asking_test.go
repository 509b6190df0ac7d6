package tui

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/results"
	"github.com/dpulab/dpulab/tui/pages/lab/runctl"
	"github.com/dpulab/dpulab/tui/session"
)

// writeConfirmLab writes a local lab whose second step asks the engine's
// confirm question and, confirmed, touches written; its cleanup touches
// cleaned.
func writeConfirmLab(t *testing.T, written, cleaned string) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "confirm-step")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"lab.yaml": fmt.Sprintf(`id: confirm-step
title: Confirm step
summary: A step that asks before it runs.
duration: 1m
roles:
  local: This machine.
steps:
  - id: intro
    title: About
    kind: read
    doc: doc.md
  - id: write
    title: Write the marker
    kind: run
    doc: doc.md
    confirm: Write the marker file?
    run:
      - touch %s
  - id: cleanup
    title: Clean up
    kind: cleanup
    doc: doc.md
    run:
      - touch %s
`, runner.Quote(written), runner.Quote(cleaned)),
		"doc.md": "# Confirm step\n\nA test lab.\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestEngineDialogThroughThePage drives a real engine's confirm question
// (a run step with confirm:, against this machine) through the lab page:
// answered yes, q over it (no: it shows again; yes: quit), esc, and
// Ctrl+C over it. Each case checks the screen, what the engine got (the
// step's command runs only on yes: its marker file) and that nothing is
// left running or open once the page is done.
func TestEngineDialogThroughThePage(t *testing.T) {
	const question = "Write the marker file?"
	for _, tc := range []struct {
		name string
		// act answers the open dialog; quits says the program ends.
		act   func(t *testing.T, tm *teatest.TestModel, s *streamTap)
		quits bool
		// yes: the engine got yes (the command ran); st: how the step
		// ended; by: what the run records as having left it ("" the page
		// stays).
		yes bool
		st  results.Status
		by  string
	}{
		{name: "answered yes", yes: true, st: results.Done, act: func(t *testing.T, tm *teatest.TestModel, s *streamTap) {
			answer(tm, "y")
			s.waitFor(t, "step 2 done")
		}},
		{name: "esc gives the safe answer", st: results.Failed, act: func(t *testing.T, tm *teatest.TestModel, s *streamTap) {
			press(tm, km.Cancel)
			// The engine got no: the step fails on it, nothing cancelled.
			s.waitFor(t, "step 2 failed", "not confirmed")
		}},
		// Quitting stops the step before its dialog gets the safe answer:
		// the step reads interrupted (by the quit), not refused.
		{name: "q over it, no, then yes", quits: true, st: results.Interrupted, by: runctl.ByQuitKey, act: func(t *testing.T, tm *teatest.TestModel, s *streamTap) {
			press(tm, km.Quit)
			s.waitFor(t, "Quit while a step runs?", "[y] Quit and clean up", "› [n] Keep running")
			answer(tm, "n")
			s.waitFor(t, question, "Yes, run it") // the engine's question again
			press(tm, km.Quit)
			s.waitFor(t, "Quit while a step runs?")
			answer(tm, "y")
		}},
		{name: "Ctrl+C over it", quits: true, st: results.Interrupted, by: "Ctrl+C in the TUI", act: func(t *testing.T, tm *teatest.TestModel, s *streamTap) {
			press(tm, km.ForceQuit)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			written := filepath.Join(t.TempDir(), "written")
			cleaned := filepath.Join(t.TempDir(), "cleaned")
			labs := writeConfirmLab(t, written, cleaned)
			work := t.TempDir()
			t.Setenv("XDG_DATA_HOME", work) // results go to work/dpulab/results
			app := testApp(Config{Catalog: &session.EngineCatalog{LabDirs: []string{labs}, StateDir: t.TempDir()}})
			tm := start(t, app, 120, 40)
			s := &streamTap{tm: tm}
			s.waitFor(t, "pick a lab", "Confirm step")
			press(tm, km.Filter)
			tm.Type("confirm-step")
			s.waitFor(t, "Filter: confirm-step")
			press(tm, km.Enter) // ends the filter
			press(tm, km.Enter) // opens the lab
			s.waitFor(t, "Step 1/3")
			press(tm, km.Next)
			s.waitFor(t, "Step 2/3")
			press(tm, km.Run)
			s.waitFor(t, question, "Yes, run it", "› [n]") // the safe choice preselected
			tc.act(t, tm, s)

			var a *App
			if tc.quits {
				tm.WaitFinished(t, teatest.WithFinalTimeout(60*time.Second))
				a = tm.FinalModel(t).(*App)
			} else {
				a = finish(t, tm)
			}
			page := a.Lab()
			if page == nil {
				t.Fatal("no lab page")
			}
			rc := page.RunState()
			if len(rc.Dialogs) != 0 || page.Prompt() != nil || page.Prompts() != nil {
				t.Errorf("dialogs left open: %v", rc.Dialogs)
			}
			if tc.quits {
				if rc.Phase != runctl.Left {
					t.Errorf("phase %v after quitting, want left", rc.Phase)
				}
			} else if rc.Phase == runctl.Asking || rc.Phase == runctl.AskQuit || rc.Running >= 0 || page.Running() >= 0 {
				t.Errorf("phase %v, running %d: want nothing running", rc.Phase, rc.Running)
			}
			st := page.Session().Steps()[1].Status
			if _, err := os.Stat(written); (err == nil) != tc.yes {
				t.Errorf("the step's command ran: %v, want %v (the engine's answer was not %s)", err == nil, tc.yes, map[bool]string{true: "yes", false: "the safe one"}[tc.yes])
			}
			if st != tc.st {
				t.Errorf("step 2 is %v, want %v", st, tc.st)
			}
			if !tc.quits {
				return
			}
			// The quit went through the lab's cleanup, which recorded how
			// the run was left.
			if _, err := os.Stat(cleaned); err != nil {
				t.Errorf("the lab's cleanup did not run: %v", err)
			}
			res, _ := filepath.Glob(filepath.Join(work, "dpulab", "results", "confirm-step", "*", "results.json"))
			if len(res) != 1 {
				t.Fatalf("want one results.json, got %v", res)
			}
			b, err := os.ReadFile(res[0])
			if err != nil {
				t.Fatal(err)
			}
			var r struct {
				Status        string `json:"status"`
				InterruptedBy string `json:"interrupted_by"`
			}
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			if r.InterruptedBy != tc.by || r.Status != string(results.RunInterrupted) {
				t.Errorf("results say %q, interrupted by %q; want interrupted by %q", r.Status, r.InterruptedBy, tc.by)
			}
		})
	}
}
