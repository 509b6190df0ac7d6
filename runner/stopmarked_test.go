//go:build unix

package runner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStopMarked: Starts cancelled at increasing delays (0..200 ms) leave
// nothing running (Start undoes its own launch), Starts whose Proc is
// deliberately dropped are all found by StopMarked(workdir), and processes
// whose leader does not carry the workdir (one carrying a path that only
// begins like it) survive. On the local target and over a real sshd.
func TestStopMarked(t *testing.T) {
	t.Parallel()
	sshd := startSSHD(t)
	for _, tg := range []Target{NewLocal(), NewSSH(sshd.config("real"))} {
		t.Run(tg.Name(), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			workdir := filepath.Join(t.TempDir(), "dpulab-lab-run")
			t.Cleanup(func() { tg.Close() })
			t.Cleanup(func() { _, _ = StopMarked(context.Background(), tg, workdir, 0, false) })
			if c, ok := tg.(Connector); ok {
				if err := c.Connect(ctx); err != nil {
					t.Fatal(err)
				}
			}
			sleep := "sleep " + strconv.Itoa(200000+rand.IntN(100000))

			// Bystanders, each leading its own process group: one names a
			// sibling directory whose name begins with the workdir's.
			bySleep := "sleep " + strconv.Itoa(300000+rand.IntN(100000))
			for _, args := range [][]string{{"sh", "-c", "exec " + bySleep}, {"sh", "-c", bySleep + "; :", "bystander", workdir + "-other/server.log"}} {
				cmd := exec.Command(args[0], args[1:]...)
				cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
			}

			var cancelled []string
			for i, d := 0, time.Duration(0); d <= 200*time.Millisecond; i, d = i+1, d+10*time.Millisecond {
				log := fmt.Sprintf("%s/i%d/server.log", workdir, i)
				cctx, cancel := context.WithTimeout(ctx, d)
				_, err := tg.Start(cctx, ProcSpec{Name: "server", Cmd: "exec " + sleep, LogFile: log})
				cancel()
				// A Start that finished in time has its Proc dropped here
				// on purpose: its pid is never recorded.
				if err != nil {
					if cctx.Err() == nil {
						t.Fatalf("start %d: %v", i, err)
					}
					cancelled = append(cancelled, log)
				}
			}
			// Two more that succeed, their Procs dropped too.
			for i := 0; i < 2; i++ {
				if _, err := tg.Start(ctx, ProcSpec{Name: "server", Cmd: "exec " + sleep, LogFile: fmt.Sprintf("%s/dropped%d/server.log", workdir, i)}); err != nil {
					t.Fatal(err)
				}
			}
			for _, log := range cancelled {
				if has, ps := psHas(t, log+".pid"); has {
					t.Errorf("a cancelled Start left its process running:\n%s", ps)
				}
			}
			t.Logf("%d of 21 Starts cancelled", len(cancelled))

			n, err := StopMarked(ctx, tg, workdir, 500*time.Millisecond, false)
			if err != nil {
				t.Fatal(err)
			}
			if n < 2 {
				t.Fatalf("StopMarked stopped %d groups, want at least the 2 dropped Procs", n)
			}
			waitGone(t, workdir+"/", 5*time.Second)
			waitGone(t, sleep, 5*time.Second)
			if has, _ := psHas(t, bySleep); !has {
				t.Fatal("StopMarked killed a process that does not carry the marker")
			}
			if out, _ := exec.Command("ps", "-eo", "args").Output(); strings.Count(string(out), bySleep) < 2 {
				t.Fatalf("a bystander is gone:\n%s", out)
			}
			// Nothing left: a second call finds nothing, as root too.
			if n, err := StopMarked(ctx, tg, workdir, 0, true); err != nil || n != 0 {
				t.Fatalf("second StopMarked: %d, %v", n, err)
			}
		})
	}
}

func TestStopMarkedRefusesLooseMarkers(t *testing.T) {
	t.Parallel()
	for _, m := range []string{"", "/", "/tmp", "tmp/dpulab-x", "/tmp/", "/tmp//x", "/tmp/../x", "/tmp/x", "/usr/lib/dpulab", "/etc/dpulab-x", "/tmp/a\nb"} {
		if _, err := StopMarked(context.Background(), NewLocal(), m, 0, false); err == nil {
			t.Errorf("marker %q accepted", m)
		}
	}
}
