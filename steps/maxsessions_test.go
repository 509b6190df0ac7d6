//go:build unix

package steps

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/dpulab/dpulab/internal/testpeer"
)

// procsCarrying lists the processes of this machine whose command line
// contains marker.
func procsCarrying(t testing.TB, marker string) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(b, []byte(marker)) {
			continue
		}
		out = append(out, e.Name()+": "+string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
	}
	return out
}

// TestManyInstancesWithinSSHDsDefaultMaxSessions deploys two groups of 30
// instances on a host whose sshd keeps OpenSSH's default MaxSessions 10,
// then cleans up: every server must start, and none may be left.
func TestManyInstancesWithinSSHDsDefaultMaxSessions(t *testing.T) {
	if testing.Short() {
		t.Skip("deploys 60 servers over sshd")
	}
	sshd := testpeer.StartSSHD(t, testpeer.SSHDConfig("MaxSessions 10"))
	bin := dpulabBinary(t)
	in := sshdInventory(t, sshd, "roles: [server]")
	port := freePorts(t, 60)
	lab := loadLab(t, fmt.Sprintf(`
id: many
title: Many instances
summary: two groups of 30 servers on one host
duration: 5m
roles:
  server: a lab host
steps:
  - id: deploy-a
    title: Group a
    kind: deploy
    on: [server]
    group: a
    instances: "30"
    port: "%d"
  - id: deploy-b
    title: Group b
    kind: deploy
    on: [server]
    group: b
    instances: "30"
    port: "%d"
`, port, port+30))
	rec := &recorder{}
	e := newEngine(t, lab, Options{Binary: bin, Inventory: in, Yes: true}, rec)
	err := e.Run(testCtx(t, 5*time.Minute))
	if err != nil {
		t.Errorf("deploying 60 instances through MaxSessions 10: %v", err)
	}
	if out := strings.Join(rec.output(), "\n"); strings.Contains(out, "open failed") {
		t.Errorf("a session was refused and surfaced:\n%s", out)
	}
	if left := procsCarrying(t, e.workdir()); len(left) > 0 {
		t.Errorf("%d processes left after cleanup, e.g. %s", len(left), left[0])
	}
	st, _ := LoadState(e.StatePath())
	if st == nil || len(st.Procs) != 0 {
		t.Errorf("processes still recorded after cleanup: %+v", st)
	}
	if _, err := os.Stat(e.workdir()); !os.IsNotExist(err) {
		t.Errorf("cleanup left %s (stat: %v)", e.workdir(), err)
	}
}

// TestUnrecordedServerOfThisRunIsStoppedOnResume: a start interrupted
// after the server ran but before its pid was saved leaves a server that
// progress does not list. The resumed run's deploy finds it by its
// instance's log path and stops it instead of refusing the port forever.
func TestUnrecordedServerOfThisRunIsStoppedOnResume(t *testing.T) {
	if testing.Short() {
		t.Skip("starts dpulab servers")
	}
	bin := dpulabBinary(t)
	port := freePorts(t, 2)
	lab := loadLab(t, fmt.Sprintf(`
id: unrecorded
title: Unrecorded
summary: a deploy whose pids were lost
duration: 1m
roles:
  local: this machine
steps:
  - id: deploy
    title: Deploy
    kind: deploy
    group: g
    instances: "2"
    port: "%d"
  - id: after
    title: After
    kind: run
    run:
      - "true"
`, port))
	stateDir := t.TempDir()
	e := newEngine(t, lab, Options{Binary: bin, StateDir: stateDir}, nil)
	ctx := testCtx(t, 2*time.Minute)
	if st := e.RunStep(ctx, 0); st != results.Done {
		t.Fatalf("deploy: %v", st)
	}
	// Lose the pids, as a kill between start and save would.
	e.mu.Lock()
	e.state.Procs = nil
	e.state.Steps["deploy"] = StepState{Status: results.Running}
	if err := e.saveStateLocked(); err != nil {
		t.Fatal(err)
	}
	e.mu.Unlock()
	e.hosts.close()

	rec := &recorder{}
	e2 := newEngine(t, lab, Options{Binary: bin, StateDir: stateDir}, rec)
	if e2.workdir() != e.workdir() {
		t.Fatalf("the resumed run has another working directory: %s vs %s", e2.workdir(), e.workdir())
	}
	if err := e2.Run(ctx); err != nil {
		t.Fatalf("resumed run: %v\n%s", err, strings.Join(rec.output(), "\n"))
	}
	if out := strings.Join(rec.output(), "\n"); !strings.Contains(out, "left from an interrupted start") {
		t.Errorf("the resumed deploy did not say it stopped the unrecorded servers:\n%s", out)
	}
	if left := procsCarrying(t, e.workdir()); len(left) > 0 {
		t.Errorf("%d processes left after cleanup, e.g. %s", len(left), left[0])
	}
}
