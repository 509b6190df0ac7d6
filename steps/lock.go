package steps

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/dpulab/dpulab/internal/osproc"
)

// Two dpulab processes running the same lab would overwrite each other's
// progress and stop each other's servers. Each process takes an exclusive
// flock on LAB.json.lock beside the progress file; the kernel drops it when
// the process ends, however it ends, so a killed run leaves no stale lock.
// Within one process (the TUI's booth loop opens a lab again and again) the
// lock is taken once and kept.
//
// "However it ends" has one short exception: a run killed while it was
// starting a command leaves that command forked but not yet exec'd, in a
// process group of its own, and until its exec closes the inherited
// descriptors it holds the lock. So a held lock is tried again for a moment
// (lockPatience) before it is reported: a new run started right after a
// killed one would otherwise be refused for a lock that is about to go.

// lockPatience is how long a held lock is retried before it is reported.
const lockPatience = 2 * time.Second

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
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("create the state directory: %w", err)
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("lock %s: %w", p, err)
	}
	if err := flockPatiently(f, lockPatience); err != nil {
		f.Close()
		if errors.Is(err, osproc.ErrLocked) {
			return fmt.Errorf("another dpulab is running this lab (lock %s is held): wait for it to finish, or give this run its own --state-dir", p)
		}
		return fmt.Errorf("lock %s: %w", p, err)
	}
	locks[p] = f
	return nil
}

// flockPatiently takes f's exclusive flock, retrying a held lock until
// patience has passed.
func flockPatiently(f *os.File, patience time.Duration) error {
	deadline := time.Now().Add(patience)
	for {
		err := osproc.TryLock(f)
		if err == nil || !errors.Is(err, osproc.ErrLocked) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}
