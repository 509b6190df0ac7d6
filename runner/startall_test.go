//go:build unix

package runner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// startAllSuite checks StartAll on a target: more processes than one batch
// holds, each in its own process group with its own log, every one passed
// to started before StartAll returns, stoppable by Stop and by StopMarked
// of their directory; a spec that cannot start is named alone; a batch
// cancelled while it runs leaves no process whose pid nobody has.
func startAllSuite(t *testing.T, tg Target) {
	ctx := context.Background()
	// Unique sleep durations: parallel suites must not see each other's.
	base := 7000 + rand.IntN(900)*3
	t.Run("many", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "it's a dir")
		n := 2*startBatchSize + 3
		specs := make([]ProcSpec, n)
		for i := range specs {
			// Values that need quoting: a quote in the name, the
			// command and the log's directory.
			specs[i] = ProcSpec{Name: fmt.Sprintf("inst'%d", i), Cmd: fmt.Sprintf("echo 'it'\"'\"'s %d'; exec sleep %d.%03d", i, base, i), LogFile: filepath.Join(dir, strconv.Itoa(i), "server.log")}
		}
		var mu sync.Mutex
		seen := map[string]Proc{}
		procs, errs := StartAll(ctx, tg, specs, func(ps []Proc) {
			mu.Lock()
			defer mu.Unlock()
			for _, p := range ps {
				seen[p.Name] = p
			}
		})
		defer func() {
			_, _ = StopMarked(context.Background(), tg, dir, time.Second, false)
		}()
		pids := map[int]bool{}
		for i, p := range procs {
			if errs[i] != nil {
				t.Fatalf("%s: %v", specs[i].Name, errs[i])
			}
			if p.PID <= 1 || p.Name != specs[i].Name || p.LogFile != specs[i].LogFile || p.Host != tg.Name() || pids[p.PID] {
				t.Fatalf("proc %d = %+v", i, p)
			}
			pids[p.PID] = true
			if seen[p.Name] != p {
				t.Errorf("started was not given %+v (got %+v)", p, seen[p.Name])
			}
			// Its own process group, led by the recorded pid.
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.PID))
			if err != nil {
				t.Fatalf("%s (pid %d) is not running: %v", p.Name, p.PID, err)
			}
			f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
			if len(f) < 3 || f[2] != strconv.Itoa(p.PID) {
				t.Errorf("%s: pid %d leads process group %v", p.Name, p.PID, f)
			}
		}
		if len(seen) != n {
			t.Errorf("started saw %d processes, want %d", len(seen), n)
		}
		// Each log holds its own process's output.
		deadline := time.Now().Add(10 * time.Second)
		for i, p := range procs {
			want := fmt.Sprintf("it's %d", i)
			for {
				b, _ := tg.ReadFile(ctx, p.LogFile)
				if strings.Contains(string(b), want) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("log %s = %q, want %q", p.LogFile, b, want)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		// Stop ends one; StopMarked of the directory finds the others.
		if err := tg.Stop(ctx, procs[0], time.Second); err != nil {
			t.Fatal(err)
		}
		waitGone(t, fmt.Sprintf("sleep %d.000", base), 5*time.Second)
		if has, _ := psHas(t, fmt.Sprintf("sleep %d.001", base)); !has {
			t.Fatal("stopping one stopped another")
		}
		got, err := StopMarked(ctx, tg, dir, time.Second, false)
		if err != nil || got != n-1 {
			t.Fatalf("StopMarked = %d, %v; want %d", got, err, n-1)
		}
		waitGone(t, fmt.Sprintf("sleep %d.", base), 5*time.Second)
	})
	t.Run("one fails", func(t *testing.T) {
		dir := t.TempDir()
		file := filepath.Join(dir, "file")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		specs := []ProcSpec{
			{Name: "good", Cmd: fmt.Sprintf("exec sleep %d", base+1), LogFile: filepath.Join(dir, "a", "p.log")},
			// Its log's directory would be under a file.
			{Name: "bad", Cmd: fmt.Sprintf("exec sleep %d", base+2), LogFile: filepath.Join(file, "b", "p.log")},
			{Name: "default log", Cmd: fmt.Sprintf("exec sleep %d", base+3)},
		}
		procs, errs := StartAll(ctx, tg, specs, nil)
		defer func() {
			_, _ = StopMarked(context.Background(), tg, dir, time.Second, false)
		}()
		if errs[0] != nil || errs[2] != nil {
			t.Fatalf("errs = %v", errs)
		}
		if errs[1] == nil || !strings.Contains(errs[1].Error(), "bad") || procs[1].PID != 0 {
			t.Fatalf("the failed spec: %+v, %v", procs[1], errs[1])
		}
		if has, _ := psHas(t, fmt.Sprintf("sleep %d", base+2)); has {
			t.Fatal("the failed spec runs")
		}
		defer os.Remove(procs[2].LogFile)
		if !strings.Contains(procs[2].LogFile, "dpulab-") || !strings.HasSuffix(procs[2].LogFile, ".log") || strings.Contains(procs[2].LogFile, " ") {
			t.Errorf("default log file %q", procs[2].LogFile)
		}
		for _, i := range []int{0, 2} {
			if err := tg.Stop(ctx, procs[i], time.Second); err != nil {
				t.Fatal(err)
			}
		}
		waitGone(t, fmt.Sprintf("sleep %d", base+1), 5*time.Second)
		waitGone(t, fmt.Sprintf("sleep %d", base+3), 5*time.Second)
	})
	t.Run("cancelled", func(t *testing.T) {
		// Cancelled at various moments of the batches: whatever started
		// is returned (and stopped here, as its caller would), the rest
		// is stopped by StartAll; nothing else is left.
		for k, after := range []time.Duration{0, 5 * time.Millisecond, 30 * time.Millisecond, 120 * time.Millisecond} {
			dir := t.TempDir()
			marker := fmt.Sprintf("sleep %d.%d", base+4, k)
			specs := make([]ProcSpec, startBatchSize+4)
			for i := range specs {
				specs[i] = ProcSpec{Name: "c" + strconv.Itoa(i), Cmd: fmt.Sprintf("exec %s%d", marker, i), LogFile: filepath.Join(dir, strconv.Itoa(i), "p.log")}
			}
			cctx, cancel := context.WithCancel(ctx)
			time.AfterFunc(after, cancel)
			procs, errs := StartAll(cctx, tg, specs, nil)
			cancel()
			for i, p := range procs {
				if errs[i] == nil {
					if err := tg.Stop(ctx, p, time.Second); err != nil {
						t.Fatal(err)
					}
				} else if p.PID != 0 {
					t.Errorf("%s failed (%v) but has pid %d", p.Name, errs[i], p.PID)
				}
			}
			waitGone(t, marker, 10*time.Second)
		}
	})
}

