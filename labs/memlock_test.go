package labs_test

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	. "github.com/dpulab/dpulab/labs"
)

// memlockCheck renders the RDMA lab's memlock check as the engine does.
func memlockCheck(t *testing.T) string {
	t.Helper()
	l, err := Find("redis-rdma-rc-uc")
	if err != nil {
		t.Fatal(err)
	}
	vars, err := l.ResolveVars(nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range l.Steps {
		if s := &l.Steps[i]; s.ID == "memlock" {
			if s.Verify == nil || s.Verify.Expect != "" || s.Verify.ExpectExit != 0 {
				t.Fatalf("memlock: want a check judged by its exit status alone, got %+v", s.Verify)
			}
			cmd, err := RenderCommand(s.Verify.Run, Data(vars, extraFor(false)))
			if err != nil {
				t.Fatal(err)
			}
			return cmd
		}
	}
	t.Fatal("redis-rdma-rc-uc has no memlock step")
	return ""
}

// asUser returns the argv prefix that runs a program as nobody (uid
// 65534), with extra setpriv options, or skips the test when this machine
// cannot switch users.
func asUser(t *testing.T, setprivOpts ...string) []string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("switching to another user needs root; run the tests as root to cover the non-root cases")
	}
	if p, err := exec.LookPath("setpriv"); err == nil {
		return append(append([]string{p, "--reuid=65534", "--regid=65534", "--clear-groups"}, setprivOpts...), "--")
	}
	if len(setprivOpts) > 0 {
		t.Skip("no setpriv (util-linux) on this machine: cannot give a non-root shell a capability")
	}
	t.Skip("no setpriv (util-linux) on this machine: cannot run the check as another user")
	return nil
}

// TestMemlockCheck runs the memlock check in the shells lab hosts use, with
// the kernel's default limit of 8192 KiB set in the same shell, as root, as
// an ordinary user, and as an ordinary user holding CAP_IPC_LOCK: the
// kernel lets root and the capability pin memory past the limit (issue 28:
// the check used to refuse root).
func TestMemlockCheck(t *testing.T) {
	check := memlockCheck(t)
	type tc struct {
		name string
		// prefix runs the shell (as another user); limit is set as root
		// before it, so that a raised hard limit reaches nobody too.
		prefix func(t *testing.T) []string
		limit  string
		pass   bool
		says   string
	}
	cases := []tc{
		{name: "root", limit: "8192", pass: true, says: "root: no locked-memory limit applies",
			prefix: func(t *testing.T) []string {
				if os.Geteuid() != 0 {
					t.Skip("not running as root")
				}
				if !hasIPCLock(t) {
					t.Skip("this root has no CAP_IPC_LOCK (a container?); the check rightly applies the limit")
				}
				return nil
			}},
		{name: "root without CAP_IPC_LOCK", limit: "8192", pass: false, says: "without CAP_IPC_LOCK",
			prefix: func(t *testing.T) []string {
				if os.Geteuid() != 0 {
					t.Skip("not running as root")
				}
				p, err := exec.LookPath("setpriv")
				if err != nil {
					t.Skip("no setpriv (util-linux) on this machine")
				}
				return []string{p, "--bounding-set=-ipc_lock", "--inh-caps=-all", "--"}
			}},
		{name: "nobody", limit: "8192", pass: false, says: "8192 KiB is too low",
			prefix: func(t *testing.T) []string { return asUser(t) }},
		{name: "nobody with 64 MiB", limit: "65536", pass: true, says: "enough for RDMA buffers",
			prefix: func(t *testing.T) []string { return asUser(t) }},
		{name: "nobody unlimited", limit: "unlimited", pass: true, says: "enough for RDMA buffers",
			prefix: func(t *testing.T) []string { return asUser(t) }},
		{name: "nobody with CAP_IPC_LOCK", limit: "8192", pass: true, says: "CAP_IPC_LOCK: ",
			prefix: func(t *testing.T) []string {
				return asUser(t, "--inh-caps=+ipc_lock", "--ambient-caps=+ipc_lock")
			}},
	}
	for _, sh := range Shells(t) {
		for _, c := range cases {
			t.Run(sh+"/"+c.name, func(t *testing.T) {
				// The limit is set in an outer shell (as root, where the
				// test runs as root), and the check runs in a shell started
				// under it, as the lab runs it: `ulimit -l` there reads
				// the limit it inherited.
				inner := strings.Join(append(c.prefix(t), sh, "-c", ShellQuote(check)), " ")
				var out bytes.Buffer
				cmd := exec.Command(sh, "-c", "ulimit -l "+c.limit+" || exit 97\nexec "+inner)
				cmd.Stdout, cmd.Stderr = &out, &out
				err := cmd.Run()
				if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 97 {
					t.Skipf("cannot set ulimit -l %s here: %s", c.limit, out.String())
				}
				if (err == nil) != c.pass {
					t.Errorf("passed = %v, want %v (%v); output:\n%s", err == nil, c.pass, err, out.String())
				}
				if !strings.Contains(out.String(), c.says) || !strings.Contains(out.String(), "locked memory limit: ") {
					t.Errorf("output does not say %q:\n%s", c.says, out.String())
				}
			})
		}
	}
}

// hasIPCLock says whether this test process holds CAP_IPC_LOCK.
func hasIPCLock(t *testing.T) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return os.Geteuid() == 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if hex, ok := strings.CutPrefix(line, "CapEff:"); ok {
			var v uint64
			for _, r := range strings.TrimSpace(hex) {
				v = v<<4 | uint64(strings.IndexRune("0123456789abcdef", r))
			}
			return v&(1<<14) != 0
		}
	}
	return false
}
