//go:build unix

package server

import (
	"errors"
	"fmt"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// reservedFDs is Redis's CONFIG_MIN_RESERVED_FDS: the descriptors kept
// beyond one per client for listeners, the log file, the event loop's and
// the runtime's own, and the spare one acceptLoop sheds clients with.
const reservedFDs = 32

// fitDescriptors is Redis's adjustOpenFilesLimit: it raises the process's
// soft RLIMIT_NOFILE to maxClients+reservedFDs when it is lower (toward the
// hard limit when that is all the OS allows) and returns the number of
// clients the limit then fits, logging Redis's lines when that is fewer
// than asked. An error means not even one client fits.
//
// Unlike Redis it never lowers the hard limit: several instances may share
// the process (dpulab server --instances), and so may its children.
func (s *Server) fitDescriptors(maxClients int) (int, error) {
	want := uint64(maxClients) + reservedFDs
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		s.logf('#', "Unable to obtain the current NOFILE limit (%s), assuming 1024 and setting the max clients configuration accordingly.", strerror(err))
		return min(maxClients, 1024-reservedFDs), nil
	}
	old := lim.Cur
	if old >= want {
		return maxClients, nil
	}
	// Ask for what we need first (root may raise the hard limit too), then
	// settle for the hard limit.
	best := old
	setErr := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: want, Max: max(want, lim.Max)})
	if setErr == nil {
		best = want
	} else if lim.Max > old && syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: lim.Max, Max: lim.Max}) == nil {
		best = lim.Max
	}
	if best >= want {
		s.logf('*', "Increased maximum number of open files to %d (it was originally set to %d).", want, old)
		return maxClients, nil
	}
	if best <= reservedFDs {
		msg := fmt.Sprintf("Your current 'ulimit -n' of %d is not enough for the server to start. Please increase your open file limit to at least %d. Exiting.", old, want)
		s.logf('#', "%s", msg)
		return 0, errors.New(msg)
	}
	fitted := int(best - reservedFDs)
	s.logf('#', "You requested maxclients of %d requiring at least %d max file descriptors.", maxClients, want)
	s.logf('#', "Server can't set maximum open files to %d because of OS error: %s.", want, strerror(setErr))
	s.logf('#', "Current maximum open files is %d. maxclients has been reduced to %d to compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'.", best, fitted)
	return fitted, nil
}

// strerror is err's text as C's strerror prints it (Go's errno texts are
// the same words in lower case).
func strerror(err error) string {
	s := err.Error()
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		s = string(s[0]-'a'+'A') + s[1:]
	}
	return s
}

// isOutOfFDs reports whether an accept failed for lack of descriptors.
func isOutOfFDs(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// clientWaiting reports whether a connection is waiting on ln to be
// accepted; with wait, it first waits (in the runtime's poller) until one
// is. ok is false when it cannot tell (a listener without a descriptor) or
// ln was closed.
func clientWaiting(ln net.Listener, wait bool) (waiting, ok bool) {
	sc, isSys := ln.(syscall.Conn)
	if !isSys {
		return false, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false, false
	}
	poll := func(fd uintptr) bool {
		p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(p, 0)
		waiting = err == nil && n > 0 && p[0].Revents&unix.POLLIN != 0
		return waiting
	}
	if wait {
		// Read calls poll again each time the listener becomes readable.
		err = rc.Read(poll)
	} else {
		err = rc.Control(func(fd uintptr) { poll(fd) })
	}
	return waiting, err == nil
}
