//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/dpulab/dpulab/steps"
)

// watched returns an interrupter watching a context, with its notices and
// exits recorded instead of written and taken. Signals are fed to it by
// hand: the policy, not the kernel, is under test here.
func watched(t *testing.T) (*interrupter, context.Context, *bytes.Buffer, *[]int) {
	t.Helper()
	var notices bytes.Buffer
	var exits []int
	it := &interrupter{notices: &notices, exit: func(code int) { exits = append(exits, code) }}
	ctx, stop := it.watch(context.Background())
	t.Cleanup(stop)
	return it, ctx, &notices, &exits
}

func TestInterrupterPolicy(t *testing.T) {
	t.Run("first-cancels-second-warns-third-abandons", func(t *testing.T) {
		it, ctx, notices, exits := watched(t)
		it.signal(syscall.SIGHUP)
		if ctx.Err() == nil {
			t.Fatal("the first signal did not end the run")
		}
		it.signal(syscall.SIGINT)
		if len(*exits) != 0 {
			t.Fatalf("the second signal exited: %v", *exits)
		}
		it.signal(syscall.SIGINT)
		if len(*exits) != 1 || (*exits)[0] != 129 {
			t.Fatalf("exits %v, want [129]: the third abandons with the first signal's status", *exits)
		}
		for _, want := range []string{"SIGHUP: stopping the step", "SIGINT: still cleaning up", "SIGINT: cleanup abandoned"} {
			if !strings.Contains(notices.String(), want) {
				t.Errorf("notices lack %q:\n%s", want, notices)
			}
		}
	})
	t.Run("abandon-names-leftovers", func(t *testing.T) {
		it, _, notices, exits := watched(t)
		it.setLeftovers(func() []steps.Leftover {
			return []steps.Leftover{{Host: "web1", Dir: "/tmp/dpulab-x-1", Reach: "ssh -p 2222 lab@192.0.2.7"}}
		})
		for range 3 {
			it.signal(syscall.SIGINT)
		}
		if len(*exits) != 1 {
			t.Fatalf("exits %v", *exits)
		}
		want := "dpulab: /tmp/dpulab-x-1 may be left on web1, with processes started from it; remove it by hand: ssh -p 2222 lab@192.0.2.7, then: pkill -f -- /tmp/dpulab-x-1; rm -rf -- /tmp/dpulab-x-1\n"
		if !strings.Contains(notices.String(), want) {
			t.Errorf("notices lack %q:\n%s", want, notices)
		}
	})
	t.Run("status", func(t *testing.T) {
		for _, tc := range []struct {
			name  string
			feed  func(*interrupter)
			want  int
			ended bool
		}{
			{"none", func(*interrupter) {}, 0, false},
			{"sigterm", func(it *interrupter) { it.signal(syscall.SIGTERM) }, 143, true},
			{"output-gone", func(it *interrupter) { it.outputGone() }, 141, true},
			// With `| tee`, Ctrl-C and the broken pipe come together in
			// either order: the signal's status wins.
			{"output-gone-then-sigint", func(it *interrupter) { it.outputGone(); it.signal(syscall.SIGINT) }, 130, true},
			{"sigint-then-output-gone", func(it *interrupter) { it.signal(syscall.SIGINT); it.outputGone() }, 130, true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				it, ctx, _, exits := watched(t)
				tc.feed(it)
				code, ok := it.exitCode()
				if code != tc.want || ok != tc.ended || (ctx.Err() != nil) != tc.ended || len(*exits) != 0 {
					t.Errorf("exit code %d %v, ctx %v, exits %v; want %d %v", code, ok, ctx.Err(), *exits, tc.want, tc.ended)
				}
			})
		}
	})
	t.Run("after-the-run", func(t *testing.T) {
		var exits []int
		it := &interrupter{notices: &bytes.Buffer{}, exit: func(code int) { exits = append(exits, code) }}
		_, stop := it.watch(context.Background())
		stop()
		for i := 0; i < 3; i++ {
			it.signal(syscall.SIGINT)
		}
		if len(exits) != 0 {
			t.Errorf("signals after the run returned still exited: %v", exits)
		}
	})
}

// pipeWriter fails like a pipe whose reader exited, or a full disk.
type pipeWriter struct {
	err    error
	writes int
}

func (p *pipeWriter) Write(b []byte) (int, error) {
	p.writes++
	if p.err != nil {
		return 0, p.err
	}
	return len(b), nil
}

func TestBestEffortWriter(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EPIPE, syscall.EIO} {
		t.Run(errno.Error(), func(t *testing.T) {
			w := &pipeWriter{err: errno}
			gone := 0
			b := newBestEffortWriter(w, func() { gone++ })
			for i := 0; i < 3; i++ {
				if n, err := b.Write([]byte("line\n")); n != 5 || err != nil {
					t.Fatalf("write %d: %d, %v: want the line taken", i, n, err)
				}
			}
			if gone != 1 || w.writes != 1 {
				t.Errorf("gone called %d times, %d writes reached the dead stream; want 1 and 1", gone, w.writes)
			}
		})
	}
	t.Run("other-errors-are-reported", func(t *testing.T) {
		w := &pipeWriter{err: syscall.ENOSPC}
		b := newBestEffortWriter(w, func() { t.Error("a full disk is not lost output") })
		if _, err := b.Write([]byte("x")); !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("err = %v, want ENOSPC", err)
		}
	})
}
