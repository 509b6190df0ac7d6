//go:build unix

package runner

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// localSupported says whether Local can run commands here: on Unix, yes.
func localSupported() error { return nil }

// ownGroup starts cmd in a process group of its own, so that the whole
// group (the command and everything it started) can be signalled.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// termGroup sends SIGTERM to process group pgid.
func termGroup(pgid int) error { return syscall.Kill(-pgid, syscall.SIGTERM) }

// killGroupNow sends SIGKILL to process group pgid.
func killGroupNow(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

func exitStatus(ee *exec.ExitError) int {
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ee.ExitCode()
}

// killLocalGroup sends SIGTERM to the group, then SIGKILL once grace has
// passed while any member is left.
func killLocalGroup(pgid int, grace time.Duration, done <-chan error) {
	if err := termGroup(pgid); err != nil {
		return
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		if !localGroupAlive(pgid) {
			return
		}
	}
	killGroupNow(pgid)
}

// localGroupAlive reports whether group pgid has a member that is not a
// zombie. kill(-pgid, 0) alone also counts zombies, which linger until their
// new parent reaps them (slowly, under some container inits).
func localGroupAlive(pgid int) bool {
	if syscall.Kill(-pgid, 0) != nil {
		return false
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and ')'.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) >= 3 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" {
			return true
		}
	}
	return false
}
