//go:build windows

package osproc

import (
	"errors"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/windows"
)

// CPUTime is the user and system (kernel) CPU time this process has used.
func CPUTime() (user, sys time.Duration, err error) {
	var creation, exit, kernel, usr syscall.Filetime
	h, err := syscall.GetCurrentProcess()
	if err != nil {
		return 0, 0, err
	}
	if err := syscall.GetProcessTimes(h, &creation, &exit, &kernel, &usr); err != nil {
		return 0, 0, err
	}
	// FILETIME counts 100 ns units.
	ticks := func(t syscall.Filetime) time.Duration {
		return time.Duration(int64(t.HighDateTime)<<32|int64(t.LowDateTime)) * 100
	}
	return ticks(usr), ticks(kernel), nil
}

// Alive reports whether a process with this pid exists and has not
// exited (one we may not open exists too).
func Alive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return errors.Is(err, windows.ERROR_ACCESS_DENIED)
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return true
	}
	const stillActive = 259
	return code == stillActive
}

// TryLock takes f's exclusive lock (LockFileEx on its first byte) without
// waiting: ErrLocked when another handle holds it. Windows drops it when
// the process ends.
func TryLock(f *os.File) error {
	var ol windows.Overlapped
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return ErrLocked
	}
	return err
}

// DiskFree is the space free to this user on the volume holding dir.
func DiskFree(dir string) (uint64, error) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return 0, err
	}
	var free, total, totalFree uint64
	if err := windows.GetDiskFreeSpaceEx(p, &free, &total, &totalFree); err != nil {
		return 0, err
	}
	return free, nil
}

// ReadOnlyFS reports whether err says the volume is write-protected.
func ReadOnlyFS(err error) bool { return errors.Is(err, windows.ERROR_WRITE_PROTECT) }

// DiskFull reports whether err says the disk is full.
func DiskFull(err error) bool {
	return errors.Is(err, windows.ERROR_DISK_FULL) || errors.Is(err, windows.ERROR_HANDLE_DISK_FULL)
}
