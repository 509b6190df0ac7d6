//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"

	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/steps/results"
)

// sigLab deploys three servers, runs a short bench and then a long one at
// a low request rate (the machine is small): a signal sent on an event
// lands mid-deploy, between the benches, or mid-bench.
const sigLab = `id: sigtest
title: Signals
summary: deploy, a short bench, a long one
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
  duration:
    type: duration
    default: 2m
    min: 1s
    max: 10m
    description: length of the long bench
steps:
  - id: workdir
    title: Working directory
    kind: run
    run: mkdir -p {{.workdir}}
  - id: deploy
    title: Start the servers
    kind: deploy
    instances: 3
    port: "{{.vars.port}}"
    config: assets/redis.conf.tmpl
  - id: short
    title: Short bench
    kind: bench
    target: deploy
    clients: 1
    rate: 100
    warmup: 0s
    duration: 1s
    runs: 1
  - id: long
    title: Long bench
    kind: bench
    target: deploy
    clients: 1
    rate: 100
    warmup: 0s
    duration: "{{.vars.duration}}"
    runs: 1
  - id: cleanup
    title: Remove the files
    kind: cleanup
    run: rm -f {{.workdir}}/nothing
`

// deployLab only deploys: a run of it is short, for the interrupt loop.
const deployLab = `id: sigdeploy
title: Deploy only
summary: deploy and clean up
duration: 1m
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
  - id: workdir
    title: Working directory
    kind: run
    run: mkdir -p {{.workdir}}
  - id: deploy
    title: Start the servers
    kind: deploy
    instances: 3
    port: "{{.vars.port}}"
    config: assets/redis.conf.tmpl
  - id: cleanup
    title: Remove the files
    kind: cleanup
    run: rm -f {{.workdir}}/nothing
`

func writeLabDir(t *testing.T, id, yaml string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, id), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, id, "lab.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// event is one line of `dpulab run --json`.
type event map[string]any

func (e event) is(typ, step string) bool {
	return e["type"] == typ && (step == "" || e["step"] == step)
}

// runProc is a `dpulab run --json` started by a test.
type runProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	events chan event
	// out is what dpulab wrote, both streams when they share a pipe.
	out     *testpeer.LockedBuffer
	workdir string // from the workdir step's command, once seen
	mu      sync.Mutex
	exited  chan struct{}
	state   *os.ProcessState
}

// startRun starts the dpulab binary with args; its JSON events (stdout)
// arrive on events and stderr is kept. With sharedPipe, stdout and stderr
// go to one pipe (as `2>&1 | tee`) and closeReader ends its reader.
func startRun(t *testing.T, bin, stateHome string, sharedPipe bool, args ...string) (*runProc, func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+stateHome, "NO_COLOR=1")
	p := &runProc{t: t, cmd: cmd, events: make(chan event, 4096), out: &testpeer.LockedBuffer{}, exited: make(chan struct{})}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	if sharedPipe {
		cmd.Stderr = w
	} else {
		cmd.Stderr = p.out
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	var closeOnce sync.Once
	closeReader := func() { closeOnce.Do(func() { r.Close() }) }
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer close(p.events)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			if sharedPipe {
				p.out.Write(append(append([]byte(nil), line...), '\n'))
			}
			var ev event
			if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
				continue
			}
			if ev.is("step_started", "workdir") {
				if cmds, _ := ev["commands"].([]any); len(cmds) > 0 {
					c, _ := cmds[0].(map[string]any)["cmd"].(string)
					p.mu.Lock()
					p.workdir = strings.TrimPrefix(c, "mkdir -p ")
					p.mu.Unlock()
				}
			}
			select {
			case p.events <- ev:
			default: // nobody waits for that many: samples of a long run
			}
		}
	}()
	go func() {
		cmd.Wait()
		p.mu.Lock()
		p.state = cmd.ProcessState
		p.mu.Unlock()
		close(p.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.exited
		closeReader()
		<-readDone
	})
	return p, closeReader
}

// waitFor returns when an event matching ok arrives; false when the run
// ended first.
func (p *runProc) waitFor(ok func(event) bool) bool {
	for ev := range p.events {
		if ok(ev) {
			return true
		}
	}
	return false
}

// waitOutput returns when s appears in the run's stderr; false when the
// run ended first. It polls: stderr is a plain buffer.
func (p *runProc) waitOutput(s string) bool {
	for !strings.Contains(p.out.String(), s) {
		select {
		case <-p.exited:
			return strings.Contains(p.out.String(), s)
		case <-time.After(10 * time.Millisecond):
		}
	}
	return true
}

