//go:build unix

package runner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// stopAllSuite checks StopAll on a target: more processes than one batch,
// one of which ignores SIGTERM (ended by SIGKILL and said so), one whose
// group already ended, and one whose pid file names another group (not
// ours any more: left alone); after it, none of its processes runs.
func stopAllSuite(t *testing.T, tg Target) {
	ctx := context.Background()
	base := 7000 + rand.IntN(900)*3
	dir := t.TempDir()
	defer func() { _, _ = StopMarked(context.Background(), tg, dir, time.Second, false) }()
	n := stopBatchSize + 5
	specs := make([]ProcSpec, n)
	for i := range specs {
		cmd := fmt.Sprintf("exec sleep %d.%03d", base, i)
		if i == 1 {
			// Ignores SIGTERM: the shell and its sleep both.
			cmd = fmt.Sprintf("trap '' TERM; sleep %d.%03d; sleep 1", base, i)
		}
		specs[i] = ProcSpec{Name: fmt.Sprintf("s%d", i), Cmd: cmd, LogFile: filepath.Join(dir, strconv.Itoa(i), "server.log")}
	}
	procs, errs := StartAll(ctx, tg, specs, nil)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("start %s: %v", specs[i].Name, err)
		}
	}
	// Instance 2 ends by itself before the stop.
	if err := tg.Stop(ctx, procs[2], time.Second); err != nil {
		t.Fatal(err)
	}
	// Instance 3's pid file names another group now (its pid reused,
	// say): StopAll must not touch the recorded group.
	innocent := ProcSpec{Name: "innocent", Cmd: fmt.Sprintf("exec sleep %d.999", base), LogFile: filepath.Join(t.TempDir(), "innocent.log")}
	ip, err := tg.Start(ctx, innocent)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tg.Stop(context.Background(), ip, time.Second) }()
	decoy := procs[3]
	decoy.PID = ip.PID
	stops := append(append([]Proc{}, procs...), decoy)
	res := StopAll(ctx, tg, stops, time.Second)
	if len(res) != len(stops) {
		t.Fatalf("%d results for %d processes", len(res), len(stops))
	}
	for i, r := range res {
		if r.Proc != stops[i] {
			t.Errorf("result %d is for %+v, want %+v", i, r.Proc, stops[i])
		}
		if r.Err != nil {
			t.Errorf("%s: %v", r.Proc.Name, r.Err)
		}
		if r.Killed != (i == 1) {
			t.Errorf("%s: killed = %v", r.Proc.Name, r.Killed)
		}
	}
	// Checked gone, not just signalled: nothing of the batch runs now.
	if has, line := psHas(t, fmt.Sprintf("sleep %d.0", base)); has {
		t.Errorf("StopAll returned with a process left: %s", line)
	}
	if has, _ := psHas(t, fmt.Sprintf("sleep %d.999", base)); !has {
		t.Error("StopAll stopped a group whose pid file names another")
	}
	for _, p := range procs {
		if _, err := os.Stat(p.LogFile + ".pid"); !os.IsNotExist(err) {
			t.Errorf("%s: pid file left (stat: %v)", p.Name, err)
		}
	}
	// Again: every group is gone, and said so without error.
	for _, r := range StopAll(ctx, tg, procs, time.Second) {
		if r.Err != nil || r.Killed {
			t.Errorf("second stop of %s: killed %v, %v", r.Proc.Name, r.Killed, r.Err)
		}
	}
}

func TestStopAllLocal(t *testing.T) {
	t.Parallel()
	stopAllSuite(t, NewLocal())
}

func TestStopAllRealSSHD(t *testing.T) {
	t.Parallel()
	sshd := startSSHD(t)
	tg := NewSSH(sshd.config("real"))
	defer tg.Close()
	stopAllSuite(t, tg)
}

// TestStopAllCancelled: a stop whose ctx has ended says what it was doing
// for every process, and none is counted as stopped.
func TestStopAllCancelled(t *testing.T) {
	t.Parallel()
	tg := NewLocal()
	dir := t.TempDir()
	defer func() { _, _ = StopMarked(context.Background(), tg, dir, time.Second, false) }()
	p, err := tg.Start(context.Background(), ProcSpec{Name: "x", Cmd: fmt.Sprintf("exec sleep %d", 9000+rand.IntN(900)), LogFile: filepath.Join(dir, "x.log")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, r := range StopAll(ctx, tg, []Proc{p}, time.Second) {
		if r.Err == nil {
			t.Fatalf("a cancelled stop reported %s stopped", r.Proc.Name)
		}
	}
}
