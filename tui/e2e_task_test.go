package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEndToEndTaskInShell runs the real binary in tmux as a trainee would
// at the quickstart's task step: run all stops there; enter hands the
// terminal to a real shell in the lab's working directory; leaving it
// without the work fails the check; the second time the trainee edits
// redis.conf (typed through tmux send-keys), exits, the check passes and
// the run goes on by itself to the next step. Show me and the
// rendered-files view are captured on the way.
func TestEndToEndTaskInShell(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	bin := buildDpulab(t)
	dir := t.TempDir()
	s := newTmux(t, 100, 30, dir, []string{"XDG_STATE_HOME=" + filepath.Join(dir, "state"), "XDG_DATA_HOME=" + dir,
		"SHELL=/bin/sh", "ENV=", "PS1=trainee$ "}, bin)

	s.waitFor(15*time.Second, "pick a lab", "Quickstart")
	s.press(km.Enter)
	s.waitFor(10*time.Second, "Step 1/")
	s.press(km.RunAll)
	task := s.waitFor(30*time.Second, ": Edit the redis.conf yourself  [task", "step 5 is yours to do", "t shell", "c check")
	if strings.Contains(task, "sed -i") {
		t.Fatalf("the task step shows its answer before show me:\n%s", task)
	}
	saveCapture(t, "task.txt", task)

	s.press(km.ShowMe)
	show := s.waitFor(10*time.Second, "Step 5: show me", "sed -i", "the lab checks it with")
	saveCapture(t, "showme.txt", show)
	s.press(km.Back)

	s.press(km.Files)
	files := s.waitFor(10*time.Second, "Rendered files", "/redis.conf", "step 4 (config, done) writes it", "unixsocket ")
	saveCapture(t, "files.txt", files)
	s.press(km.Back)

	// A shell, left at once: the check fails and says why.
	s.press(km.Run)
	s.waitFor(10*time.Second, "dpulab · step 5: Edit the redis.conf yourself", "type exit", "trainee$")
	s.keys("exit", "Enter")
	s.waitFor(30*time.Second, "step 5 failed", "checks again")

	// Again, with the work done in the shell.
	s.press(km.Shell)
	sh := s.waitFor(10*time.Second, "type exit", "trainee$")
	s.text(`sed -i 's/^loglevel notice$/loglevel warning/' redis.conf && grep -n loglevel redis.conf`)
	s.keys("Enter")
	sh = s.waitFor(10*time.Second, ":loglevel warning")
	saveCapture(t, "shell.txt", sh)
	s.keys("exit", "Enter")
	// Verified, and the run goes on: the deploy step asks for the
	// variables first.
	s.waitFor(30*time.Second, "Variables for")
	s.press(km.Cancel)
	scr := s.waitFor(10*time.Second, "✔  5 Edit the redis.conf")
	if !strings.Contains(scr, "✔  4 Render a redis.conf") {
		t.Fatalf("steps before the task are not done:\n%s", scr)
	}
	s.press(km.Quit)
	end := s.waitFor(60*time.Second, "DPULAB-EXITED:")
	if !strings.Contains(end, "DPULAB-EXITED:0") {
		errOut, _ := os.ReadFile(filepath.Join(dir, "stderr.txt"))
		t.Fatalf("dpulab exited badly:\n%s\nstderr:\n%s", end, errOut)
	}
}
