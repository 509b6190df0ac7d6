//go:build unix

package runner

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestKillScriptFindsGroupByNonce: a command whose group id never reached
// us (the connection dropped in its first moments) is still ended: the kill
// script, given group 0, finds runWrapper's leader by the nonce in its
// command line and ends its whole group, and leaves alone a process that
// merely carries the nonce as an argument somewhere else (the script's own
// shell, a login shell running the command line).
func TestKillScriptFindsGroupByNonce(t *testing.T) {
	t.Parallel()
	nonce := newNonce()
	// The shape the SSH target starts: setsid -w sh -c WRAPPER NONCE CMD.
	cmd := exec.Command("setsid", "-w", "sh", "-c", runWrapper, nonce, "sleep 9731 & sleep 9732; wait")
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Skipf("setsid: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Bystanders: the nonce inside one argument, as in a login shell
	// running the command line, and the nonce as a shell's $0 under
	// another script.
	for _, args := range [][]string{{"-c", "sleep 9733 # " + nonce}, {"-c", "sleep 9734; : \"$0\"", nonce}} {
		by := exec.Command("sh", args...)
		by.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := by.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = syscall.Kill(-by.Process.Pid, syscall.SIGKILL); _ = by.Wait() }()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		all := true
		for _, m := range []string{"sleep 9731", "sleep 9732", "sleep 9733", "sleep 9734"} {
			has, _ := psHas(t, m)
			all = all && has
		}
		if all {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("test setup: the command did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	out, err := exec.Command("sh", "-c", killScript, "dpulab-kill", "0", nonce, "10").CombinedOutput()
	if err != nil {
		t.Fatalf("kill script: %v: %s", err, out)
	}
	waitGone(t, "sleep 9731", 5*time.Second)
	waitGone(t, "sleep 9732", 5*time.Second)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the wrapper outlived its group's kill")
	}
	for _, m := range []string{"sleep 9733", "sleep 9734"} {
		if has, _ := psHas(t, m); !has {
			t.Fatalf("the kill script ended %q, a process that only mentioned the nonce", m)
		}
	}
	// No such group (already ended, or never started): nothing to do.
	if out, err := exec.Command("sh", "-c", killScript, "dpulab-kill", "0", newNonce(), "10").CombinedOutput(); err != nil {
		t.Fatalf("kill script with no group: %v: %s", err, out)
	}
}

// TestSSHOrphanKilledWhenDroppedAtOnce: the connection drops the moment the
// command prints, which may be before its group id crossed on stderr; the
// command is still ended after the next dial.
func TestSSHOrphanKilledWhenDroppedAtOnce(t *testing.T) {
	t.Parallel()
	f := newFakeSSH(t, "pw")
	p := &scriptedPrompter{secrets: map[SecretKind]string{SecretPassword: "pw"}}
	tg := NewSSH(fakeConfig(f, knownHostsFor(t, f.port(), f.hostKey.PublicKey()), p))
	defer tg.Close()
	ctx := context.Background()
	var once sync.Once
	_, err := tg.Run(ctx, Command{Cmd: "echo started; sleep 9719", Output: func(l Line) {
		if l.Text == "started" {
			once.Do(func() { f.dropConns(false) })
		}
	}})
	var ce *ConnError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v", err)
	}
	if _, err := tg.Run(ctx, Command{Cmd: "true"}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "sleep 9719", 5*time.Second)
}
