//go:build unix

package runner

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// collect gathers the Lines of a run.
type collect struct {
	mu    sync.Mutex
	lines []Line
}

func (c *collect) add(l Line) {
	c.mu.Lock()
	c.lines = append(c.lines, l)
	c.mu.Unlock()
}

func (c *collect) text(st Stream) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, l := range c.lines {
		if l.Stream == st {
			out = append(out, l.Text)
		}
	}
	return out
}

// psHas reports whether any process's command line contains marker, with
// the ps output for the failure message.
func psHas(t *testing.T, marker string) (bool, string) {
	t.Helper()
	out, err := exec.Command("ps", "-eo", "pid,pgid,args").Output()
	if err != nil {
		t.Fatalf("ps: %v", err)
	}
	var hits []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, marker) && !strings.Contains(l, "ps -eo") {
			hits = append(hits, l)
		}
	}
	return len(hits) > 0, strings.Join(hits, "\n")
}

// waitGone waits up to d for no process to carry marker.
func waitGone(t *testing.T, marker string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		has, lines := psHas(t, marker)
		if !has {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes left behind:\n%s", lines)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// targetSuite runs the behaviour every Target must have; local and SSH
// targets both go through it.
func targetSuite(t *testing.T, tg Target) {
	ctx := context.Background()
	run := t.Run
	// Process markers unique to this suite: suites for different targets
	// run in parallel and look for their processes with ps.
	sleepA := strconv.Itoa(40000 + rand.IntN(20000))
	sleepB := strconv.Itoa(60000 + rand.IntN(20000))
	sleepC := strconv.Itoa(80000 + rand.IntN(20000))
	run("run streams lines per stream", func(t *testing.T) {
		var c collect
		res, err := tg.Run(ctx, Command{Cmd: "echo out1; echo err1 >&2; printf 'no newline'; exit 3", Output: c.add})
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != 3 {
			t.Fatalf("exit %d, want 3", res.ExitCode)
		}
		if got := strings.Join(c.text(Stdout), "|"); got != "out1|no newline" {
			t.Fatalf("stdout %q", got)
		}
		if got := strings.Join(c.text(Stderr), "|"); got != "err1" {
			t.Fatalf("stderr %q", got)
		}
		for _, l := range c.lines {
			if l.Host != tg.Name() {
				t.Fatalf("line %+v not attributed to %s", l, tg.Name())
			}
		}
		if len(res.Tail) != 3 || res.Duration <= 0 {
			t.Fatalf("tail %v duration %v", res.Tail, res.Duration)
		}
	})
	run("stdin and hostile arguments", func(t *testing.T) {
		hostile := "it's $(echo pwned) `echo pwned`; echo pwned\nline2"
		var c collect
		res, err := tg.Run(ctx, Command{Cmd: "cat; printf '%s' " + Quote(hostile), Stdin: []byte("from stdin\n"), Output: c.add})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("%v exit %d", err, res.ExitCode)
		}
		got := strings.Join(c.text(Stdout), "\n")
		if want := "from stdin\n" + hostile; got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
	run("cancel kills the whole group", func(t *testing.T) {
		marker := "31" + strings.ReplaceAll(newNonce()[11:17], "a", "1")
		marker = strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return r
			}
			return '7'
		}, marker)
		ctx, cancel := context.WithCancel(ctx)
		started := make(chan struct{}, 1)
		var err error
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, err = tg.Run(ctx, Command{Cmd: "sleep " + marker + " & sleep " + marker + "; echo never", Output: func(Line) {}})
		}()
		go func() {
			for {
				if has, _ := psHas(t, "sleep "+marker); has {
					started <- struct{}{}
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatal("command did not start")
		}
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Fatal("Run did not return after cancel")
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		waitGone(t, "sleep "+marker, 5*time.Second)
	})
	run("timeout", func(t *testing.T) {
		_, err := tg.Run(ctx, Command{Cmd: "sleep 30", Timeout: 300 * time.Millisecond})
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out") {
			t.Fatalf("err = %v", err)
		}
	})
	run("start and stop", func(t *testing.T) {
		dir := t.TempDir()
		log := filepath.Join(dir, "logs", "p.log")
		p, err := tg.Start(ctx, ProcSpec{Name: "sleeper's", Cmd: "echo started; exec sleep " + sleepA, LogFile: log})
		if err != nil {
			t.Fatal(err)
		}
		if p.PID <= 1 || p.Host != tg.Name() || p.LogFile != log {
			t.Fatalf("proc %+v", p)
		}
		// The log exists once Start returns: a reader, or a test removing
		// its directory, never races the process opening it.
		if _, err := os.Stat(log); err != nil {
			t.Fatalf("log file not there once Start returned: %v", err)
		}
		if has, _ := psHas(t, "sleep "+sleepA); !has {
			t.Fatal("started process not running")
		}
		if err := tg.Stop(ctx, p, 2*time.Second); err != nil {
			t.Fatal(err)
		}
		waitGone(t, "sleep "+sleepA, 3*time.Second)
		b, err := tg.ReadFile(ctx, log)
		if err != nil || !strings.Contains(string(b), "started") {
			t.Fatalf("log %q %v", b, err)
		}
		// Stopping again is harmless: the pid file is gone.
		if err := tg.Stop(ctx, p, time.Second); err != nil {
			t.Fatal(err)
		}
	})
	run("stop after its directory was removed", func(t *testing.T) {
		// A tmp cleaner, or a person, deleted the directory holding the
		// pid file while the process ran: Stop must still end it, not
		// report it stopped and leave it running.
		dir := t.TempDir()
		p, err := tg.Start(ctx, ProcSpec{Name: "orphan", Cmd: "exec sleep " + sleepC, LogFile: filepath.Join(dir, "w", "p.log")})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(filepath.Join(dir, "w")); err != nil {
			t.Fatal(err)
		}
		if err := tg.Stop(ctx, p, time.Second); err != nil {
			t.Fatal(err)
		}
		waitGone(t, "sleep "+sleepC, 3*time.Second)
	})
	run("start with default log file", func(t *testing.T) {
		p, err := tg.Start(ctx, ProcSpec{Name: "x;y", Cmd: "exec sleep " + sleepB})
		if err != nil {
			t.Fatal(err)
		}
		defer os.Remove(p.LogFile)
		if !strings.Contains(p.LogFile, "dpulab-") || !strings.HasSuffix(p.LogFile, ".log") || strings.Contains(p.LogFile, ";") {
			t.Fatalf("log file %q", p.LogFile)
		}
		if err := tg.Stop(ctx, p, time.Second); err != nil {
			t.Fatal(err)
		}
		waitGone(t, "sleep "+sleepB, 3*time.Second)
	})
	run("upload and read", func(t *testing.T) {
		dir := t.TempDir()
		src := filepath.Join(dir, "src")
		if err := os.WriteFile(src, []byte("#!/bin/sh\necho uploaded\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, "sub", "it's here")
		if err := tg.Upload(ctx, src, dst, 0o750); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(dst)
		if err != nil || st.Mode().Perm() != 0o750 {
			t.Fatalf("stat %v %v", st, err)
		}
		var c collect
		if res, err := tg.Run(ctx, Command{Cmd: Quote(dst), Output: c.add}); err != nil || res.ExitCode != 0 {
			t.Fatalf("run uploaded: %v %d", err, res.ExitCode)
		}
		if got := c.text(Stdout); len(got) != 1 || got[0] != "uploaded" {
			t.Fatalf("got %q", got)
		}
		b, err := tg.ReadFile(ctx, dst)
		if err != nil || !strings.HasPrefix(string(b), "#!/bin/sh") {
			t.Fatalf("%q %v", b, err)
		}
		if _, err := tg.ReadFile(ctx, filepath.Join(dir, "missing")); err == nil {
			t.Fatal("reading a missing file succeeded")
		}
	})
	run("platform", func(t *testing.T) {
		p, err := tg.Platform(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if p.OS != runtime.GOOS || p.Arch != runtime.GOARCH {
			t.Fatalf("platform %v, this machine is %s/%s", p, runtime.GOOS, runtime.GOARCH)
		}
	})
	run("sudo as root runs as is", func(t *testing.T) {
		if os.Getuid() != 0 {
			t.Skip("needs root")
		}
		var c collect
		res, err := tg.Run(ctx, Command{Cmd: "id -u", Sudo: true, Output: c.add})
		if err != nil || res.ExitCode != 0 || strings.Join(c.text(Stdout), "") != "0" {
			t.Fatalf("%v %d %q", err, res.ExitCode, c.text(Stdout))
		}
	})
}

func TestLocalTarget(t *testing.T) {
	t.Parallel()
	tg := NewLocal()
	defer tg.Close()
	if tg.Name() != "local" {
		t.Fatalf("name %q", tg.Name())
	}
	targetSuite(t, tg)
}

// TestLocalSimpleOutlivedByChild: a helper script (stop, kill) that exits
// while a child it left holds its output open ends with the script's own
// exit status once WaitDelay passes, not an error: on a saturated host a
// stop that worked was reported as failed ("WaitDelay expired before I/O
// complete") and the run's cleanup failed with it.
func TestLocalSimpleOutlivedByChild(t *testing.T) {
	t.Parallel()
	tg := NewLocal()
	defer tg.Close()
	start := time.Now()
	out, _, code, err := tg.simple(context.Background(), "echo done; sleep 6 & exit 0", nil)
	if err != nil || code != 0 || !strings.Contains(string(out), "done") {
		t.Fatalf("out %q, code %d, err %v; want the script's exit 0 and its output", out, code, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("waited %v for the child", d)
	}
}
