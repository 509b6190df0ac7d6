package tui

import (
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/bubbles/textinput"

	"github.com/dpulab/dpulab/internal/testpeer"
)

var (
	writeCaptures = flag.Bool("captures", false, "write the end-to-end screen captures to testdata/captures")
	e2eDuration   = flag.String("e2e-duration", "2s", "length of each timed run in the end-to-end test (longer runs give fuller captures)")
)

// buildDpulab builds the real binary once per test binary run.
func buildDpulab(t *testing.T) string { return testpeer.Dpulab(t) }

// freePorts finds n consecutive free loopback ports.
func freePorts(t *testing.T, n int) int { return testpeer.FreePorts(t, n) }

// TestEndToEndQuickstart runs the real binary in tmux at 100×30 as a
// person would: open quickstart, run everything (shortening the timed runs
// in the variables form), watch the dashboard, end on the compare view,
// quit with q (cleanup runs).
func TestEndToEndQuickstart(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	bin := buildDpulab(t)
	dir := t.TempDir()
	port := freePorts(t, 8)
	s := newTmux(t, 100, 30, dir, []string{"XDG_STATE_HOME=" + filepath.Join(dir, "state"), "XDG_DATA_HOME=" + dir}, bin)

	s.waitFor(15*time.Second, "pick a lab", "Quickstart")
	s.press(km.Enter)
	s.waitFor(10*time.Second, "Step 1/")
	s.press(km.RunAll) // run all from here
	// Run all waits at the task step, the trainee's to do; "do it for
	// me" does it, and the run goes on by itself.
	s.waitFor(30*time.Second, "step 5 is yours to do")
	s.press(km.DoIt)
	s.waitFor(30*time.Second, "Variables for")
	// Fields: instances, port, clients, pipeline, data_size, ratio,
	// key_maximum, warmup, duration, runs.
	s.press(textinput.DefaultKeyMap.DeleteBeforeCursor)
	s.text("2")
	s.press(km.NextField, textinput.DefaultKeyMap.DeleteBeforeCursor)
	s.text(fmt.Sprint(port))
	s.press(km.NextField, km.NextField, km.NextField, km.NextField, km.NextField, km.NextField, textinput.DefaultKeyMap.DeleteBeforeCursor)
	s.text("0s")
	s.press(km.NextField, textinput.DefaultKeyMap.DeleteBeforeCursor)
	s.text(*e2eDuration)
	s.press(km.NextField, textinput.DefaultKeyMap.DeleteBeforeCursor)
	s.text("1")
	scr := s.waitFor(5*time.Second, "› runs", "[1   ") // the column width follows the longest name
	if strings.Contains(scr, "✘") {
		t.Fatalf("the form refused a value:\n%s", scr)
	}
	s.press(km.Enter)
	// The dashboard opens with d (never on its own) and stays open.
	s.waitFor(10*time.Second, "running step")
	s.press(km.Dashboard)

	s.waitFor(90*time.Second, "Live bench: bench", "ops/s")
	// Capture during the compare's second variant: the charts then hold
	// both variants, a gap between them.
	dash := s.waitFor(90*time.Second, "Live bench: compare  Unix socket")
	// One more second of samples, if the variant is still running.
	time.Sleep(1200 * time.Millisecond)
	if later := s.screen(); strings.Contains(later, "Live bench: compare  Unix socket") {
		dash = later
	}
	if !strings.Contains(dash, "TPS") || !strings.Contains(dash, "latency (ms)") || strings.Contains(dash, "waiting for data") {
		t.Fatalf("dashboard incomplete:\n%s", dash)
	}
	saveCapture(t, "dashboard.txt", dash)

	cmp := s.waitFor(180*time.Second, "Compare:", "results written, report:")
	// The view opens on the lab's last bench; b steps to the TCP/Unix one.
	for i := 0; i < 4 && !strings.Contains(cmp, "TCP loopback (baseline)"); i++ {
		s.press(km.NextBench)
		time.Sleep(500 * time.Millisecond)
		cmp = s.screen()
	}
	cmp = s.waitFor(5*time.Second, "Compare:", "TCP loopback (baseline)", "Unix socket")
	// A signed delta in one of the significance rule's forms (results.Delta.Short).
	if !regexp.MustCompile(`[+-]\d+\.\d% (better|worse|same|\?|!)|~ [+-]\d+\.\d%`).MatchString(cmp) {
		t.Fatalf("compare view shows no signed delta:\n%s", cmp)
	}
	saveCapture(t, "compare.txt", cmp)

	s.press(km.Quit)
	end := s.waitFor(60*time.Second, "DPULAB-EXITED:")
	if !strings.Contains(end, "DPULAB-EXITED:0") {
		errOut, _ := os.ReadFile(filepath.Join(dir, "stderr.txt"))
		t.Fatalf("dpulab exited badly:\n%s\nstderr:\n%s", end, errOut)
	}
	// Results go to the user's data folder ($XDG_DATA_HOME/dpulab/results).
	res, err := filepath.Glob(filepath.Join(dir, "dpulab", "results", "quickstart", "*", "results.json"))
	if err != nil || len(res) != 1 {
		t.Fatalf("want one results.json under %s/dpulab/results/quickstart, got %v (%v)", dir, res, err)
	}
	// Cleanup stopped the servers: nothing listens on their ports.
	for p := port; p < port+2; p++ {
		if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", p), 200*time.Millisecond); err == nil {
			c.Close()
			t.Errorf("port %d still answers after quitting: cleanup did not stop the server", p)
		}
	}
}

