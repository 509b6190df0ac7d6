package tui

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/steps/results"
)

// TestTmuxReplayPartEmulation replays the shipped quickstart recording (a
// measured TCP against Unix socket compare beside an emulated offload) at
// 80×24: the banner calls it a PART EMULATION and names which benches are
// emulated and which measured, never an EMULATION as a whole; the status
// line says what the figures shown are, measured during the measured bench
// and EMULATION during the offload one, as the live run does.
func TestTmuxReplayPartEmulation(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	bin := buildDpulab(t)
	dir := t.TempDir()
	s := newTmux(t, 80, 24, dir, nil, bin, "replay", "--speed", "100ms", "quickstart-offload-emulation")
	scr := s.waitFor(15*time.Second, "REPLAY of a PART EMULATION (offload emulated; bench, compare", "second ", " (measured) · ")
	flat := strings.Join(strings.Fields(scr), " ")
	if !strings.Contains(flat, "(offload emulated; bench, compare measured)") || strings.Contains(scr, "REPLAY of an EMULATION") {
		t.Fatalf("the banner mislabels a part emulation:\n%s", scr)
	}
	scr = s.waitFor(60*time.Second, " (EMULATION) · ")
	if !strings.Contains(scr, "REPLAY of a PART EMULATION") {
		t.Fatalf("the banner changed during the emulated bench:\n%s", scr)
	}
	s.press(km.Quit)
	if end := s.waitFor(15*time.Second, "DPULAB-EXITED:"); !strings.Contains(end, "DPULAB-EXITED:0") {
		t.Fatalf("replay exited badly:\n%s", end)
	}
}

// TestTmuxCompareLegendWhole: the compare table's legend at 80×24 is the
// reports' (results.Legend), so it explains the "!" mark, and it wraps
// rather than being cut with "…".
func TestTmuxCompareLegendWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	bin := buildDpulab(t)
	dir := t.TempDir()
	s := newTmux(t, 80, 24, dir, nil, bin, "replay", "--speed", "1h", "quickstart-offload-emulation")
	s.waitFor(15*time.Second, "REPLAY of a PART EMULATION")
	s.press(km.SwitchPane)
	scr := s.waitFor(15*time.Second, "metric", "! saturated host: no verdict")
	flat := strings.Join(strings.Fields(scr), " ")
	if !strings.Contains(flat, results.Legend) {
		t.Errorf("the compare table's legend is not results.Legend whole:\n%s", scr)
	}
	for _, l := range strings.Split(scr, "\n") {
		if strings.Contains(l, "Welch") && strings.Contains(l, "…") {
			t.Errorf("the legend is cut: %q", l)
		}
	}
	s.press(km.Quit)
	s.waitFor(15*time.Second, "DPULAB-EXITED:")
}

// cutLineLab prints a bench-like line far wider than the output pane at
// 80×24, then keeps the step running so that the line stays on screen.
const cutLineLab = `id: cutline
title: A long output line
summary: one line wider than the pane
duration: 1m
roles:
  local: this machine
steps:
  - id: long
    title: Print a long line
    kind: run
    run:
      - 'echo "bench run 1/3: 246,041 ops/s, avg 1.033 ms, p99 11.759 ms (SATURATED SHARED HOST: the limit) END-OF-LINE"; sleep 60'
`

// TestTmuxOutputCutLineEndsInEllipsis: at 80×24 a line wider than the
// output pane ends in "…" where it is cut, so that it is seen to go on
// (the booth: nobody is there to press w, which shows it whole).
func TestTmuxOutputCutLineEndsInEllipsis(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	bin := buildDpulab(t)
	dir := t.TempDir()
	labs := filepath.Join(dir, "labs")
	writeLab(t, labs, "cutline", cutLineLab)
	s := newTmux(t, 80, 24, dir, []string{"XDG_STATE_HOME=" + filepath.Join(dir, "state"), "XDG_DATA_HOME=" + dir},
		bin, "--lab-dir", labs, "--booth", "cutline", "--booth-step-delay", "300ms")
	scr := s.waitFor(60*time.Second, "local │ bench run 1/3")
	for _, l := range strings.Split(scr, "\n") {
		if strings.Contains(l, "local │ bench run 1/3") {
			if !strings.HasSuffix(strings.TrimRight(l, " "), "…") || strings.Contains(l, "END-OF-LINE") {
				t.Errorf("a line cut to the pane does not end in …: %q\n%s", l, scr)
			}
		}
	}
	s.press(km.ForceQuit)
	s.waitFor(60*time.Second, "DPULAB-EXITED:")
}

// TestTmuxCompareChartsNameEverySeries: at 80×24 the charts of the
// quickstart's emulated offload compare name all three series (the title
// says EMULATION once; three tags would cut the last name to "■ x …"),
// and the warnings' pointer to the table is not wrapped into a stray
// "they mean)" line.
func TestTmuxCompareChartsNameEverySeries(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	bin := buildDpulab(t)
	dir := t.TempDir()
	s := newTmux(t, 80, 24, dir, nil, bin, "replay", "--speed", "1h", "quickstart-offload-emulation")
	s.waitFor(15*time.Second, "REPLAY of a PART EMULATION")
	s.press(km.SwitchPane)
	s.press(km.Tab2)
	scr := s.waitFor(15*time.Second, "[2 charts]", "host does it all", "partial offload", "full offload")
	if !strings.Contains(scr, "EMULATION Compare:") {
		t.Errorf("the charts' title does not say EMULATION:\n%s", scr)
	}
	for _, l := range strings.Split(scr, "\n") {
		if strings.Contains(l, "■") && strings.Contains(l, "…") {
			t.Errorf("a legend is cut: %q\n%s", l, scr)
		}
		if strings.TrimSpace(l) == "they mean)" {
			t.Errorf("a stray fragment under the title:\n%s", scr)
		}
	}
	s.press(km.Quit)
	s.waitFor(15*time.Second, "DPULAB-EXITED:")
}
