package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// boothLab is a short compare for the booth's end-to-end test: one
// instance of the bundled server, TCP loopback against a Unix socket, two
// one-second runs a side (so that each delta has its significance).
const boothLab = `id: boothdemo
title: "Booth demo: TCP loopback against a Unix socket"
summary: A short compare for booth mode's end-to-end test.
duration: 1m
roles:
  local: This machine.
variables:
  port:
    type: int
    default: %d
    min: 1024
    max: 65000
    description: Port of the first instance.
steps:
  - id: welcome
    title: What this lab does
    kind: read
    doc: welcome.md
  - id: deploy
    title: Start the servers
    kind: deploy
    doc: welcome.md
    group: local
    instances: 1
    port: "{{.vars.port}}"
    config: assets/redis.conf.tmpl
    transport: unix
    bind: 127.0.0.1
  - id: compare
    title: Compare TCP loopback with a Unix socket
    kind: compare
    doc: welcome.md
    target: local
    clients: 2
    pipeline: 4
    key_maximum: 1000
    warmup: 0s
    duration: 1s
    runs: 2
    variants:
      - label: TCP loopback
        transport: tcp
      - label: Unix socket
        transport: unix
  - id: cleanup
    title: Stop the servers
    kind: cleanup
    doc: welcome.md
    run:
      - "true"
`

// TestEndToEndBooth runs the real binary in booth mode in tmux at 100×30:
// the loop runs a real compare on this machine, then its results cycle on
// a timer: the headline (the deltas of TPS, network CPU and p99 in big
// digits, each with its significance), the live dashboard, the compare
// table and the charts, each with the indicator of what comes next. No
// screen shows a trainee's key hint. Ctrl+C quits; the loop's results
// folder is marked as the booth's.
func TestEndToEndBooth(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	bin := buildDpulab(t)
	dir := t.TempDir()
	labs := filepath.Join(dir, "labs", "boothdemo")
	if err := os.MkdirAll(labs, 0o755); err != nil {
		t.Fatal(err)
	}
	port := freePorts(t, 2)
	if err := os.WriteFile(filepath.Join(labs, "lab.yaml"), []byte(fmt.Sprintf(boothLab, port)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(labs, "welcome.md"), []byte("# Booth demo\n\nTwo paths to the same server, compared.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newTmux(t, 100, 30, dir, []string{"XDG_STATE_HOME=" + filepath.Join(dir, "state"), "XDG_DATA_HOME=" + dir},
		bin, "--lab-dir", filepath.Dir(labs), "--booth", "boothdemo",
		"--booth-step-delay", "300ms", "--booth-hold", "60s", "--booth-cycle", "4s")

	first := s.waitFor(20*time.Second, "BOOTH", `next: step 1 "What this lab does"`)
	noTraineeHints(t, first)
	dash := s.waitFor(90*time.Second, "Live bench: compare")
	noTraineeHints(t, dash)

	head := s.waitFor(120*time.Second, "[headline]", "next: live dashboard in", "Unix socket against TCP loopback (baseline)")
	for _, want := range []string{"TPS", "network CPU %", "p99 latency ms"} {
		if !strings.Contains(head, want) {
			t.Errorf("the headline lacks %q:\n%s", want, head)
		}
	}
	// Each measured delta says its significance (results.Delta.Format),
	// in big digits drawn with blocks.
	if !regexp.MustCompile(`(better|worse), p[<=]|~ no significant|noise not measured|same|no verdict`).MatchString(head) {
		t.Errorf("the headline shows no delta with its significance:\n%s", head)
	}
	// A verdict (beyond the noise, on a host that was not saturated) in
	// big digits; else the two measured figures, each with its variant.
	if regexp.MustCompile(`(better|worse), p[<=]`).MatchString(head) {
		if !strings.ContainsAny(head, "█▀▄") {
			t.Errorf("the headline's digits are not big:\n%s", head)
		}
	} else if !strings.Contains(head, "TCP loopback: ") || !strings.Contains(head, "Unix socket: ") {
		t.Errorf("no verdict, and the headline does not show the measured figures:\n%s", head)
	}
	noTraineeHints(t, head)
	saveCapture(t, "booth-headline.txt", head)

	for _, screen := range []string{"[live dashboard]", "[compare table]", "[charts]"} {
		scr := s.waitFor(15*time.Second, screen, "next: ")
		noTraineeHints(t, scr)
		if screen == "[compare table]" && !strings.Contains(scr, "TCP loopback (baseline)") {
			t.Errorf("the compare table lacks its variants:\n%s", scr)
		}
	}
	s.waitFor(15*time.Second, "[headline]") // round again

	s.press(km.ForceQuit)
	end := s.waitFor(60*time.Second, "DPULAB-EXITED:")
	if !strings.Contains(end, "DPULAB-EXITED:0") {
		errOut, _ := os.ReadFile(filepath.Join(dir, "stderr.txt"))
		t.Fatalf("dpulab exited badly:\n%s\nstderr:\n%s", end, errOut)
	}
	marks, err := filepath.Glob(filepath.Join(dir, "dpulab", "results", "boothdemo", "*", ".dpulab-booth"))
	if err != nil || len(marks) != 1 {
		t.Fatalf("want the loop's results folder marked as the booth's, got %v (%v)", marks, err)
	}
}