// startSSHD runs a real OpenSSH sshd on a free loopback port with a fresh
// host key and a user key for the current user (testpeer.StartSSHD), and
// returns the port, the host key's SHA256 fingerprint and the user key's
// path. Its own known_hosts is not used here: the key must be unknown.
func startSSHD(t *testing.T) (port int, fingerprint, userKey string) {
	s := testpeer.StartSSHD(t)
	return s.Port, s.Fingerprint(), s.UserKey
}

// TestEndToEndHostKeyPrompt points quickstart's role at a real sshd on
// loopback whose host key is unknown: the TUI must show the key type and
// the exact SHA256 fingerprint, and "accept once" must let the step run
// over SSH without saving the key.
func TestEndToEndHostKeyPrompt(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to log in to the test sshd as the current user without PAM")
	}
	bin := buildDpulab(t)
	dir := t.TempDir()
	port, fp, userKey := startSSHD(t)
	knownHosts := filepath.Join(dir, "known_hosts")
	inv := fmt.Sprintf(`known_hosts: %s
hosts:
  - name: lab1
    address: 127.0.0.1
    port: %d
    user: root
    identity: %s
    roles: [local]
`, knownHosts, port, userKey)
	invPath := filepath.Join(dir, "hosts.yaml")
	if err := os.WriteFile(invPath, []byte(inv), 0o600); err != nil {
		t.Fatal(err)
	}
	s := newTmux(t, 100, 30, dir, []string{"XDG_STATE_HOME=" + filepath.Join(dir, "state"), "HOME=" + dir}, bin, "--inventory", invPath)
	s.waitFor(15*time.Second, "pick a lab")
	s.press(km.Enter)
	s.waitFor(10*time.Second, "Step 1/")
	s.press(km.Run) // welcome (read)
	s.waitFor(10*time.Second, "Step 2/")
	s.press(km.Run) // prerequisites: the first step that reaches the host
	scr := s.waitFor(30*time.Second, "Unknown host key", "SHA256:")
	for _, want := range []string{"ssh-ed25519", fp, "lab1", "Accept once", "Accept and save", "Refuse"} {
		if !strings.Contains(scr, want) {
			t.Errorf("host-key dialog lacks %q:\n%s", want, scr)
		}
	}
	saveCapture(t, "hostkey.txt", scr)
	s.keys("o") // accept once
	s.waitFor(60*time.Second, "step 2 done")
	if b, _ := os.ReadFile(knownHosts); len(b) != 0 {
		t.Fatalf("accept once saved the key to known_hosts:\n%s", b)
	}
	s.press(km.Quit)
	end := s.waitFor(60*time.Second, "DPULAB-EXITED:")
	if !strings.Contains(end, "DPULAB-EXITED:0") {
		errOut, _ := os.ReadFile(filepath.Join(dir, "stderr.txt"))
		t.Fatalf("dpulab exited badly:\n%s\nstderr:\n%s", end, errOut)
	}
}

// TestEndToEndReplay plays the recorded run back with the real binary: the
// banner says it is a replay, of when and where; the playback ends on the
// compare view.
func TestEndToEndReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	bin := buildDpulab(t)
	rec, err := filepath.Abs("testdata/recorded")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s := newTmux(t, 100, 30, dir, nil, bin, "replay", "--speed", "30ms", rec)
	s.waitFor(15*time.Second, "REPLAY of a run recorded on 2026-12-02 17:23 UTC on local (linux/amd64)", "Recorded bench")
	scr := s.waitFor(30*time.Second, "Compare:", "TCP loopback (baseline)", "Published reference figures")
	if !strings.Contains(scr, "REPLAY of a run") {
		t.Fatalf("the compare view lost the replay banner:\n%s", scr)
	}
	s.press(km.Quit)
	if end := s.waitFor(15*time.Second, "DPULAB-EXITED:"); !strings.Contains(end, "DPULAB-EXITED:0") {
		t.Fatalf("replay exited badly:\n%s", end)
	}
}

