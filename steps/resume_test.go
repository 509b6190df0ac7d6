//go:build unix

package steps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/dpulab/dpulab/internal/osproc"
	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/labs"
)

// counterLab has three steps that each append their id to a log, so a test
// can see which steps ran and how often; step two fails until a flag file
// exists, and may sleep so a test can kill the run in the middle of it.
func counterLab(t testing.TB, dir string) *labs.Lab {
	return loadLab(t, fmt.Sprintf(`
id: counter
title: Counter
summary: counts steps
duration: 1m
roles:
  local: this machine
variables:
  sleep:
    type: int
    default: 0
    description: seconds step two sleeps
steps:
  - id: one
    title: One
    kind: run
    run:
      - echo one >> %[1]s/log
  - id: two
    title: Two
    kind: run
    run:
      - echo two >> %[1]s/log
      - sleep {{.vars.sleep}}
      - test -f %[1]s/flag
    hint: create the flag file
  - id: three
    title: Three
    kind: run
    run:
      - echo three >> %[1]s/log
  - id: cleanup
    title: Cleanup
    kind: cleanup
    run:
      - echo cleanup >> %[1]s/log
`, dir))
}

func readLog(t *testing.T, dir string) string {
	b, _ := os.ReadFile(filepath.Join(dir, "log"))
	return strings.Join(strings.Fields(string(b)), " ")
}

