// Package osproc holds the few process and file calls whose system calls
// differ between Unix and Windows, so that the controller builds for
// Linux, macOS and Windows: this process's CPU time, whether a pid is
// alive, and a non-blocking exclusive lock on an open file. Each has a
// Unix file (getrusage, kill(pid, 0), flock) and a Windows one
// (GetProcessTimes, OpenProcess, LockFileEx).
package osproc

import "errors"

// ErrLocked is what TryLock returns when another process holds the lock.
var ErrLocked = errors.New("held by another process")