// wait waits for the process and returns its exit status (128+N when a
// signal N killed it, as a shell reports it).
func (p *runProc) wait() int {
	<-p.exited
	ws := p.state.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

func (p *runProc) workDir() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.workdir
}

// tail is the last n lines of s: enough to see why a run failed without
// burying the other cases' messages.
func tail(s fmt.Stringer, n int) string {
	lines := strings.Split(strings.TrimRight(s.String(), "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"  ..."}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// serversOf lists the processes running `BIN server` for this build of
// dpulab: their pid and command line.
func serversOf(bin string) map[int]string {
	out := map[int]string{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		line := strings.Join(args, " ")
		if strings.Contains(line, bin+" server") {
			out[pid] = line
		}
	}
	return out
}

// killServers ends what a failed case left, so one failure does not
// cascade into the next case (the port stays busy) or outlive the test.
func killServers(bin string) {
	self := syscall.Getpgrp()
	for pid := range serversOf(bin) {
		if pg, err := syscall.Getpgid(pid); err == nil && pg != self && pg > 1 {
			syscall.Kill(-pg, syscall.SIGKILL)
		}
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// assertNoServers fails when a server of this build is still running, and
// ends it.
func assertNoServers(t *testing.T, bin, what string) {
	t.Helper()
	if left := serversOf(bin); len(left) > 0 {
		var lines []string
		for pid, line := range left {
			lines = append(lines, fmt.Sprintf("  pid %d: %s", pid, line))
		}
		t.Errorf("%s: %d server(s) left running:\n%s", what, len(left), strings.Join(lines, "\n"))
		killServers(bin)
	}
}

// assertInterrupted checks that the results folder dir records a run
// interrupted by by (mid-step: at a step, else between steps) in
// results.json, report.md and report.html, never as killed or unfinished.
func assertInterrupted(t *testing.T, dir, by string, midStep bool) {
	t.Helper()
	r, err := results.LoadResults(dir)
	if err != nil {
		t.Errorf("results: %v", err)
		return
	}
	if r.Status != results.RunInterrupted || r.InterruptedBy != by || r.WriterPID != 0 {
		t.Errorf("results.json: status %q, interrupted_by %q, writer %d; want interrupted by %q", r.Status, r.InterruptedBy, r.WriterPID, by)
	}
	if midStep && r.FailedStep == "" {
		t.Errorf("results.json does not name the step the signal stopped")
	}
	want := "INTERRUPTED by " + by
	for _, f := range []string{results.ReportFile, results.ReportHTMLFile} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Error(err)
			continue
		}
		s := string(b)
		if f == results.ReportHTMLFile {
			s = html.UnescapeString(s)
		}
		if !strings.Contains(s, want) || strings.Contains(s, "NOT FINISHED") || strings.Contains(s, "KILLED") {
			t.Errorf("%s does not say %q (or calls the run unfinished):\n%.1500s", f, want, s)
		}
	}
}

func requireSignalPeers(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds dpulab and runs labs: not in -short")
	}
	bin := testpeer.Dpulab(t)
	t.Cleanup(func() { killServers(bin) })
	return bin
}

// TestRunSignalsCleanUp sends SIGINT, SIGTERM and SIGHUP to a headless run
// at three instants: as the deploy starts, after the first bench, in the
// middle of the second. Each must end the run through cleanup: exit status
// 128+N, no server left, the working directory removed, results kept once
// a bench finished.
func TestRunSignalsCleanUp(t *testing.T) {
	bin := requireSignalPeers(t)
	labDir := writeLabDir(t, "sigtest", sigLab)
	instants := []struct {
		name        string
		at          func(event) bool
		wantResults bool
	}{
		{"deploy", func(ev event) bool { return ev.is("step_started", "deploy") }, false},
		{"between-benches", func(ev event) bool { return ev.is("step_finished", "short") }, true},
		{"mid-bench", func(ev event) bool { return ev.is("progress", "") || ev.is("sample", "") }, true},
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		for _, in := range instants {
			t.Run(sigName(sig)+"/"+in.name, func(t *testing.T) {
				results := filepath.Join(t.TempDir(), "results")
				port := testpeer.FreePorts(t, 3)
				p, _ := startRun(t, bin, t.TempDir(), false, "run", "sigtest", "--lab-dir", labDir, "--json",
					"--results", results, "--set", fmt.Sprint("port=", port))
				at := in.at
				if in.name == "mid-bench" {
					// A progress or sample event of the long bench.
					if !p.waitFor(func(ev event) bool { return ev.is("step_started", "long") }) {
						t.Fatalf("the run ended before the long bench:\n%s", p.out)
					}
				}
				if !p.waitFor(at) {
					t.Fatalf("the run ended before the instant:\n%s", p.out)
				}
				if err := p.cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				if got, want := p.wait(), 128+int(sig); got != want {
					t.Errorf("exit status %d, want %d\n%s", got, want, p.out)
				}
				assertNoServers(t, bin, sigName(sig)+" at "+in.name)
				wd := p.workDir()
				if wd == "" || !strings.HasPrefix(wd, "/tmp/dpulab-sigtest-") {
					t.Fatalf("working directory %q not seen in the events", wd)
				}
				if _, err := os.Stat(wd); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("working directory %s left (stat: %v)\n%s", wd, err, p.out)
					os.RemoveAll(wd)
				}
				_, err := os.Stat(filepath.Join(results, "results.json"))
				if in.wantResults && err != nil {
					t.Errorf("no results.json after the first bench: %v\n%s", err, p.out)
				}
				// However early, the run's end is recorded: interrupted,
				// by this signal, in results.json and both reports.
				assertInterrupted(t, results, sigLabel(sig), in.name != "between-benches")
				if !strings.Contains(p.out.String(), "dpulab: "+sigName(sig)+": stopping the step") {
					t.Errorf("stderr does not say what the signal does:\n%s", p.out)
				}
			})
		}
	}
}

// TestRunOutputGone is `dpulab run 2>&1 | tee log` when tee goes away:
// with Ctrl-C (SIGINT reaches both; our writes during cleanup then fail
// with EPIPE) and on its own (the run ends as on SIGPIPE). Neither may kill
// dpulab before its cleanup.
func TestRunOutputGone(t *testing.T) {
	bin := requireSignalPeers(t)
	labDir := writeLabDir(t, "sigtest", sigLab)
	for _, tc := range []struct {
		name   string
		signal bool
		want   int
	}{
		{"ctrl-c-with-tee", true, 130},
		{"reader-gone", false, 141},
	} {
		t.Run(tc.name, func(t *testing.T) {
			results := filepath.Join(t.TempDir(), "results")
			port := testpeer.FreePorts(t, 3)
			p, closeReader := startRun(t, bin, t.TempDir(), true, "run", "sigtest", "--lab-dir", labDir, "--json",
				"--results", results, "--set", fmt.Sprint("port=", port))
			if !p.waitFor(func(ev event) bool { return ev.is("step_started", "long") }) {
				t.Fatalf("the run ended before the long bench:\n%s", p.out)
			}
			wd := p.workDir()
			if tc.signal {
				if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
					t.Fatal(err)
				}
			}
			closeReader()
			if got := p.wait(); got != tc.want {
				t.Errorf("exit status %d, want %d\n%s", got, tc.want, p.out)
			}
			assertNoServers(t, bin, tc.name)
			if _, err := os.Stat(wd); wd == "" || !errors.Is(err, os.ErrNotExist) {
				t.Errorf("working directory %q left (stat: %v)", wd, err)
				os.RemoveAll(wd)
			}
			if _, err := os.Stat(filepath.Join(results, "results.json")); err != nil {
				t.Errorf("no results.json: %v", err)
			}
		})
	}
}

