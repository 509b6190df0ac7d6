//go:build unix

package steps

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/dpulab/dpulab/runner"
)

const outcomeLab = `
id: outcome
title: Outcomes
summary: a lab whose middle step can fail or hang
duration: 1m
roles:
  local: this machine
variables:
  middle:
    type: string
    default: "true"
    pattern: '^(true|false|sleep 30)$'
    description: what the middle step runs
steps:
  - id: first
    title: First
    kind: run
    run:
      - mkdir -p {{.workdir}}
      - echo kept > {{.workdir}}/file
  - id: middle
    title: Middle
    kind: run
    run:
      - sh -c {{.vars.middle}}
    hint: the lab's own hint for its middle step
  - id: last
    title: Last
    kind: run
    run: ["true"]
`

func TestResultsSayAFailedRunFailed(t *testing.T) {
	rec := &recorder{}
	resDir := filepath.Join(t.TempDir(), "res")
	e := newEngine(t, loadLab(t, outcomeLab), Options{ResultsDir: resDir, Vars: map[string]string{"middle": "false"}}, rec)
	if err := e.Run(testCtx(t, time.Minute)); err == nil {
		t.Fatal("a failing step did not fail the run")
	}
	r, err := results.LoadResults(resDir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != results.RunFailed || r.FailedStep != "middle" || !strings.Contains(r.Error, "exit status 1") {
		t.Errorf("status %q failed_step %q error %q, want failed at middle with its exit status", r.Status, r.FailedStep, r.Error)
	}
	got := map[string]results.Status{}
	for _, s := range r.Steps {
		got[s.ID] = s.Status
	}
	if got["first"] != results.Done || got["middle"] != results.Failed || got["last"] != results.Pending {
		t.Errorf("step outcomes = %v", got)
	}
	md, err := os.ReadFile(filepath.Join(resDir, results.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "Run status: FAILED at step middle") || !strings.Contains(string(md), "| Middle (`middle`) | run | failed: ") {
		t.Errorf("report.md does not say the run failed at middle:\n%s", md)
	}
	// The error names the host once.
	if f := rec.finished()["middle"]; strings.Contains(f.Err, "on local") || f.Host != "local" {
		t.Errorf("step error %q (host %q): want the host in its own field only", f.Err, f.Host)
	}
}

func TestResultsSayAnInterruptedRunWasInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(testCtx(t, time.Minute))
	rec := &recorder{}
	resDir := filepath.Join(t.TempDir(), "res")
	e := newEngine(t, loadLab(t, outcomeLab), Options{ResultsDir: resDir, Vars: map[string]string{"middle": "sleep 30"}}, nil)
	e.opts.Emit = func(ev Event) {
		rec.emit(ev)
		if s, ok := ev.(StepStarted); ok && s.Step == "middle" {
			time.AfterFunc(200*time.Millisecond, cancel)
		}
	}
	if err := e.Run(ctx); err == nil {
		t.Fatal("an interrupted run returned no error")
	}
	r, err := results.LoadResults(resDir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != results.RunInterrupted || r.FailedStep != "middle" {
		t.Errorf("status %q at %q, want interrupted at middle", r.Status, r.FailedStep)
	}
	md, _ := os.ReadFile(filepath.Join(resDir, results.ReportFile))
	if !strings.Contains(string(md), "INTERRUPTED during step middle") {
		t.Errorf("report.md does not say the run was interrupted:\n%s", md)
	}
	var fin LabFinished
	for _, ev := range rec.events() {
		if f, ok := ev.(LabFinished); ok {
			fin = f
		}
	}
	if fin.Run != results.RunInterrupted {
		t.Errorf("LabFinished.Run = %q, want interrupted", fin.Run)
	}
	// An interruption is not the lab's fault: its hint would mislead.
	if f := rec.finished()["middle"]; f.Hint != "" {
		t.Errorf("interrupted step shows the lab's hint %q", f.Hint)
	}
}

func TestCompleteRunIsFinishedAndStartsOver(t *testing.T) {
	stateDir := t.TempDir()
	lab := loadLab(t, outcomeLab)
	e := newEngine(t, lab, Options{StateDir: stateDir}, nil)
	if err := e.Run(testCtx(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	st, err := LoadLabState(stateDir, lab.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Finished() || st.Status != results.RunComplete {
		t.Errorf("saved status %q, want complete", st.Status)
	}
	r, err := results.LoadResults(e.ResultsDir())
	if err != nil || r.Status != results.RunComplete {
		t.Fatalf("results status %v (%v), want complete", r, err)
	}
	e2 := newEngine(t, lab, Options{StateDir: stateDir}, nil)
	if e2.Resume() != 0 || e2.RunID() == e.RunID() && e2.workdir() == e.workdir() {
		t.Errorf("a finished lab resumes at %d (run %s), want a fresh run from step 0", e2.Resume(), e2.RunID())
	}
}

func TestWorkdirRemovedWithoutACleanupStep(t *testing.T) {
	lab := loadLab(t, outcomeLab)
	e := newEngine(t, lab, Options{}, nil)
	if err := e.Run(testCtx(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(e.workdir()); !os.IsNotExist(err) {
		t.Errorf("a lab without a cleanup step left %s (stat: %v)", e.workdir(), err)
	}
}

func TestUnwritableResultsFolderRefusedBeforeTheFirstStep(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := New(loadLab(t, outcomeLab), Options{StateDir: t.TempDir(), ResultsDir: filepath.Join(file, "results")})
	if err == nil || !strings.Contains(err.Error(), "--results") {
		t.Fatalf("New with results under a file: %v, want an error saying to choose another --results", err)
	}
}

func TestCleanupSkipsHostsNoRunReached(t *testing.T) {
	// A closed loopback port: the connection is refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	invPath := filepath.Join(dir, "hosts.yaml")
	inv := fmt.Sprintf("known_hosts: %s\nhosts:\n  - name: gone\n    address: 127.0.0.1\n    port: %d\n    user: nobody\n    roles: [server]\n", filepath.Join(dir, "known_hosts"), port)
	if err := os.WriteFile(invPath, []byte(inv), 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := runner.LoadInventory(invPath)
	if err != nil {
		t.Fatal(err)
	}
	lab := loadLab(t, `
id: unreached
title: Unreached
summary: a host that refuses connections
duration: 1m
roles:
  server: a lab host
steps:
  - id: work
    title: Work
    kind: run
    on: [server]
    run: ["true"]
  - id: tidy
    title: Tidy
    kind: cleanup
    on: [server]
    run: ["true"]
`)
	rec := &recorder{}
	e := newEngine(t, lab, Options{Inventory: in}, rec)
	err = e.Run(testCtx(t, time.Minute))
	if err == nil {
		t.Fatal("a run on a host that refuses connections succeeded")
	}
	if f := rec.finished()["tidy"]; f.Status == results.Failed {
		t.Errorf("cleanup failed on a host no run reached: %s", f.Err)
	}
	if out := strings.Join(rec.output(), "\n"); !strings.Contains(out, "no run of this lab reached it") {
		t.Errorf("cleanup did not say why it left the host alone:\n%s", out)
	}
	if strings.Count(err.Error(), "gone") > 2 {
		t.Errorf("the error repeats the host: %v", err)
	}
}

func TestRunRefusesUnrenderableValuesBeforeTheFirstStep(t *testing.T) {
	canary := filepath.Join(t.TempDir(), "canary")
	lab := loadLab(t, `
id: preflight
title: Preflight
summary: a value only the second step cannot take
duration: 1m
roles:
  local: this machine
variables:
  canary:
    type: string
    default: /nonexistent
    description: a file the first step creates
  msg:
    type: string
    default: hello
    description: a line of a here-document
steps:
  - id: first
    title: First
    kind: run
    run:
      - touch {{.vars.canary}}
  - id: second
    title: Second
    kind: run
    run:
      - |
        cat <<EOF
        {{.vars.msg}}
        EOF
`)
	e := newEngine(t, lab, Options{Vars: map[string]string{"canary": canary, "msg": "EOF"}}, nil)
	err := e.Run(testCtx(t, time.Minute))
	if err == nil || !strings.Contains(err.Error(), "step second") || !strings.Contains(err.Error(), "nothing was run") {
		t.Fatalf("run = %v, want step second refused before anything ran", err)
	}
	if _, err := os.Stat(canary); !os.IsNotExist(err) {
		t.Errorf("the first step ran although the second could never render (stat: %v)", err)
	}
}

func TestOpeningALabLeavesNoResultsFolder(t *testing.T) {
	res := filepath.Join(t.TempDir(), "a", "b", "results")
	e := newEngine(t, loadLab(t, outcomeLab), Options{ResultsDir: res}, nil)
	if _, err := os.Stat(filepath.Dir(filepath.Dir(res))); !os.IsNotExist(err) {
		t.Errorf("the results folder's check left %s behind (stat: %v)", filepath.Dir(filepath.Dir(res)), err)
	}
	if err := e.Run(testCtx(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(res, results.ResultsFile)); err != nil {
		t.Errorf("the run wrote no results: %v", err)
	}
}

func TestResultsDefaultToTheUsersDataFolder(t *testing.T) {
	data := t.TempDir()
	t.Setenv("XDG_DATA_HOME", data)
	rec := &recorder{}
	lab := loadLab(t, outcomeLab)
	e, err := New(lab, Options{StateDir: t.TempDir(), Emit: rec.emit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(e.workdir()) })
	want := filepath.Join(data, "dpulab", "results", lab.ID, e.RunID())
	if e.ResultsDir() != want {
		t.Errorf("results go to %s, want %s", e.ResultsDir(), want)
	}
	if err := e.Run(testCtx(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	var started LabStarted
	for _, ev := range rec.events() {
		if s, ok := ev.(LabStarted); ok {
			started = s
		}
	}
	if started.ResultsDir != want {
		t.Errorf("the run did not say where its results go before the first step: %q", started.ResultsDir)
	}
	if _, err := os.Stat(filepath.Join(want, results.ResultsFile)); err != nil {
		t.Error(err)
	}
}