func TestResumeAfterFailedStep(t *testing.T) {
	dir := t.TempDir()
	lab := counterLab(t, dir)
	stateDir := t.TempDir()
	rec := &recorder{}
	e := newEngine(t, lab, Options{StateDir: stateDir}, rec)
	err := e.Run(testCtx(t, 30*time.Second))
	if err == nil || !strings.Contains(err.Error(), "step two") {
		t.Fatalf("run error = %v, want step two failed", err)
	}
	f := rec.finished()["two"]
	if f.Status != results.Failed || f.Host != "local" || f.Hint == "" || !strings.Contains(f.Err, "test -f") {
		t.Errorf("failure event = %+v, want host, command and hint", f)
	}
	if got := readLog(t, dir); got != "one two cleanup" {
		t.Fatalf("log after first run = %q", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "flag"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rec2 := &recorder{}
	e2 := newEngine(t, lab, Options{StateDir: stateDir}, rec2)
	if r := e2.Resume(); r != 1 {
		t.Fatalf("Resume() = %d, want 1 (step two)", r)
	}
	if st := e2.Steps(); st[0].Status != results.Done || st[1].Status != results.Failed {
		t.Errorf("saved statuses = %+v", st)
	}
	if err := e2.Run(testCtx(t, 30*time.Second)); err != nil {
		t.Fatalf("resumed run: %v", err)
	}
	if got := readLog(t, dir); got != "one two cleanup two three cleanup" {
		t.Errorf("log after resume = %q, want step one not run again", got)
	}
	// A finished lab starts over on the next run.
	e3 := newEngine(t, lab, Options{StateDir: stateDir}, nil)
	if r := e3.Resume(); r != 0 {
		t.Errorf("Resume() after a finished run = %d, want 0", r)
	}
	// --restart ignores progress.
	e4 := newEngine(t, lab, Options{StateDir: stateDir, Restart: true}, nil)
	if r := e4.Resume(); r != 0 {
		t.Errorf("Resume() with Restart = %d, want 0", r)
	}
}

func TestFromAndOnly(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "flag"), nil, 0o644)
	lab := counterLab(t, dir)
	e := newEngine(t, lab, Options{Only: "three"}, nil)
	if err := e.Run(testCtx(t, 30*time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := readLog(t, dir); got != "three" {
		t.Errorf("--only three ran %q", got)
	}
	os.Remove(filepath.Join(dir, "log"))
	e = newEngine(t, lab, Options{From: "two"}, nil)
	if err := e.Run(testCtx(t, 30*time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := readLog(t, dir); got != "two three cleanup" {
		t.Errorf("--from two ran %q", got)
	}
	if _, err := New(lab, Options{From: "nope", StateDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "one, two, three") {
		t.Errorf("unknown --from: %v", err)
	}
}

func TestCleanupRunsOnAbort(t *testing.T) {
	dir := t.TempDir()
	lab := counterLab(t, dir)
	rec := &recorder{}
	e := newEngine(t, lab, Options{Vars: map[string]string{"sleep": "30"}}, rec)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// Cancel (Ctrl-C) once step two is running.
		for {
			if strings.Contains(readLog(t, dir), "two") {
				time.Sleep(100 * time.Millisecond)
				cancel()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	start := time.Now()
	err := e.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("Run after cancel = %v, want the interrupted step named", err)
	}
	if time.Since(start) > 20*time.Second {
		t.Errorf("cancel did not stop the sleeping step")
	}
	if got := readLog(t, dir); got != "one two cleanup" {
		t.Errorf("log = %q, want cleanup to run after the abort", got)
	}
	if f := rec.finished()["cleanup"]; f.Status != results.Done {
		t.Errorf("cleanup step = %+v", f)
	}
}

// TestMain lets the test binary play a `dpulab run` that a test kills.
func TestMain(m *testing.M) {
	if os.Getenv("DPULAB_STEPS_CHILD") == "1" {
		os.Exit(childRun())
	}
	if os.Getenv("DPULAB_STATE_WRITER") != "" {
		// The state writer is killed mid-save: a temporary home made
		// here would never be removed (and it writes only its own file).
		os.Exit(m.Run())
	}
	restore := testpeer.IsolateUserDirs()
	code := m.Run()
	testpeer.RemoveBuilds()
	restore()
	os.Exit(code)
}

// childRun runs the counter lab with a long-sleeping step two, or the
// quickstart (CHILD_LAB=quickstart) with CHILD_VARS and CHILD_BIN.
func childRun() int {
	stateDir := os.Getenv("CHILD_STATE")
	if os.Getenv("CHILD_LAB") == "quickstart" {
		l, err := labs.Find("quickstart")
		if err != nil {
			return 2
		}
		var vars map[string]string
		json.Unmarshal([]byte(os.Getenv("CHILD_VARS")), &vars)
		e, err := New(l, Options{StateDir: stateDir, ResultsDir: filepath.Join(stateDir, "res"), Vars: vars, Binary: os.Getenv("CHILD_BIN"), Yes: true})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		if err := e.Run(context.Background()); err != nil {
			return 1
		}
		return 0
	}
	l, err := labs.Load(os.DirFS(os.Getenv("CHILD_LAB")), ".")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	e, err := New(l, Options{StateDir: stateDir, ResultsDir: filepath.Join(stateDir, "res"), Vars: map[string]string{"sleep": "60"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := e.Run(context.Background()); err != nil {
		return 1
	}
	return 0
}

func TestResumeAfterSIGKILL(t *testing.T) {
	dir := t.TempDir()
	lab := counterLab(t, dir)
	stateDir := t.TempDir()
	// The child loads the same lab from a directory of its own.
	childLab := t.TempDir()
	b, _ := labsYAML(lab)
	os.WriteFile(filepath.Join(childLab, "lab.yaml"), b, 0o644)

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "DPULAB_STEPS_CHILD=1", "CHILD_STATE="+stateDir, "CHILD_LAB="+childLab)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	statePath := filepath.Join(stateDir, "counter.json")
	for {
		if s, err := LoadState(statePath); err == nil && s != nil && s.Steps["one"].Status == results.Done && strings.Contains(readLog(t, dir), "two") {
			break
		}
		if time.Now().After(deadline) {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
			t.Fatal("child never got to step two")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// SIGKILL the child and the sleep it started: nothing gets to clean up.
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) {
		t.Fatalf("child: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "flag"), nil, 0o644)
	rec := &recorder{}
	// The saved variables (sleep=60) carry over unless set again.
	e := newEngine(t, lab, Options{StateDir: stateDir, Vars: map[string]string{"sleep": "0"}}, rec)
	if r := e.Resume(); r != 1 {
		t.Fatalf("Resume() after SIGKILL in step two = %d, want 1", r)
	}
	if err := e.Run(testCtx(t, 30*time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := readLog(t, dir); got != "one two two three cleanup" {
		t.Errorf("log = %q, want the run to continue at step two", got)
	}
}

// labsYAML re-reads a test lab's yaml from its FS.
func labsYAML(l *labs.Lab) ([]byte, error) {
	return l.ReadFile("lab.yaml")
}

func TestStateSaveIsAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "lab.json")
	s := &State{Lab: "lab", RunID: "r1", Steps: map[string]StepState{"a": {Status: results.Done}}}
	if err := s.Save(p); err != nil {
		t.Fatal(err)
	}
	// A crash mid-write leaves a temp file beside the real one; the real
	// one must still read back whole.
	if err := os.WriteFile(filepath.Join(dir, ".lab.json.tmp-123"), []byte(`{"version":1,"lab":"la`), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := LoadState(p)
	if err != nil || got.RunID != "r1" || got.Steps["a"].Status != results.Done {
		t.Fatalf("LoadState = %+v, %v", got, err)
	}
	s.Steps["b"] = StepState{Status: results.Failed, Err: "boom"}
	if err := s.Save(p); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".lab.json.tmp-") && e.Name() != ".lab.json.tmp-123" {
			t.Errorf("Save left a temp file: %s", e.Name())
		}
	}
	var raw map[string]any
	b, _ := os.ReadFile(p)
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatalf("state is not JSON: %v", err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("state mode = %v, want 0600", fi.Mode().Perm())
	}
	// A damaged file is an error that says what to do, not a panic.
	os.WriteFile(p, []byte("{not json"), 0o600)
	if _, err := LoadState(p); err == nil || !strings.Contains(err.Error(), "--restart") {
		t.Errorf("damaged state: %v", err)
	}
	// Missing is not an error.
	if s, err := LoadState(filepath.Join(dir, "none.json")); s != nil || err != nil {
		t.Errorf("missing state = %v, %v", s, err)
	}
}

func TestStateSurvivesSIGKILLDuringSaves(t *testing.T) {
	if os.Getenv("DPULAB_STATE_WRITER") != "" {
		return
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "lab.json")
	// The children's temporary directory: a killed child must leave
	// nothing in it.
	tmp := t.TempDir()
	// The child saves state in a loop; killing it at random moments must
	// never leave a file that does not load.
	for round := range 5 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestStateWriterChild$")
		cmd.Env = append(os.Environ(), "DPULAB_STATE_WRITER="+p, "TMPDIR="+tmp)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(50+round*37) * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if s, err := LoadState(p); err != nil || s == nil || s.Lab != "lab" {
			t.Fatalf("round %d: state after SIGKILL = %+v, %v", round, s, err)
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		var names []string
		for _, d := range left {
			names = append(names, d.Name())
		}
		t.Errorf("the killed children left %v in their temporary directory", names)
	}
}

func TestStateWriterChild(t *testing.T) {
	p := os.Getenv("DPULAB_STATE_WRITER")
	if p == "" {
		t.Skip("helper for TestStateSurvivesSIGKILLDuringSaves")
	}
	s := &State{Lab: "lab", Steps: map[string]StepState{}}
	for i := 0; ; i++ {
		s.Steps[fmt.Sprint("step", i%50)] = StepState{Status: results.Done, Err: strings.Repeat("x", i%4000)}
		if err := s.Save(p); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRetryAndSkip drives the engine as the TUI does: RunStep, retry after
// fixing the cause, Skip.
func TestRetryAndSkip(t *testing.T) {
	dir := t.TempDir()
	lab := counterLab(t, dir)
	stateDir := t.TempDir()
	rec := &recorder{}
	e := newEngine(t, lab, Options{StateDir: stateDir}, rec)
	ctx := testCtx(t, 30*time.Second)
	if st := e.RunStep(ctx, 0); st != results.Done {
		t.Fatalf("step one = %v", st)
	}
	if st := e.RunStep(ctx, 1); st != results.Failed {
		t.Fatalf("step two before the flag = %v", st)
	}
	os.WriteFile(filepath.Join(dir, "flag"), nil, 0o644)
	if st := e.RunStep(ctx, 1); st != results.Done {
		t.Fatalf("step two retried = %v", st)
	}
	e.Skip(2)
	if got := e.Steps()[2].Status; got != results.Skipped {
		t.Errorf("step three after Skip = %v", got)
	}
	if r := e.Resume(); r != 4 {
		t.Errorf("Resume() = %d, want past the last step", r)
	}
	// The statuses are saved: a new engine sees them.
	e2 := newEngine(t, lab, Options{StateDir: stateDir}, nil)
	if st := e2.Steps(); st[1].Status != results.Done || st[2].Status != results.Skipped {
		t.Errorf("saved = %+v", st)
	}
	if got := readLog(t, dir); got != "one two two" {
		t.Errorf("log = %q", got)
	}
}

func TestSecondProcessCannotRunTheSameLab(t *testing.T) {
	dir := t.TempDir()
	lab := counterLab(t, dir)
	stateDir := t.TempDir()
	// This process takes the lock; a second New here reuses it.
	newEngine(t, lab, Options{StateDir: stateDir}, nil)
	newEngine(t, lab, Options{StateDir: stateDir}, nil)
	// Another process is refused while this one lives.
	childLab := t.TempDir()
	b, _ := labsYAML(lab)
	os.WriteFile(filepath.Join(childLab, "lab.yaml"), b, 0o644)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "DPULAB_STEPS_CHILD=1", "CHILD_STATE="+stateDir, "CHILD_LAB="+childLab)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "another dpulab is running this lab") {
		t.Errorf("second process: %v\n%s", err, out)
	}
}

// A lock held for a moment more (a killed run's command forked but not yet
// exec'd) is waited for, not reported; one held past the patience is.
func TestLockWaitsOutAMomentaryHolder(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lab.json.lock")
	holder, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if err := syscall.Flock(int(holder.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	// Another open file description of the same file conflicts with the
	// holder's flock, as another process's would.
	f, err := os.OpenFile(p, os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := flockPatiently(f, 0); !errors.Is(err, osproc.ErrLocked) {
		t.Fatalf("held lock, no patience: %v, want osproc.ErrLocked", err)
	}
	released := make(chan struct{})
	go func() {
		time.Sleep(200 * time.Millisecond)
		syscall.Flock(int(holder.Fd()), syscall.LOCK_UN)
		close(released)
	}()
	if err := flockPatiently(f, time.Minute); err != nil {
		t.Fatalf("lock released while waiting: %v", err)
	}
	<-released
}
