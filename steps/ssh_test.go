package steps

import (
	"bytes"
	"crypto/ed25519"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/runner"
)

// sshdHost is OpenSSH's sshd started by a test on 127.0.0.1, with its own
// host key, authorized user key and known_hosts, all in a temp dir.
type sshdHost struct {
	port       int
	userKey    string
	knownHosts string
}

func writeTestKey(t *testing.T, path string) ssh.PublicKey {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	blk, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(blk), 0o600); err != nil {
		t.Fatal(err)
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// startSSHD starts sshd, or skips (fails under DPULAB_REQUIRE_PEERS=1) when
// it is not installed or the test cannot run it (not root).
func startSSHD(t *testing.T) *sshdHost {
	t.Helper()
	bin := testpeer.Require(t, "/usr/sbin/sshd")
	if os.Getuid() != 0 {
		msg := "this test logs in over sshd as the current user and needs root to run sshd"
		if testpeer.Required() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		t.Fatalf("create /run/sshd: %v", err)
	}
	dir := t.TempDir()
	hostKey := writeTestKey(t, filepath.Join(dir, "host_ed25519"))
	userPub := writeTestKey(t, filepath.Join(dir, "user_ed25519"))
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), ssh.MarshalAuthorizedKey(userPub), 0o600); err != nil {
		t.Fatal(err)
	}
	var lastErr string
	for attempt := 0; attempt < 3; attempt++ {
		port := freePorts(t, 1)
		cfg := filepath.Join(dir, "sshd_config")
		// SHLVL=1 keeps Debian's bash from sourcing ~/.bashrc per command.
		conf := fmt.Sprintf("Port %d\nListenAddress 127.0.0.1\nHostKey %s\nPidFile %s\nAuthorizedKeysFile %s\nUsePAM no\nStrictModes no\nPermitRootLogin yes\nPubkeyAuthentication yes\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nSubsystem sftp internal-sftp\nLogLevel ERROR\nSetEnv SHLVL=1\n",
			port, filepath.Join(dir, "host_ed25519"), filepath.Join(dir, "sshd.pid"), filepath.Join(dir, "authorized_keys"))
		if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd := exec.Command(bin, "-D", "-e", "-f", cfg)
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatalf("start sshd: %v", err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		up := false
		for i := 0; i < 100 && !up; i++ {
			select {
			case <-exited:
				i = 100
				continue
			default:
			}
			if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
				c.Close()
				up = true
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if !up {
			cmd.Process.Kill()
			<-exited
			lastErr = stderr.String()
			continue
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			<-exited
		})
		kh := filepath.Join(dir, "known_hosts")
		line := knownhosts.Line([]string{knownhosts.Normalize(fmt.Sprintf("127.0.0.1:%d", port))}, hostKey)
		if err := os.WriteFile(kh, []byte(line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return &sshdHost{port: port, userKey: filepath.Join(dir, "user_ed25519"), knownHosts: kh}
	}
	t.Fatalf("sshd did not start: %s", lastErr)
	return nil
}

// TestQuickstartOverSSH runs the quickstart lab on a "lab host" reached
// over real OpenSSH (on 127.0.0.1): dpulab is uploaded over SFTP, the
// servers are started detached there, PING goes through `dpulab bench` on
// the host, and the sampler streams back over the session.
func TestQuickstartOverSSH(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts sshd and runs the quickstart lab over it")
	}
	sshd := startSSHD(t)
	bin := dpulabBinary(t)
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	invPath := filepath.Join(t.TempDir(), "hosts.yaml")
	inv := fmt.Sprintf("known_hosts: %s\nhosts:\n  - name: labhost\n    address: 127.0.0.1\n    port: %d\n    user: %s\n    identity: %s\n    roles: [local]\n    labels: {nic: loopback}\n",
		sshd.knownHosts, sshd.port, u.Username, sshd.userKey)
	if err := os.WriteFile(invPath, []byte(inv), 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := runner.LoadInventory(invPath)
	if err != nil {
		t.Fatal(err)
	}
	vars := quickVars(t)
	vars["runs"] = "1"
	rec := &recorder{}
	resDir := filepath.Join(t.TempDir(), "results")
	e := newEngine(t, quickstart(t), Options{Binary: bin, Inventory: in, Vars: vars, ResultsDir: resDir, Yes: true}, rec)
	if err := e.Run(testCtx(t, 3*time.Minute)); err != nil {
		t.Fatalf("quickstart over SSH: %v\n%s", err, strings.Join(rec.output(), "\n"))
	}
	out := strings.Join(rec.output(), "\n")
	if os.Getenv("DEBUG_SSH") != "" {
		for _, ev := range rec.events() {
			switch ev := ev.(type) {
			case Output:
				t.Logf("%s %s: %s", ev.Line.Time.Format("15:04:05.000"), ev.Step, ev.Line.Text)
			case StepFinished:
				t.Logf("finished %s %v %s", ev.Step, ev.Duration, ev.Err)
			case Sample:
				t.Logf("sample %s %s cpu=%v", ev.Step, ev.Variant, ev.Point.ServerCPU)
			}
		}
	}
	if !strings.Contains(out, "dpulab is at "+e.workdir()+"/dpulab") {
		t.Errorf("dpulab was not uploaded to the host's working directory:\n%s", out)
	}
	r, err := LoadResults(resDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Hosts) != 1 || r.Hosts[0].Name != "labhost" || r.Hosts[0].Labels["nic"] != "loopback" {
		t.Errorf("hosts in results = %+v", r.Hosts)
	}
	for _, b := range r.Benches {
		for _, v := range b.Variants {
			if len(v.Points) == 0 || v.Points[0].Stats.OpsPerSec.Mean <= 0 || v.Hosts[0] != "labhost" {
				t.Errorf("%s/%s: %+v", b.Step, v.Label, v.Points)
				continue
			}
			if v.Points[0].Stats.ServerCPU == nil {
				t.Errorf("%s/%s: no server CPU from the sampler over SSH", b.Step, v.Label)
			}
		}
	}
	st, _ := LoadState(e.StatePath())
	if st == nil || len(st.Procs) != 0 {
		t.Errorf("processes left after cleanup: %+v", st)
	}
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+vars["port"], time.Second); err == nil {
		c.Close()
		t.Errorf("a server still listens after cleanup")
	}
}
