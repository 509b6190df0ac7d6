package tui

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/dpulab/dpulab/tui/pages/picker"
	"github.com/dpulab/dpulab/tui/session"
	"github.com/dpulab/dpulab/tui/session/sessiontest"
)

// writeDeployLab writes a small local lab that deploys two servers on
// port and port+1, then cleans up, and returns the folder holding it.
func writeDeployLab(t *testing.T, port int) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "finish-me")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"lab.yaml": fmt.Sprintf(`id: finish-me
title: Finish me
summary: Two servers, then cleanup.
duration: 1m
roles:
  local: This machine.
steps:
  - id: intro
    title: About
    kind: read
    doc: doc.md
  - id: deploy
    title: Start two servers
    kind: deploy
    doc: doc.md
    group: local
    instances: "2"
    port: "%d"
    transport: tcp
    bind: 127.0.0.1
  - id: check
    title: Look around
    kind: run
    doc: doc.md
    run:
      - echo looked-around
  - id: cleanup
    title: Stop the servers
    kind: cleanup
    doc: doc.md
    run:
      - "true"
`, port),
		"doc.md": "# Finish me\n\nA test lab.\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// answers reports whether something accepts connections on 127.0.0.1:port.
func answers(port int) bool {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 200*time.Millisecond)
	if err == nil {
		c.Close()
	}
	return err == nil
}

// TestFinishedLabOpensForReview walks a lab to its end with the real engine
// (servers deployed, then cleaned up), goes back to the picker and opens it
// again: the picker says it is done, not "resume at step 2/4", and opening
// it shows the finished run — every step ✔ — without deploying anything;
// only R starts it over.
func TestFinishedLabOpensForReview(t *testing.T) {
	if testing.Short() {
		t.Skip("builds dpulab and deploys servers; skipped in -short mode")
	}
	bin := buildDpulab(t)
	port := freePorts(t, 2)
	labs := writeDeployLab(t, port)
	t.Chdir(t.TempDir()) // results/ goes here
	cat := &session.EngineCatalog{LabDirs: []string{labs}, StateDir: t.TempDir(), Binary: bin}
	app := testApp(Config{Catalog: cat})
	tm := start(t, app, 120, 40)
	s := &streamTap{tm: tm}
	s.waitFor(t, "pick a lab", "Finish me")
	press(tm, km.Filter)
	tm.Type("finish-me")
	s.waitFor(t, "Filter: finish-me")
	press(tm, km.Enter)
	press(tm, km.Enter)
	s.waitFor(t, "Step 1/4")
	press(tm, km.RunAll) // run all
	s.waitFor(t, "results written, report:")
	// A lab without a bench stays on its steps view (no empty compare).
	press(tm, km.Back)
	s.waitFor(t, "done · enter to review, R to start over")
	if answers(port) || answers(port+1) {
		t.Fatal("a server still answers after the lab's cleanup")
	}

	// Open it again: review, not a new run.
	press(tm, km.Filter)
	tm.Type("finish-me")
	s.waitFor(t, "Filter: finish-me")
	press(tm, km.Enter)
	press(tm, km.Enter)
	s.waitFor(t, "this lab is done", "R starts it over")
	press(tm, km.Run)    // would run step 1
	press(tm, km.RunAll) // would run everything
	s.waitFor(t, "this run is finished: R starts the lab over")
	if answers(port) || answers(port+1) {
		t.Fatal("opening a finished lab deployed its servers again")
	}
	// Start over: a new run, every step pending.
	press(tm, km.Restart)
	s.waitFor(t, "Step 1/4", "[read · pending]")
	a := finish(t, tm)
	l := a.Lab()
	if l == nil || l.Review() {
		t.Fatal("R must open a new run of the lab, not the review")
	}
	for i, st := range l.Steps() {
		if st.Status != results.Pending {
			t.Errorf("after starting over step %d is %v, want pending", i+1, st.Status)
		}
	}
	if err := a.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// TestPickerSaysDone: a finished lab reads done in the picker, however its
// saved steps ended (a cleanup that once set deploy back to pending).
func TestPickerSaysDone(t *testing.T) {
	for _, li := range []session.LabInfo{
		{Title: "recorded finished", Steps: 9, ResumeAt: 9, Finished: true},
		{Title: "all steps done", Steps: 9, ResumeAt: 9},
	} {
		d := picker.Describe(li)
		if !strings.Contains(d, "done · enter to review, R to start over") || strings.Contains(d, "resume") {
			t.Errorf("%s: %q", li.Title, d)
		}
	}
	if d := picker.Describe(session.LabInfo{Steps: 9, ResumeAt: 4}); !strings.Contains(d, "resume at step 5/9") {
		t.Errorf("unfinished: %q", d)
	}
}

// TestReviewRunsNothing: on a finished lab opened without R, the page's
// run, run-all, retry and skip keys reach no step; R opens it from the
// start.
func TestReviewRunsNothing(t *testing.T) {
	f := quickstartFake()
	f.LabInfo.Finished = true
	for i := range f.Script {
		f.Script[i].Info.Status = results.Done
	}
	tm, app := openQuickstartAt(t, f, "this lab is done")
	if !app.Lab().Review() {
		t.Fatal("a finished lab must open for review")
	}
	press(tm, km.Run, km.RunAll, km.Retry, km.Skip)
	waitFor(t, tm, "this run is finished")
	press(tm, km.Restart)
	waitFor(t, tm, "[read · pending]")
	a := finish(t, tm)
	if len(f.Ran) != 0 || len(f.Skipped) != 0 {
		t.Fatalf("review ran steps %v and skipped %v, want none", f.Ran, f.Skipped)
	}
	if a.Lab().Review() {
		t.Fatal("R must start the lab over")
	}
	v := ansi.Strip(a.View())
	if strings.Contains(v, "this lab is done") {
		t.Errorf("the new run still reads done:\n%s", v)
	}
}

// openQuickstartAt opens f from the picker and waits for want.
func openQuickstartAt(t *testing.T, f *sessiontest.Fake, want string) (*teatest.TestModel, *App) {
	t.Helper()
	app := testApp(Config{Catalog: &sessiontest.Catalog{Fakes: []*sessiontest.Fake{f}}})
	tm := start(t, app, 100, 30)
	waitFor(t, tm, "pick a lab")
	press(tm, km.Enter)
	waitFor(t, tm, want)
	return tm, app
}