// TestRunInterruptedDeployLeavesNoServer interrupts a deploy at many
// instants after it starts, with SIGKILL, SIGINT and SIGHUP, then runs the
// lab again with --restart: that run must start its servers (no "already
// answers PING" from servers the killed run left) and, once it is done, no
// server of either may be running. A SIGKILL leaves no chance to clean up:
// the next run must find and stop what the killed one started, from the
// working directory saved progress recorded before the first start.
func TestRunInterruptedDeployLeavesNoServer(t *testing.T) {
	bin := requireSignalPeers(t)
	labDir := writeLabDir(t, "sigdeploy", deployLab)
	port := testpeer.FreePorts(t, 3)
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGINT, syscall.SIGHUP} {
		t.Run(sigName(sig), func(t *testing.T) {
			// One state directory across the loop, as a person's.
			state := t.TempDir()
			args := []string{"run", "sigdeploy", "--lab-dir", labDir, "--json", "--restart", "--set", fmt.Sprint("port=", port)}
			for delay := time.Duration(0); delay <= 400*time.Millisecond; delay += 50 * time.Millisecond {
				what := fmt.Sprintf("%s %v after the deploy started", sigName(sig), delay)
				p, _ := startRun(t, bin, state, false, append(args, "--results", t.TempDir())...)
				if !p.waitFor(func(ev event) bool { return ev.is("step_started", "deploy") }) {
					t.Fatalf("%s: the run ended before the deploy:\n%s", what, p.out)
				}
				// A delay to place the signal, not a timed assertion.
				time.Sleep(delay)
				p.cmd.Process.Signal(sig) // the run may have finished: fine
				p.wait()
				again, _ := startRun(t, bin, state, false, append(args, "--results", t.TempDir())...)
				if code := again.wait(); code != 0 || strings.Contains(again.out.String(), "already answers PING") {
					t.Errorf("%s: the next run (exit status %d) did not start cleanly:\n%s", what, code, tail(again.out, 12))
				}
				assertNoServers(t, bin, what)
				for _, wd := range []string{p.workDir(), again.workDir()} {
					if wd != "" {
						if _, err := os.Stat(wd); !errors.Is(err, os.ErrNotExist) {
							t.Errorf("%s: working directory %s left", what, wd)
							os.RemoveAll(wd)
						}
					}
				}
			}
		})
	}
}

