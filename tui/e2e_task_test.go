package tui

import (
	"fmt"
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
	s.waitGone(10*time.Second, "Step 5: show me")

	s.press(km.Files)
	files := s.waitFor(10*time.Second, "Rendered files", "/redis.conf", "step 4 (config, done) writes it", "unixsocket ")
	saveCapture(t, "files.txt", files)
	s.press(km.Back)
	s.waitGone(10*time.Second, "Rendered files")

	// A shell, left at once: the check fails and says why.
	const banner = "dpulab · step 5: Edit the redis.conf yourself"
	s.press(km.Run)
	s.waitForShell(10*time.Second, banner, "trainee$", 1)
	s.keys("exit", "Enter")
	s.waitFor(30*time.Second, "step 5 failed", "checks again")

	// Again, with the work done in the shell: the second shell's prompt,
	// not the first's, still on the main screen (CI once typed the edit
	// before the second shell read it, and it was lost).
	s.press(km.Shell)
	s.waitForShell(10*time.Second, banner, "trainee$", 2)
	s.text(`sed -i 's/^loglevel notice$/loglevel warning/' redis.conf && grep -n loglevel redis.conf`)
	s.keys("Enter")
	sh := s.waitFor(10*time.Second, ":loglevel warning")
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

// TestEndToEndTaskOverSSH does the task step on a lab host reached over
// SSH (a real sshd on loopback): the host key accepted and saved when the
// run first reaches the host, the shell is OpenSSH's ssh with the
// inventory's address, port, user, key and known_hosts, in the lab's
// working directory there; the edit typed into it passes the check.
func TestEndToEndTaskOverSSH(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to log in to the test sshd as the current user without PAM")
	}
	bin := buildDpulab(t)
	dir := t.TempDir()
	port, _, userKey := startSSHD(t)
	knownHosts := filepath.Join(dir, "known_hosts")
	inv := fmt.Sprintf("known_hosts: %s\nhosts:\n  - name: lab1\n    address: 127.0.0.1\n    port: %d\n    user: root\n    identity: %s\n    roles: [local]\n",
		knownHosts, port, userKey)
	invPath := filepath.Join(dir, "hosts.yaml")
	if err := os.WriteFile(invPath, []byte(inv), 0o600); err != nil {
		t.Fatal(err)
	}
	s := newTmux(t, 100, 30, dir, []string{"XDG_STATE_HOME=" + filepath.Join(dir, "state"), "HOME=" + dir}, bin, "--inventory", invPath)
	s.waitFor(15*time.Second, "pick a lab")
	s.press(km.Enter)
	s.waitFor(10*time.Second, "Step 1/")
	s.press(km.RunAll)
	s.waitFor(30*time.Second, "Unknown host key")
	s.keys("s") // accept and save: the trainee's ssh checks the same known_hosts
	s.waitFor(60*time.Second, "step 5 is yours to do")
	s.press(km.Shell)
	s.waitFor(15*time.Second, "a shell on lab1", "type exit")
	// The remote login shell's prompt comes after ssh's handshake.
	time.Sleep(2 * time.Second)
	s.text(`pwd; sed -i 's/^loglevel notice$/loglevel warning/' redis.conf && grep -n loglevel redis.conf`)
	s.keys("Enter")
	sh := s.waitFor(20*time.Second, ":loglevel warning", "/tmp/dpulab-quickstart-")
	saveCapture(t, "shell-ssh.txt", sh)
	s.keys("exit", "Enter")
	s.waitFor(30*time.Second, "Variables for")
	s.press(km.Cancel)
	s.waitFor(10*time.Second, "✔  5 Edit the redis.conf")
	s.press(km.Quit)
	end := s.waitFor(60*time.Second, "DPULAB-EXITED:")
	if !strings.Contains(end, "DPULAB-EXITED:0") {
		errOut, _ := os.ReadFile(filepath.Join(dir, "stderr.txt"))
		t.Fatalf("dpulab exited badly:\n%s\nstderr:\n%s", end, errOut)
	}
}
