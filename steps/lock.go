package steps

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
)

// Two dpulab processes running the same lab would overwrite each other's
// progress and stop each other's servers. Each process takes an exclusive
// flock on LAB.json.lock beside the progress file; the kernel drops it when
// the process ends, however it ends, so a killed run leaves no stale lock.
// Within one process (the TUI's booth loop opens a lab again and again) the
// lock is taken once and kept.

var (
	locksMu sync.Mutex
	locks   = map[string]*os.File{}
)

// lockLab takes the lab's lock for this process, or says who holds it.
func lockLab(statePath string) error {
	p := statePath + ".lock"
	locksMu.Lock()
	defer locksMu.Unlock()
	if _, ok := locks[p]; ok {
		return nil
	}
	if err := os.MkdirAll(dirOf(p), 0o755); err != nil {
		return fmt.Errorf("create the state directory: %w", err)
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("lock %s: %w", p, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("another dpulab is running this lab (lock %s is held): wait for it to finish, or give this run its own --state-dir", p)
		}
		return fmt.Errorf("lock %s: %w", p, err)
	}
	locks[p] = f
	return nil
}

func dirOf(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return "."
}
