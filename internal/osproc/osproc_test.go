package osproc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestCPUTimeGrows(t *testing.T) {
	u0, s0, err := CPUTime()
	if err != nil {
		t.Fatal(err)
	}
	// Spin until the clock of this process moves: the assertion is that
	// it moves at all and never backwards, not how fast.
	x := 0
	for {
		for i := 0; i < 1e6; i++ {
			x += i
		}
		u1, s1, err := CPUTime()
		if err != nil {
			t.Fatal(err)
		}
		if u1 < u0 || s1 < s0 {
			t.Fatalf("CPU time went back: user %v -> %v, sys %v -> %v", u0, u1, s0, s1)
		}
		if u1+s1 > u0+s0 {
			break
		}
	}
	_ = x
}

func TestAlive(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Error("this process reads as not alive")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	// Reaped, so its pid names no process (the kernel cycles through
	// pids before it reuses one).
	if Alive(cmd.Process.Pid) {
		t.Errorf("pid %d of an ended, reaped child reads as alive", cmd.Process.Pid)
	}
}

func TestTryLock(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	open := func() *os.File {
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b := open(), open()
	if err := TryLock(a); err != nil {
		t.Fatalf("first lock: %v", err)
	}
	if err := TryLock(b); !errors.Is(err, ErrLocked) {
		t.Fatalf("second lock while the first is held: %v, want ErrLocked", err)
	}
	a.Close()
	if err := TryLock(b); err != nil {
		t.Fatalf("lock after the holder closed: %v", err)
	}
}

func TestDiskFree(t *testing.T) {
	free, err := DiskFree(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if free == 0 {
		t.Error("no free space reported on the disk holding a fresh temporary directory")
	}
	if _, err := DiskFree(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing directory gave no error")
	}
}