func TestStartAllLocal(t *testing.T) {
	t.Parallel()
	startAllSuite(t, NewLocal())
}

func TestStartAllRealSSHD(t *testing.T) {
	t.Parallel()
	sshd := startSSHD(t)
	tg := NewSSH(sshd.config("real"))
	defer tg.Close()
	startAllSuite(t, tg)
}

// TestStartBatchesOf: batches keep to their size and bytes, never mix sudo.
func TestStartBatchesOf(t *testing.T) {
	t.Parallel()
	var specs []ProcSpec
	for i := 0; i < 40; i++ {
		specs = append(specs, ProcSpec{Cmd: "x", Sudo: i%10 == 9})
	}
	specs = append(specs, ProcSpec{Cmd: strings.Repeat("y", startBatchBytes)}, ProcSpec{Cmd: "z"})
	seen := map[int]bool{}
	for _, b := range startBatchesOf(specs) {
		if len(b) == 0 || len(b) > startBatchSize {
			t.Fatalf("batch %v", b)
		}
		size := 0
		for _, i := range b {
			if specs[i].Sudo != specs[b[0]].Sudo || seen[i] {
				t.Fatalf("batch %v mixes sudo or repeats %d", b, i)
			}
			seen[i] = true
			size += len(specs[i].Cmd)
		}
		if len(b) > 1 && size > startBatchBytes {
			t.Fatalf("batch %v holds %d bytes", b, size)
		}
	}
	if len(seen) != len(specs) {
		t.Fatalf("%d of %d specs in batches", len(seen), len(specs))
	}
}
