//go:build unix

package osproc

import (
	"errors"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// CPUTime is the user and system CPU time this process has used.
func CPUTime() (user, sys time.Duration, err error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, err
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), nil
}

// Alive reports whether a process with this pid exists (ours or not: one
// we may not signal exists too).
func Alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// TryLock takes f's exclusive lock (flock) without waiting: ErrLocked
// when another open file description holds it. The kernel drops it when
// the process ends, however it ends.
func TryLock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return ErrLocked
	}
	return err
}

// DiskFree is the space free to this user on the file system holding dir.
func DiskFree(dir string) (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil
}

// ReadOnlyFS reports whether err says the file system is read-only.
func ReadOnlyFS(err error) bool { return errors.Is(err, unix.EROFS) }

// DiskFull reports whether err says the disk or the user's quota is full.
func DiskFull(err error) bool { return errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT) }
