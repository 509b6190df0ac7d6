//go:build windows

package runner

import (
	"errors"
	"os"
	"os/exec"
	"time"
)

// errLocalUnsupported is what every command on a local target returns on
// Windows.
var errLocalUnsupported = errors.New("local targets are not supported on Windows: dpulab runs their commands with sh and ends them by process group, which Windows lacks; " +
	"give the host an SSH address in the inventory (a Linux machine, a VM or WSL with sshd), or run dpulab from Linux or macOS")

// localSupported says whether Local can run commands here: on Windows, no.
func localSupported() error { return errLocalUnsupported }

// ownGroup does nothing on Windows: there are no process groups to signal.
func ownGroup(cmd *exec.Cmd) {}

// termGroup ends the process pgid (Windows has no SIGTERM to send).
func termGroup(pgid int) error {
	p, err := os.FindProcess(pgid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// killGroupNow ends the process pgid.
func killGroupNow(pgid int) { _ = termGroup(pgid) }

func exitStatus(ee *exec.ExitError) int { return ee.ExitCode() }

// killLocalGroup ends the process; grace does not apply without signals.
func killLocalGroup(pgid int, grace time.Duration, done <-chan error) { killGroupNow(pgid) }
