package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// wrapLab has one step with a command far wider than 80 columns, whose
// words end in a marker: at 80×24 the commands pane must show all of it.
const wrapLab = `id: wrap80
title: Wrapping at 80 columns
summary: a long command and a long results path
duration: 1m
roles:
  local: this machine
steps:
  - id: long
    title: A long command
    kind: run
    run:
      - echo alpha-bravo-charlie delta-echo-foxtrot golf-hotel-india juliet-kilo-lima mike-november-oscar papa-quebec-romeo sierra-tango-uniform END-OF-COMMAND
`

// joined is a screen's lines run together (trailing blanks dropped), so a
// wrapped path or command reads whole again.
func joined(scr string) string {
	var b strings.Builder
	for _, l := range strings.Split(scr, "\n") {
		b.WriteString(strings.TrimRight(l, " "))
	}
	return b.String()
}

// TestWrapAt80x24 runs a lab in an 80×24 terminal with a results folder
// whose path is longer than the screen is wide: the command and the
// report's path wrap, and are never cut with "…".
func TestWrapAt80x24(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	bin := buildDpulab(t)
	dir := t.TempDir()
	labDir := filepath.Join(dir, "labs", "wrap80")
	if err := os.MkdirAll(labDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(labDir, "lab.yaml"), []byte(wrapLab), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "a-data-folder-with-a-rather-long-name", "and-one-more-level-below-it")
	s := newTmux(t, 80, 24, dir, []string{"XDG_STATE_HOME=" + filepath.Join(dir, "state"), "XDG_DATA_HOME=" + data},
		bin, "--lab-dir", filepath.Dir(labDir))
	s.waitFor(15*time.Second, "pick a lab")
	s.press(km.Filter)
	s.waitFor(5*time.Second, "Filter:")
	s.text("wrap80")
	s.waitFor(5*time.Second, "Filter: wrap80")
	s.press(km.Enter)
	s.press(km.Enter)
	scr := s.waitFor(10*time.Second, "Step 1/1", "COMMAND")
	// The commands pane's lines, run together: every word of the command
	// is there (a line may break after a space or a hyphen).
	var pane strings.Builder
	for _, l := range strings.Split(scr, "\n") {
		if _, right, ok := strings.Cut(l, "│"); ok {
			pane.WriteString(strings.TrimSpace(right))
		}
	}
	for _, w := range strings.Fields("echo alpha-bravo-charlie delta-echo-foxtrot golf-hotel-india juliet-kilo-lima mike-november-oscar papa-quebec-romeo sierra-tango-uniform END-OF-COMMAND") {
		if !strings.Contains(pane.String(), w) {
			t.Errorf("the command's %q is not shown:\n%s", w, scr)
		}
	}
	s.press(km.Run)
	scr = s.waitFor(20*time.Second, "report.html")
	report := filepath.Join(data, "dpulab", "results", "wrap80")
	runs, _ := filepath.Glob(filepath.Join(report, "*"))
	if len(runs) != 1 {
		t.Fatalf("want one results folder under %s, found %v\n%s", report, runs, scr)
	}
	want := filepath.Join(runs[0], "report.html")
	if len(want) <= 80 {
		t.Fatalf("the test's path (%d columns) must be wider than the screen", len(want))
	}
	if !strings.Contains(joined(scr), want) {
		t.Errorf("the report's path %s is not shown whole at 80×24:\n%s", want, scr)
	}
	for _, l := range strings.Split(scr, "\n") {
		if strings.Contains(l, "…") && (strings.Contains(l, "results") || strings.Contains(l, "$ echo")) {
			t.Errorf("a line is cut: %q\n%s", l, scr)
		}
	}
	s.press(km.Quit)
	if end := s.waitFor(30*time.Second, "DPULAB-EXITED:"); !strings.Contains(end, "DPULAB-EXITED:0") {
		t.Errorf("dpulab exited badly:\n%s", end)
	}
}