// slowCleanupLab's cleanup step takes a while, so that signals land in it.
const slowCleanupLab = `id: slowclean
title: Slow cleanup
summary: deploy, a long bench, a slow cleanup
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
    title: Slow cleanup
    kind: cleanup
    run: sleep 2
`

// TestRunSignalsDuringCleanup: a second signal while cleanup runs only
// says so, and cleanup completes; a third abandons it at once, and the
// next run of the lab removes what the abandoned one left (its working
// directory stayed in /tmp when the test did not run the lab again).
func TestRunSignalsDuringCleanup(t *testing.T) {
	bin := requireSignalPeers(t)
	labDir := writeLabDir(t, "slowclean", slowCleanupLab)
	for _, tc := range []struct {
		signals int
		notice  string
	}{
		{2, "dpulab: SIGTERM: still cleaning up; one more abandons cleanup"},
		{3, "dpulab: SIGTERM: cleanup abandoned: servers the lab started may still be running"},
	} {
		t.Run(fmt.Sprint(tc.signals, "-signals"), func(t *testing.T) {
			port := testpeer.FreePorts(t, 2)
			state := t.TempDir()
			p, _ := startRun(t, bin, state, false, "run", "slowclean", "--lab-dir", labDir, "--json",
				"--results", t.TempDir(), "--set", fmt.Sprint("port=", port))
			if !p.waitFor(func(ev event) bool { return ev.is("step_started", "long") }) {
				t.Fatalf("the run ended before the bench:\n%s", p.out)
			}
			p.cmd.Process.Signal(syscall.SIGINT)
			if !p.waitFor(func(ev event) bool { return ev.is("step_started", "cleanup") }) {
				t.Fatalf("the run ended before its cleanup:\n%s", p.out)
			}
			// One at a time: the kernel merges a signal sent while the
			// same one is still pending.
			acks := []string{"still cleaning up", "cleanup abandoned"}
			for i := 1; i < tc.signals; i++ {
				p.cmd.Process.Signal(syscall.SIGTERM)
				if !p.waitOutput(acks[i-1]) {
					t.Fatalf("signal %d: no %q before the run ended:\n%s", i+1, acks[i-1], p.out)
				}
			}
			if got := p.wait(); got != 130 {
				t.Errorf("exit status %d, want 130 (the first signal's)\n%s", got, p.out)
			}
			out := p.out.String()
			if !strings.Contains(out, tc.notice) {
				t.Errorf("stderr lacks %q:\n%s", tc.notice, out)
			}
			if tc.signals == 2 {
				if !strings.Contains(out, "ok: cleanup done") {
					t.Errorf("cleanup did not complete:\n%s", out)
				}
				assertNoServers(t, bin, "two signals")
			} else if strings.Contains(out, "ok: cleanup done") {
				t.Errorf("the third signal did not abandon the cleanup:\n%s", out)
			} else {
				// Abandoned: what is left is the next run's to remove, as
				// the notice says. Run it, so nothing is left in /tmp.
				wd := leftWorkdir(t, state, "slowclean")
				// The notice names the directory, its host and the
				// commands that remove it by hand.
				if want := "dpulab: " + wd + " may be left on this machine (local), with processes started from it; remove it by hand with: pkill -f -- " + wd + "; rm -rf -- " + wd; !strings.Contains(out, want) {
					t.Errorf("the abandon notice does not name what is left and how to remove it, %q:\n%s", want, out)
				}
				nextRunCleans(t, bin, state, wd, "slowclean", "--lab-dir", labDir)
				assertNoServers(t, bin, "three signals, then the next run")
			}
		})
	}
}

