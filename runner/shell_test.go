//go:build unix

package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestShellOverSSH opens the shell Pool.Shell describes on a real sshd,
// feeds it commands on stdin (no terminal: ssh says so and goes on), and
// checks that it started in the lab's working directory, as the
// inventory's user, with the run's known_hosts; an unknown host key is
// refused, never accepted.
func TestShellOverSSH(t *testing.T) {
	s := startSSHD(t)
	dir := t.TempDir()
	work := filepath.Join(dir, "work dir")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	inv := &Inventory{KnownHosts: s.KnownHosts, Hosts: []Host{{Name: "lab", Address: "127.0.0.1", Port: s.Port, User: currentUser(), Identity: s.UserKey, Roles: []string{"r"}}}}
	p := NewPool(inv, SSHOptions{SSHConfigFiles: []string{}})
	sh, err := p.Shell("lab", work)
	if err != nil {
		t.Fatal(err)
	}
	run := func(argv []string) (string, error) {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdin = strings.NewReader("pwd\necho shell-ok\nexit\n")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run(sh.Argv)
	if err != nil || !strings.Contains(out, work+"\n") || !strings.Contains(out, "shell-ok") {
		t.Fatalf("shell on the lab host: %v\n%s\nargv %q", err, out, sh.Argv)
	}

	// A known_hosts file that does not know the host: refused.
	empty := filepath.Join(dir, "empty_known_hosts")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	inv.KnownHosts = empty
	sh, err = NewPool(inv, SSHOptions{SSHConfigFiles: []string{}}).Shell("lab", work)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := run(sh.Argv); err == nil || strings.Contains(out, "shell-ok") {
		t.Errorf("a shell was opened on a host whose key is not known: %s", out)
	}
	if b, _ := os.ReadFile(empty); len(b) != 0 {
		t.Errorf("the shell saved the unknown host key: %s", b)
	}
}

// TestShellTrustsKeyAcceptedOnce: a host key the person accepted for this
// run only (in no known_hosts file) is trusted by the shell too, through a
// temporary known_hosts file that Cleanup removes; the real file stays
// untouched.
func TestShellTrustsKeyAcceptedOnce(t *testing.T) {
	s := startSSHD(t)
	dir := t.TempDir()
	empty := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	inv := &Inventory{KnownHosts: empty, Hosts: []Host{{Name: "lab", Address: "127.0.0.1", Port: s.Port, User: currentUser(), Identity: s.UserKey, Roles: []string{"r"}}}}
	p := NewPool(inv, SSHOptions{SSHConfigFiles: []string{}, Prompter: &scriptedPrompter{decision: AcceptOnce}})
	h, _ := inv.Host("lab")
	tg, err := p.Target(h)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := tg.Run(context.Background(), Command{Cmd: "true"}); err != nil || res.ExitCode != 0 {
		t.Fatalf("run after accepting the key once: %v %+v", err, res)
	}
	sh, err := p.Shell("lab", dir)
	if err != nil {
		t.Fatal(err)
	}
	if sh.Cleanup == nil {
		t.Fatal("no temporary known_hosts for the key accepted once")
	}
	cmd := exec.Command(sh.Argv[0], sh.Argv[1:]...)
	cmd.Stdin = strings.NewReader("echo shell-ok\nexit\n")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "shell-ok") {
		t.Errorf("shell with the key accepted once: %v\n%s\nargv %q", err, out, sh.Argv)
	}
	var tmp string
	for _, a := range sh.Argv {
		if strings.HasPrefix(a, "UserKnownHostsFile=") {
			f := strings.Fields(a)
			tmp = strings.Trim(f[len(f)-1], `"`)
		}
	}
	sh.Cleanup()
	if _, err := os.Stat(tmp); tmp == "" || !os.IsNotExist(err) {
		t.Errorf("the temporary known_hosts %q is still there after Cleanup (%v)", tmp, err)
	}
	if b, _ := os.ReadFile(empty); len(b) != 0 {
		t.Errorf("the key accepted once was saved: %s", b)
	}
}

// TestShellLocal: this machine's shell is $SHELL, started in the working
// directory when it exists, else in the home directory.
func TestShellLocal(t *testing.T) {
	t.Setenv("SHELL", "/bin/sh")
	p := NewPool(nil, SSHOptions{})
	dir := t.TempDir()
	sh, err := p.Shell(LocalName, dir)
	if err != nil || len(sh.Argv) != 1 || sh.Argv[0] != "/bin/sh" || sh.Dir != dir {
		t.Errorf("Shell = %+v, %v", sh, err)
	}
	sh, _ = p.Shell(LocalName, filepath.Join(dir, "not yet"))
	if home, _ := os.UserHomeDir(); sh.Dir != home {
		t.Errorf("a working directory not made yet: Dir %q, want the home directory", sh.Dir)
	}
}
