package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
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

// wrapPickerLab has a title wider than 80 columns, words ending in a
// marker, and a step over transport rdma, which a -tags nordma build
// lacks: its picker line carries the long reason first.
const wrapPickerLab = `id: wrap80picker
title: A lab whose title is much wider than an eighty column terminal can show on one line END-OF-TITLE
summary: the picker wraps it
duration: 1m
roles:
  local: this machine
steps:
  - id: deploy
    title: Start a server over RDMA
    kind: deploy
    group: local
    instances: 1
    port: 7990
    transport: rdma
`

// wrapBoothLab fails at a step whose command is wider than 80 columns: the
// booth shows the failure with nobody there to press w.
const wrapBoothLab = `id: wrap80booth
title: Wrapping at a booth
summary: a failing long command
duration: 1m
roles:
  local: this machine
steps:
  - id: long
    title: A long command that fails
    kind: run
    run:
      - echo alpha-bravo-charlie delta-echo-foxtrot golf-hotel-india juliet-kilo-lima mike-november-oscar papa-quebec-romeo sierra-tango-uniform END-OF-COMMAND; exit 3
`

func writeLab(t *testing.T, root, id, yaml string) {
	t.Helper()
	d := filepath.Join(root, id)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "lab.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWrapAt80x24Picker: at 80×24 the picker wraps a lab's title and its
// description (what cannot run here, first) and cuts neither with "…".
func TestWrapAt80x24Picker(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	// A build without the rdma transport (-tags nordma): the same long
	// reason on every machine, where the default build's depends on the
	// machine's RDMA device.
	bin := testpeer.DpulabTags(t, "nordma")
	dir := t.TempDir()
	labs := filepath.Join(dir, "labs")
	writeLab(t, labs, "wrap80picker", wrapPickerLab)
	s := newTmux(t, 80, 24, dir, []string{"XDG_STATE_HOME=" + filepath.Join(dir, "state"), "XDG_DATA_HOME=" + dir},
		bin, "--lab-dir", labs)
	s.waitFor(15*time.Second, "pick a lab")
	s.press(km.Filter)
	s.waitFor(5*time.Second, "Filter:")
	s.text("wrap80picker")
	s.press(km.Enter) // apply the filter
	// Applied (not typing): the selected lab is marked │.
	scr := s.waitFor(10*time.Second, "│ A lab whose title", "END-OF-TITLE")
	saveCapture(t, "picker-80x24.txt", scr)
	// The lab's lines (the list marks the selected one with │), run
	// together.
	var item []string
	for _, l := range strings.Split(scr, "\n") {
		if strings.HasPrefix(l, "│") {
			item = append(item, strings.TrimPrefix(l, "│"))
		}
	}
	words := strings.Join(strings.Fields(strings.Join(item, " ")), " ")
	for _, want := range []string{
		"A lab whose title is much wider than an eighty column terminal can show on one line END-OF-TITLE",
		"⚠ cannot run here: transport rdma is not in this build",
		"1 min",
	} {
		if !strings.Contains(words, want) {
			t.Errorf("the picker does not show %q whole:\n%s", want, scr)
		}
	}
	if strings.Contains(strings.Join(item, "\n"), "…") {
		t.Errorf("the picker cuts a lab's line at 80×24:\n%s", scr)
	}
	// The list's hint is one line; the reason whole, with what to do, is
	// behind the details key, wrapped and never cut.
	hint := 0
	for _, l := range item {
		if strings.Contains(l, "⚠") {
			hint++
		}
	}
	if hint != 1 || strings.Contains(words, "nordma") {
		t.Errorf("the picker's hint is not one short line:\n%s", scr)
	}
	s.press(km.Details)
	scr = s.waitFor(10*time.Second, "lab details", "END-OF-TITLE")
	saveCapture(t, "picker-details-80x24.txt", scr)
	words = strings.Join(strings.Fields(scr), " ")
	for _, want := range []string{
		"A lab whose title is much wider than an eighty column terminal can show on one line END-OF-TITLE",
		"⚠ cannot run here: transport rdma: RDMA is not in this build: it was built with -tags nordma",
		"use transport tcp",
	} {
		if !strings.Contains(words, want) {
			t.Errorf("the details do not show %q whole:\n%s", want, scr)
		}
	}
	if strings.Contains(scr, "…") {
		t.Errorf("the details cut a line at 80×24:\n%s", scr)
	}
	s.press(km.Quit)
	s.waitFor(30*time.Second, "DPULAB-EXITED:")
}

// TestWrapAt80x24Booth: a booth at 80×24 shows a failed step's command
// whole, wrapped, and no results path, while nobody can press w.
func TestWrapAt80x24Booth(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	bin := buildDpulab(t)
	dir := t.TempDir()
	labs := filepath.Join(dir, "labs")
	writeLab(t, labs, "wrap80booth", wrapBoothLab)
	data := filepath.Join(dir, "a-data-folder-with-a-rather-long-name", "and-one-more-level-below-it")
	s := newTmux(t, 80, 24, dir, []string{"XDG_STATE_HOME=" + filepath.Join(dir, "state"), "XDG_DATA_HOME=" + data},
		bin, "--lab-dir", labs, "--booth", "wrap80booth", "--booth-step-delay", "300ms")
	scr := s.waitFor(60*time.Second, "✘ failed", "exit 3")
	saveCapture(t, "booth-failure-80x24.txt", scr)
	// The failure box's lines, run together.
	var box strings.Builder
	for _, l := range strings.Split(scr, "\n") {
		if _, right, ok := strings.Cut(l, "│"); ok {
			box.WriteString(strings.TrimSpace(strings.Trim(strings.TrimSpace(right), "│╭╮╰╯─")))
		}
	}
	for _, w := range strings.Fields("alpha-bravo-charlie delta-echo-foxtrot golf-hotel-india juliet-kilo-lima mike-november-oscar papa-quebec-romeo sierra-tango-uniform END-OF-COMMAND;") {
		if !strings.Contains(box.String(), w) {
			t.Errorf("the booth's failure does not show the command's %q:\n%s", w, scr)
		}
	}
	if strings.Contains(scr, "a-data-folder-with") {
		t.Errorf("the booth shows a results path:\n%s", scr)
	}
	noTraineeHints(t, scr)
	s.press(km.ForceQuit)
	s.waitFor(60*time.Second, "DPULAB-EXITED:")
}
