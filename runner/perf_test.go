//go:build perf

package runner

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
)

// TestPerfSSHRun compares a command run over the runner's reused SSH
// connection with OpenSSH's own client doing the same (a new connection per
// command, as a script calling ssh does), against the test's own sshd:
//
//	go test -tags perf -run Perf -v ./runner/
func TestPerfSSHRun(t *testing.T) {
	sshBin := testpeer.Require(t, "ssh")
	s := startSSHD(t)
	tg := NewSSH(s.config("perf"))
	defer tg.Close()
	ctx := context.Background()
	if err := tg.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 20
	ours := timeIt(t, n, func() error {
		res, err := tg.Run(ctx, Command{Cmd: "true"})
		if err == nil && res.ExitCode != 0 {
			err = fmt.Errorf("exit %d", res.ExitCode)
		}
		return err
	})
	fresh := timeIt(t, n, func() error {
		f := NewSSH(s.config("perf"))
		defer f.Close()
		_, err := f.Run(ctx, Command{Cmd: "true"})
		return err
	})
	openssh := timeIt(t, n, func() error {
		return exec.Command(sshBin, "-F", "/dev/null", "-p", strconv.Itoa(s.Port), "-i", s.UserKey,
			"-o", "UserKnownHostsFile="+s.KnownHosts, "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes",
			"root@127.0.0.1", "true").Run()
	})
	t.Logf("per command, mean of %d: runner reused connection %v, runner new connection %v, OpenSSH ssh (yardstick) %v", n, ours, fresh, openssh)
	t.Logf("ratio reused/openssh = %.2f, new-connection/openssh = %.2f", float64(ours)/float64(openssh), float64(fresh)/float64(openssh))
}

func timeIt(t *testing.T, n int, f func() error) time.Duration {
	t.Helper()
	start := time.Now()
	for i := 0; i < n; i++ {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	return time.Since(start) / time.Duration(n)
}