// TestEndToEndHostileLab runs the real binary in tmux over the hostile lab
// (see hostile_test.go), with tmux's set-clipboard on so that an OSC 52
// reaching the terminal would create a tmux paste buffer, and the pane's raw
// output piped to a file: after a read step, a run step's output and a
// failure with its hint, no buffer exists and the raw stream holds none of
// the lab's sequences. A last check proves the detector: the same OSC 52
// printed raw in another window does create a buffer.
func TestEndToEndHostileLab(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	bin := buildDpulab(t)
	labDir := writeHostileLab(t)
	dir := t.TempDir()
	stream := filepath.Join(dir, "pane.raw")
	// dpulab starts once the pipe is in place (Enter), so the raw stream
	// holds everything it wrote.
	s := newTmux(t, 120, 40, dir, []string{"XDG_STATE_HOME=" + filepath.Join(dir, "state"), "XDG_DATA_HOME=" + dir},
		"sh", "-c", `read go; exec "$0" "$@"`, bin, "--lab-dir", filepath.Dir(labDir))
	s.run("set-option", "-g", "set-clipboard", "on")
	s.run("pipe-pane", "-t", "e2e", "cat >> "+shq(stream))
	s.keys("Enter")
	s.waitFor(15*time.Second, "pick a lab", "Hostile output lab")
	s.press(km.Filter)
	s.waitFor(5*time.Second, "Filter:")
	s.text("hostile")
	s.waitFor(5*time.Second, "Filter: hostile")
	s.press(km.Enter)
	s.press(km.Enter)
	s.waitFor(10*time.Second, "Step 1/4", "Doc-prose")
	s.press(km.Run)
	s.waitFor(15*time.Second, "Step 2/4", "Noisy doc")
	s.press(km.Run)
	s.waitFor(15*time.Second, "out-line-1", "red-text", "step 2 done")
	s.press(km.Run)
	scr := s.waitFor(15*time.Second, "Hint-text", "step 3 failed")
	if !strings.Contains(scr, "tail-3") {
		t.Errorf("the failure box lacks the command's last lines:\n%s", scr)
	}
	s.press(km.Quit)
	if end := s.waitFor(30*time.Second, "DPULAB-EXITED:"); !strings.Contains(end, "DPULAB-EXITED:0") {
		errOut, _ := os.ReadFile(filepath.Join(dir, "stderr.txt"))
		t.Fatalf("dpulab exited badly:\n%s\nstderr:\n%s", end, errOut)
	}
	if bufs := strings.TrimSpace(s.run("list-buffers")); bufs != "" {
		t.Errorf("an OSC 52 reached tmux and set its clipboard:\n%s", bufs)
	}
	raw, err := os.ReadFile(stream)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "out-line-1") {
		t.Fatalf("the piped stream (%d bytes) misses the run's output: the pipe was not in place", len(raw))
	}
	// bubbletea's alternate screen writes ?1049h and clears the screen,
	// and termenv asks for the background colour (OSC 11) and the cursor
	// position (CSI 6n) at start, so here the markers are the lab's own.
	for _, m := range []string{"52;c;", "SE9TVElMRQ", "\x1b[77;133H", "\x1b[3J", "\u009b", "\u009d", "\u202e"} {
		if i := strings.Index(string(raw), m); i >= 0 {
			t.Errorf("the terminal received %q: …%q…", m, raw[max(i-40, 0):min(i+40, len(raw))])
		}
	}
	for i, b := range raw {
		if b >= 0x80 && b < 0xa0 && (i == 0 || raw[i-1] < 0xc0) && !utf8.FullRune(raw[max(i-3, 0):i+1]) {
			t.Errorf("raw C1 byte %#x at %d", b, i)
			break
		}
	}

	// The detector works: the same sequence, unfiltered, makes a buffer.
	s.run("new-window", "-d", "-t", "e2e", "sh", "-c", `printf '\033]52;c;SE9TVElMRQ==\007'; sleep 5`)
	deadline := time.Now().Add(5 * time.Second)
	for strings.TrimSpace(s.run("list-buffers")) == "" {
		if time.Now().After(deadline) {
			t.Fatal("tmux made no buffer from a raw OSC 52: this test cannot see a leak")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
