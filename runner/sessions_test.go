//go:build unix

package runner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
)

// TestSSHWithinMaxSessions: against an sshd that allows few sessions per
// connection (OpenSSH's default MaxSessions is 10), 60 detached Starts and
// 60 Runs at once on one SSHTarget all succeed, then 60 Stops at once, and
// no process is left. Every session past the limit waits for a slot (the
// limit learnt at the first refusal) instead of failing.
func TestSSHWithinMaxSessions(t *testing.T) {
	t.Parallel()
	for _, max := range []int{10, 2} {
		t.Run(fmt.Sprintf("MaxSessions %d", max), func(t *testing.T) {
			t.Parallel()
			sshd := &realSSHD{testpeer.StartSSHD(t, testpeer.SSHDConfig("MaxSessions "+strconv.Itoa(max)))}
			defer func() {
				if t.Failed() {
					t.Log(sshd.Log())
				}
			}()
			tg := NewSSH(sshd.config("capped"))
			ctx := context.Background()
			workdir := t.TempDir()
			// Cleanups run last first: leave nothing behind, whatever the
			// outcome, then close.
			t.Cleanup(func() { tg.Close() })
			t.Cleanup(func() { _, _ = StopMarked(context.Background(), tg, workdir, 0, false) })
			sleep := "sleep " + strconv.Itoa(100000+rand.IntN(100000))
			// The sftp session counts too: hold one open while the rest
			// run (ReadFile opens it).
			if _, err := tg.ReadFile(ctx, "/etc/hostname"); err != nil {
				t.Fatal(err)
			}
			const n = 60
			procs := make([]Proc, n)
			errs := make([]error, 2*n)
			var wg sync.WaitGroup
			for i := 0; i < n; i++ {
				wg.Add(2)
				go func() {
					defer wg.Done()
					procs[i], errs[i] = tg.Start(ctx, ProcSpec{Name: fmt.Sprintf("p%d", i), Cmd: "exec " + sleep, LogFile: fmt.Sprintf("%s/p%d.log", workdir, i)})
				}()
				go func() {
					defer wg.Done()
					var c collect
					res, err := tg.Run(ctx, Command{Cmd: "echo run-" + strconv.Itoa(i), Output: c.add})
					if err == nil && (res.ExitCode != 0 || strings.Join(c.text(Stdout), "") != "run-"+strconv.Itoa(i)) {
						err = fmt.Errorf("exit %d, output %q", res.ExitCode, c.text(Stdout))
					}
					errs[n+i] = err
				}()
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("operation %d of %d failed: %v", i, 2*n, err)
				}
			}
			if has, _ := psHas(t, sleep); !has {
				t.Fatal("test setup: the started processes are not running")
			}
			for i := 0; i < n; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = tg.Stop(ctx, procs[i], 2*time.Second)
				}()
			}
			wg.Wait()
			for i, err := range errs[:n] {
				if err != nil {
					t.Fatalf("stop %d: %v", i, err)
				}
			}
			waitGone(t, sleep, 10*time.Second)
			waitGone(t, workdir, 10*time.Second)
			if got := tg.SessionLimit(); got < 1 || got > max {
				t.Errorf("learnt session limit %d, want 1..%d", got, max)
			}
			if !strings.Contains(sshd.Log(), "no more sessions") {
				t.Error("sshd never refused a session: the test did not reach the limit")
			}
			t.Logf("learnt session limit: %d (MaxSessions %d), %d connections", tg.SessionLimit(), max, tg.Conns())
		})
	}
}

// TestSSHLongSessionDoesNotStarveOthers: with MaxSessions 1, a command that
// waits for another one (as a sampler runs while others work on its host)
// does not hold the host's only session hostage: the second command gets a
// session on another connection.
func TestSSHLongSessionDoesNotStarveOthers(t *testing.T) {
	t.Parallel()
	sshd := &realSSHD{testpeer.StartSSHD(t, testpeer.SSHDConfig("MaxSessions 1"))}
	tg := NewSSH(sshd.config("one-session"))
	defer tg.Close()
	ctx := context.Background()
	flag := t.TempDir() + "/go-on"
	started := make(chan struct{})
	var once sync.Once
	done := make(chan error, 1)
	go func() {
		var c collect
		res, err := tg.Run(ctx, Command{
			Cmd:     "echo waiting; while [ ! -e " + Quote(flag) + " ]; do sleep 0.05; done; echo seen",
			Timeout: 60 * time.Second, // a guard: the test fails long before
			Output: func(l Line) {
				c.add(l)
				if l.Text == "waiting" {
					once.Do(func() { close(started) })
				}
			},
		})
		if err == nil && (res.ExitCode != 0 || strings.Join(c.text(Stdout), ",") != "waiting,seen") {
			err = fmt.Errorf("exit %d, output %q", res.ExitCode, c.text(Stdout))
		}
		done <- err
	}()
	<-started
	// The first open learns the limit (refused); the command then runs
	// on a second connection.
	if res, err := tg.Run(ctx, Command{Cmd: "touch " + Quote(flag)}); err != nil || res.ExitCode != 0 {
		t.Fatalf("second command: %v %v", res, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("first command: %v", err)
	}
	if n := tg.Conns(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

// TestSSHUploadWhileSessionsHeld: with MaxSessions 1 and the only session of
// the first connection held by a long command, an upload still goes through
// (its sftp session opens on another connection).
func TestSSHUploadWhileSessionsHeld(t *testing.T) {
	t.Parallel()
	sshd := &realSSHD{testpeer.StartSSHD(t, testpeer.SSHDConfig("MaxSessions 1"))}
	tg := NewSSH(sshd.config("one-session"))
	defer tg.Close()
	ctx := context.Background()
	dir := t.TempDir()
	flag := dir + "/uploaded"
	started := make(chan struct{})
	var once sync.Once
	done := make(chan error, 1)
	go func() {
		_, err := tg.Run(ctx, Command{
			Cmd:     "echo waiting; while [ ! -e " + Quote(flag) + " ]; do sleep 0.05; done",
			Timeout: 60 * time.Second, // a guard: the test fails long before
			Output: func(l Line) {
				if l.Text == "waiting" {
					once.Do(func() { close(started) })
				}
			},
		})
		done <- err
	}()
	<-started
	// Learn the limit first (the Run below is refused on the first
	// connection, then runs on a second one).
	if _, err := tg.Run(ctx, Command{Cmd: "true"}); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(ctx, tg, flag, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
