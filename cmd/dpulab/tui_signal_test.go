//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/steps/results"
)

// tuiLab deploys two servers and runs a long, light bench: the TUI is
// mid-step when the signal comes. Its cleanup step needs the engine's
// step lock, which the running bench holds until it is stopped.
const tuiLab = `id: sigtui
title: Signals in the TUI
summary: deploy, a long bench, cleanup
duration: 5m
roles:
  local: this machine
variables:
  port:
    type: int
    default: 7400
    min: 1024
    max: 65000
    description: port of the first server
steps:
  - id: deploy
    title: Start the servers
    kind: deploy
    instances: 2
    port: "{{.vars.port}}"
    config: assets/redis.conf.tmpl
  - id: long
    title: Long bench
    kind: bench
    target: deploy
    clients: 1
    rate: 100
    warmup: 0s
    duration: 2m
    runs: 1
  - id: cleanup
    title: Clean up
    kind: cleanup
    run: "true"
`

// tmuxPane runs one command in a tmux session on a private server socket.
type tmuxPane struct {
	t            *testing.T
	tmux, socket string
}

func (p *tmuxPane) run(args ...string) string {
	p.t.Helper()
	out, err := exec.Command(p.tmux, append([]string{"-L", p.socket}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (p *tmuxPane) screen() string { return p.run("capture-pane", "-p", "-t", "sig") }

// waitFor polls the screen until want is on it (a generous bound: a hang
// fails the test, nothing is timed).
func (p *tmuxPane) waitFor(want string) string {
	p.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		scr := p.screen()
		if strings.Contains(scr, want) {
			return scr
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("screen never showed %q; last screen:\n%s", want, scr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// pidOf finds the process whose command line starts with args.
func pidOf(args ...string) int {
	want := strings.Join(args, "\x00") + "\x00"
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline")); err == nil && strings.HasPrefix(string(b), want) {
			return pid
		}
	}
	return 0
}

// gone waits for pid to exit; false when it is still there after a bound
// long enough that only a hang exceeds it.
func gone(pid int) bool {
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err := syscall.Kill(pid, 0); err != nil {
			return true
		}
	}
	return false
}

// TestTUISignalsCleanUp runs the TUI in tmux, starts a lab and, mid-bench,
// sends SIGTERM or SIGINT to dpulab or closes its terminal (the tmux server
// goes away: a real hangup, SIGHUP and then EIO). Each must end dpulab
// through the lab's cleanup, with no server left.
func TestTUISignalsCleanUp(t *testing.T) {
	bin := requireSignalPeers(t)
	tm := testpeer.Require(t, "tmux")
	labDir := writeLabDir(t, "sigtui", tuiLab)
	for _, tc := range []struct {
		name string
		sig  syscall.Signal // 0: close the terminal, or press keys
		keys []string       // pressed instead of a signal
		exit string
		// by is what results.json must say interrupted the run ("": any).
		by string
	}{
		{"SIGTERM", syscall.SIGTERM, nil, "DPULAB-EXITED:143", "SIGTERM"},
		{"SIGINT", syscall.SIGINT, nil, "DPULAB-EXITED:130", "SIGINT (Ctrl-C)"},
		{"hangup", 0, nil, "", ""},
		// q asks first while a step runs; y quits and cleans up. A quit is
		// a normal way out (exit 0), and the run says it was interrupted.
		{"q", 0, []string{"q", "y"}, "DPULAB-EXITED:0", "q in the TUI"},
		{"ctrl-c", 0, []string{"C-c"}, "DPULAB-EXITED:0", "Ctrl+C in the TUI"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := &tmuxPane{t: t, tmux: tm, socket: fmt.Sprintf("dpulab-sig-%d-%d", os.Getpid(), time.Now().UnixNano())}
			t.Cleanup(func() {
				exec.Command(tm, "-L", p.socket, "kill-server").Run()
				// A dpulab that hangs must not outlive a failed test.
				if pid := pidOf(bin, "--lab-dir", labDir); pid != 0 {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			script := fmt.Sprintf("env TERM=xterm-256color XDG_STATE_HOME=%s XDG_DATA_HOME=%s %s --lab-dir %s 2>%s; echo DPULAB-EXITED:$?; sleep 600",
				shellQuote(filepath.Join(dir, "state")), shellQuote(filepath.Join(dir, "data")), shellQuote(bin), shellQuote(labDir), shellQuote(filepath.Join(dir, "stderr")))
			p.run("new-session", "-d", "-s", "sig", "-x", "100", "-y", "30", "-c", dir, "sh", "-c", script)
			// The picker: the test's lab may be below the fold of a
			// 30-row pane (the other labs' hints are long).
			p.waitFor("pick a lab")
			// Pick the lab by filtering for its id: its place in the
			// list is the catalogue's order, not this test's business.
			p.run("send-keys", "-t", "sig", "/")
			p.waitFor("Filter:")
			p.run("send-keys", "-t", "sig", "-l", "sigtui")
			p.run("send-keys", "-t", "sig", "Enter")
			p.waitFor("“sigtui”")
			p.run("send-keys", "-t", "sig", "Enter")
			p.waitFor("Step 1/3")
			p.run("send-keys", "-t", "sig", "a")
			p.waitFor("Variables for")
			p.run("send-keys", "-t", "sig", "C-u")
			p.run("send-keys", "-t", "sig", "-l", fmt.Sprint(testpeer.FreePorts(t, 2)))
			p.run("send-keys", "-t", "sig", "Enter")
			// The dashboard opens with its key (d), not by itself.
			p.waitFor("Long bench  [bench · running]")
			p.run("send-keys", "-t", "sig", "d")
			p.waitFor("Live bench: long")
			pid := pidOf(bin, "--lab-dir", labDir)
			if pid == 0 {
				t.Fatal("dpulab's process not found")
			}
			switch {
			case tc.sig != 0 || len(tc.keys) > 0:
				if tc.sig != 0 {
					if err := syscall.Kill(pid, tc.sig); err != nil {
						t.Fatal(err)
					}
				}
				for i, k := range tc.keys {
					if i > 0 {
						p.waitFor("Quit while a step runs?")
					}
					p.run("send-keys", "-t", "sig", k)
				}
				scr := p.waitFor("DPULAB-EXITED")
				if !strings.Contains(scr, tc.exit) {
					t.Errorf("want %s; screen:\n%s", tc.exit, scr)
				}
			default:
				p.run("kill-server")
			}
			if !gone(pid) {
				t.Errorf("dpulab (pid %d) still runs after %s", pid, tc.name)
				syscall.Kill(pid, syscall.SIGKILL)
			}
			assertNoServers(t, bin, tc.name)
			// Nothing of the run is left in /tmp: its working directory
			// (from saved progress) is gone.
			st, err := steps.LoadState(filepath.Join(dir, "state", "dpulab", "sigtui.json"))
			if err != nil || st == nil || !strings.HasPrefix(st.Workdir, "/tmp/dpulab-sigtui-") {
				t.Errorf("saved progress after %s: %+v, %v; want it to name the run's working directory", tc.name, st, err)
			} else if _, err := os.Stat(st.Workdir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("after %s the run's working directory %s is still there (stat: %v)", tc.name, st.Workdir, err)
				os.RemoveAll(st.Workdir)
			}
			// The run's end is recorded as an interruption, by what.
			found, _ := filepath.Glob(filepath.Join(dir, "data", "dpulab", "results", "sigtui", "*", "results.json"))
			if len(found) != 1 {
				t.Fatalf("want one results folder, found %v", found)
			}
			by := tc.by
			if by == "" {
				// The hangup: SIGHUP, or the TUI's input going away first.
				r, _ := results.LoadResults(filepath.Dir(found[0]))
				if r == nil || r.InterruptedBy == "" {
					t.Fatalf("hangup: results.json does not say what interrupted the run: %+v", r)
				}
				by = r.InterruptedBy
			}
			assertInterrupted(t, filepath.Dir(found[0]), by, true)
		})
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
