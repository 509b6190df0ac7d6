package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/textinput"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/steps/results"
)

// liveCaptions are the captions the metric table gives the dashboard's
// charts (results.MetricDescs' Live.Chart), longest first so that "host
// (ESXi) CPU (%)" is not also counted as "CPU (%)".
func liveCaptions() []string {
	var out []string
	seen := map[string]bool{}
	for _, d := range results.MetricDescs() {
		if d.Live != nil && !seen[d.Live.Chart] {
			seen[d.Live.Chart] = true
			out = append(out, d.Live.Chart)
		}
	}
	return out
}

// chartCaptions finds the dashboard's chart captions on a captured screen
// and, for each, whether the label came right before it.
func chartCaptions(scr, label string) (found []string, unlabelled []string) {
	for _, c := range liveCaptions() {
		n := strings.Count(scr, c)
		if n == 0 {
			continue
		}
		found = append(found, c)
		if strings.Count(scr, label+" · "+c) != n {
			unlabelled = append(unlabelled, c)
		}
	}
	return found, unlabelled
}

// TestTmuxDashboardEmulationLabels runs the real quickstart in the TUI at
// 80×24, as root (its offload step builds network namespaces and a
// firewall), and reads the live dashboard twice: during the TCP against
// Unix socket compare, real measurements, no EMULATION anywhere on the
// screen; during the offload compare, whose variants are emulated paths,
// EMULATION before the title and on every chart's caption, and on the
// status line. The label comes from the engine's events (results.Figures),
// so this is the promise kept end to end.
func TestTmuxDashboardEmulationLabels(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	if os.Geteuid() != 0 {
		if os.Getenv("DPULAB_REQUIRE_PEERS") == "1" {
			t.Fatal("the quickstart's emulated offload step needs root (network namespaces, nftables); DPULAB_REQUIRE_PEERS=1")
		}
		t.Skip("the quickstart's emulated offload step needs root (network namespaces, nftables): run as root")
	}
	testpeer.Require(t, "tmux")
	bin := buildDpulab(t)
	dir := t.TempDir()
	port := freePorts(t, 8)
	s := newTmux(t, 80, 24, dir, []string{"XDG_STATE_HOME=" + filepath.Join(dir, "state"), "XDG_DATA_HOME=" + dir}, bin)

	s.waitFor(30*time.Second, "pick a lab", "Quickstart")
	s.press(km.Enter)
	s.waitFor(20*time.Second, "Step 1/")
	s.press(km.RunAll)
	s.waitFor(60*time.Second, "is yours to do")
	s.press(km.DoIt)
	s.waitFor(60*time.Second, "Variables for")
	// Fields: instances, port, clients, pipeline, data_size, ratio,
	// key_maximum, warmup, duration, runs, firewall_rules.
	s.press(textinput.DefaultKeyMap.DeleteBeforeCursor)
	s.text("2")
	s.press(km.NextField, textinput.DefaultKeyMap.DeleteBeforeCursor)
	s.text(fmt.Sprint(port))
	s.press(km.NextField, km.NextField, km.NextField, km.NextField, km.NextField, km.NextField, textinput.DefaultKeyMap.DeleteBeforeCursor)
	s.text("0s")
	s.press(km.NextField, textinput.DefaultKeyMap.DeleteBeforeCursor)
	// Long enough for a capture with data on every chart (the charts of
	// metrics never measured give way after a few seconds).
	s.text("6s")
	s.press(km.NextField, textinput.DefaultKeyMap.DeleteBeforeCursor)
	s.text("1")
	s.press(km.NextField, textinput.DefaultKeyMap.DeleteBeforeCursor)
	s.text("50")
	scr := s.waitFor(10*time.Second, "firewall_rules", "[50")
	if strings.Contains(scr, "✘") {
		t.Fatalf("the form refused a value:\n%s", scr)
	}
	s.press(km.Enter)
	s.waitFor(20*time.Second, "running step")
	s.press(km.Dashboard)

	// The real compare: TCP loopback against a Unix socket.
	real := s.waitFor(180*time.Second, "Live bench: compare", "ops/s")
	for i := 0; i < 10 && !strings.Contains(real, "TPS (ops/s)"); i++ {
		time.Sleep(time.Second)
		real = s.screen()
	}
	saveCapture(t, "dashboard-real-80x24.txt", real)
	if strings.Contains(real, "EMULATION") {
		t.Errorf("the TCP against Unix socket compare measures real paths, yet its dashboard says EMULATION:\n%s", real)
	}
	if found, _ := chartCaptions(real, "EMULATION"); len(found) < 3 {
		t.Errorf("the real compare's dashboard shows the captions of %d charts (%q), want TPS, latency and server CPU at least:\n%s", len(found), found, real)
	}

	// The emulated compare: its dashboard, once every chart that has data
	// drew it.
	emu := s.waitFor(300*time.Second, "Live bench: offload")
	deadline := time.Now().Add(60 * time.Second)
	for strings.Contains(emu, "waiting for data") || !strings.Contains(emu, "Live bench: offload") {
		if time.Now().After(deadline) || strings.Contains(emu, "DPULAB-EXITED") {
			break
		}
		time.Sleep(500 * time.Millisecond)
		emu = s.screen()
	}
	saveCapture(t, "dashboard-emulation-80x24.txt", emu)
	if !strings.Contains(emu, "EMULATION Live bench: offload") {
		t.Errorf("the emulated compare's dashboard title is not labelled EMULATION:\n%s", emu)
	}
	found, unlabelled := chartCaptions(emu, "EMULATION")
	// TPS, latency and server CPU are measured on every Linux machine;
	// the last is in the bottom row, which must keep its caption.
	if len(found) < 3 {
		t.Errorf("the emulated compare's dashboard shows the captions of %d charts (%q), want TPS, latency and server CPU at least:\n%s", len(found), found, emu)
	}
	if len(unlabelled) > 0 {
		t.Errorf("charts %q of the emulated compare carry no EMULATION caption:\n%s", unlabelled, emu)
	}
	// The status line says it too, with what the variant stands for.
	if !strings.Contains(emu, "EMULATION · running step") {
		t.Errorf("the status line does not say EMULATION while an emulated variant runs:\n%s", emu)
	}

	s.press(km.Quit)
	s.waitFor(20*time.Second, "Quit and clean up")
	s.keys("y")
	end := s.waitFor(120*time.Second, "DPULAB-EXITED:")
	if !strings.Contains(end, "DPULAB-EXITED:0") {
		errOut, _ := os.ReadFile(filepath.Join(dir, "stderr.txt"))
		t.Fatalf("dpulab exited badly:\n%s\nstderr:\n%s", end, errOut)
	}
}