// TestRunUnderNohup: started with SIGHUP ignored, a run keeps ignoring it
// (catching it would undo nohup); SIGINT still ends it through cleanup.
func TestRunUnderNohup(t *testing.T) {
	bin := requireSignalPeers(t)
	nohup := testpeer.Require(t, "nohup")
	labDir := writeLabDir(t, "sigtest", sigLab)
	port := testpeer.FreePorts(t, 3)
	// nohup execs dpulab: the pid is dpulab's.
	p, _ := startRun(t, nohup, t.TempDir(), false, bin, "run", "sigtest", "--lab-dir", labDir, "--json",
		"--results", t.TempDir(), "--set", fmt.Sprint("port=", port))
	if !p.waitFor(func(ev event) bool { return ev.is("step_started", "long") }) {
		t.Fatalf("the run ended before the long bench:\n%s", p.out)
	}
	// Pending signals are delivered lowest number first: SIGHUP (1), then
	// SIGINT (2).
	p.cmd.Process.Signal(syscall.SIGHUP)
	p.cmd.Process.Signal(syscall.SIGINT)
	if got := p.wait(); got != 130 {
		t.Errorf("exit status %d, want 130: SIGHUP must stay ignored under nohup\n%s", got, p.out)
	}
	if strings.Contains(p.out.String(), "SIGHUP") {
		t.Errorf("SIGHUP was acted on under nohup:\n%s", p.out)
	}
	assertNoServers(t, bin, "nohup")
}

// TestRunKilledReadsKilled is a headless run killed with SIGKILL after its
// first bench: nothing can record its end, so its results.json still says
// running. A reader (dpulab report) calls it killed, and the next run of
// the lab, resuming it, lists the killed attempt and labels the bench it
// measured as that attempt's.
func TestRunKilledReadsKilled(t *testing.T) {
	bin := requireSignalPeers(t)
	labDir := writeLabDir(t, "sigtest", sigLab)
	dir := filepath.Join(t.TempDir(), "results")
	state := t.TempDir()
	port := fmt.Sprint("port=", testpeer.FreePorts(t, 3))
	p, _ := startRun(t, bin, state, false, "run", "sigtest", "--lab-dir", labDir, "--json", "--results", dir, "--set", port)
	if !p.waitFor(func(ev event) bool { return ev.is("step_started", "long") }) {
		t.Fatalf("the run ended before the long bench:\n%s", p.out)
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.wait()
	killServers(bin)
	if wd := p.workDir(); strings.HasPrefix(wd, "/tmp/dpulab-sigtest-") {
		defer os.RemoveAll(wd)
	}
	r, err := results.LoadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != results.RunRunning || r.State() != results.RunKilled {
		t.Fatalf("a killed run's results.json: status %q, read as %q; want running, read as killed", r.Status, r.State())
	}
	out, err := exec.Command(bin, "report", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("dpulab report: %v\n%s", err, out)
	}
	md, _ := os.ReadFile(filepath.Join(dir, results.ReportFile))
	if !strings.Contains(string(md), "KILLED: the run never finished") {
		t.Errorf("report.md of a killed run, re-rendered, does not say KILLED:\n%.1200s", md)
	}
	// Resume it with a short long bench: it runs to its end.
	p2, _ := startRun(t, bin, state, false, "run", "sigtest", "--lab-dir", labDir, "--json", "--set", port, "--set", "duration=1s")
	if !p2.waitFor(func(ev event) bool { return ev.is("lab_finished", "") }) {
		t.Fatalf("the resumed run did not finish:\n%s", p2.out)
	}
	if code := p2.wait(); code != 0 {
		t.Fatalf("resumed run: exit status %d\n%s", code, p2.out)
	}
	r, err = results.LoadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != results.RunComplete || len(r.Attempts) != 1 || r.Attempts[0].Status != results.RunKilled {
		t.Fatalf("after the resume: status %q, attempts %+v; want complete after one killed attempt", r.Status, r.Attempts)
	}
	// The short bench ran in the killed attempt, the long one in this one.
	for _, b := range r.Benches {
		want := map[string]int{"short": 1, "long": 2}[b.Step]
		if b.Attempt != want {
			t.Errorf("bench %s measured by attempt %d, want %d", b.Step, b.Attempt, want)
		}
	}
	md, _ = os.ReadFile(filepath.Join(dir, results.ReportFile))
	if !strings.Contains(string(md), "EARLIER ATTEMPT: measured by attempt 1 of 2") || !strings.Contains(string(md), "attempt 1 of 2, started") {
		t.Errorf("report.md does not label the killed attempt's bench:\n%.3000s", md)
	}
}
