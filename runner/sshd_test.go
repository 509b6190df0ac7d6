//go:build unix

package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/server/sample"
)

// realSSHD is OpenSSH's sshd on 127.0.0.1, started by the test
// (testpeer.StartSSHD: own host key, user key and known_hosts).
type realSSHD struct{ *testpeer.SSHD }

// startSSHD starts sshd, or skips (fails under DPULAB_REQUIRE_PEERS=1)
// when it is not installed.
func startSSHD(t *testing.T) *realSSHD { return &realSSHD{testpeer.StartSSHD(t)} }

func (s *realSSHD) config(name string) SSHConfig {
	return SSHConfig{
		Name: name, Addr: "127.0.0.1", Port: s.Port, User: currentUser(),
		Identities: []string{s.UserKey}, NoAgent: true, KnownHosts: s.KnownHosts,
		KillGrace: 500 * time.Millisecond,
	}
}

// dpulabBinary builds ./cmd/dpulab once per test binary.
func dpulabBinary(t *testing.T) string { return testpeer.Dpulab(t) }

func TestMain(m *testing.M) {
	code := m.Run()
	testpeer.RemoveBuilds()
	os.Exit(code)
}

func TestRealSSHD(t *testing.T) {
	t.Parallel()
	sshd := startSSHD(t)
	tg := NewSSH(sshd.config("real"))
	defer tg.Close()
	targetSuite(t, tg)

	ctx := context.Background()
	remoteDir := t.TempDir()
	var remote string
	t.Run("upload and run dpulab", func(t *testing.T) {
		bin := dpulabBinary(t)
		var err error
		remote, err = UploadBinary(ctx, tg, bin, Platform{runtime.GOOS, runtime.GOARCH}, remoteDir)
		if err != nil {
			t.Fatal(err)
		}
		var c collect
		res, err := tg.Run(ctx, Command{Cmd: Quote(remote) + " version", Output: c.add})
		if err != nil || res.ExitCode != 0 || !strings.HasPrefix(strings.Join(c.text(Stdout), ""), "dpulab ") {
			t.Fatalf("%v %v %q %v", res, err, c.text(Stdout), res.Tail)
		}
		st1, _ := os.Stat(remote)
		if _, err := UploadBinary(ctx, tg, bin, Platform{runtime.GOOS, runtime.GOARCH}, remoteDir); err != nil {
			t.Fatal(err)
		}
		st2, _ := os.Stat(remote)
		if !os.SameFile(st1, st2) {
			t.Fatal("same binary uploaded twice")
		}
	})
	t.Run("remote sampler streams back", func(t *testing.T) {
		if remote == "" {
			t.Skip("no binary uploaded")
		}
		var mu sync.Mutex
		var samples []sample.Sample
		var bad []string
		header := false
		res, err := tg.Run(ctx, Command{Cmd: Quote(remote) + " sample --interval 100ms --count 3 --host " + Quote("real"), Output: func(l Line) {
			if l.Stream != Stdout {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			// The stream opens with its header line (type, stream,
			// schema_version), as every machine-output stream does.
			if len(samples) == 0 && len(bad) == 0 && !header {
				var h struct{ Type, Stream string }
				if json.Unmarshal([]byte(l.Text), &h) == nil && h.Type == "header" && h.Stream == "sample" {
					header = true
					return
				}
			}
			s, err := sample.DecodeLine([]byte(l.Text), 0)
			if err != nil {
				bad = append(bad, l.Text)
				return
			}
			samples = append(samples, s)
		}})
		if err != nil || res.ExitCode != 0 || len(bad) > 0 || !header || len(samples) != 3 || samples[0].Host != "real" {
			t.Fatalf("%v %v samples=%d bad=%q tail=%v", res, err, len(samples), bad, res.Tail)
		}
	})
	t.Run("start and stop dpulab server", func(t *testing.T) {
		if remote == "" {
			t.Skip("no binary uploaded")
		}
		port := testpeer.FreePorts(t, 1)
		p, err := tg.Start(ctx, ProcSpec{Name: "server-" + strconv.Itoa(port), Cmd: Quote(remote) + " server --bind 127.0.0.1 --port " + strconv.Itoa(port)})
		if err != nil {
			t.Fatal(err)
		}
		defer os.Remove(p.LogFile)
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		var reply string
		for i := 0; i < 100; i++ {
			if reply = ping(addr); reply == "+PONG" {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if reply != "+PONG" {
			log, _ := tg.ReadFile(ctx, p.LogFile)
			t.Fatalf("server on %s answered %q; log:\n%s", addr, reply, log)
		}
		if err := tg.Stop(ctx, p, 2*time.Second); err != nil {
			t.Fatal(err)
		}
		waitGone(t, "--port "+strconv.Itoa(port), 5*time.Second)
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			t.Fatal("server still listening after Stop")
		}
	})
}

// ping sends a RESP PING and returns the first reply line.
func ping(addr string) string {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err.Error()
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return err.Error()
	}
	l, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err.Error()
	}
	return strings.TrimSpace(l)
}

// TestFanOutTwoHosts runs one command on two sshd (two "hosts") at once: each
// waits for the other to have started, which only works if they really run in
// parallel, and every line must be attributed to the host that printed it.
func TestFanOutTwoHosts(t *testing.T) {
	t.Parallel()
	a, b := startSSHD(t), startSSHD(t)
	targets := []Target{NewSSH(a.config("host-a")), NewSSH(b.config("host-b"))}
	ports := map[string]int{"host-a": a.Port, "host-b": b.Port}
	defer func() {
		for _, tg := range targets {
			tg.Close()
		}
	}()
	dir := t.TempDir()
	// Each prints the sshd port it came in through (from SSH_CONNECTION),
	// marks itself started, and waits for every host to have started.
	cmd := `me=${SSH_CONNECTION##* }; touch ` + Quote(dir) + `/"$me"; i=0
while [ "$(ls ` + Quote(dir) + ` | wc -l)" -lt 2 ]; do i=$((i+1)); [ $i -gt 200 ] && { echo "alone" >&2; exit 1; }; sleep 0.05; done
for n in 1 2 3; do echo "$me $n"; echo "$me err$n" >&2; done`
	var c collect
	res, errs := FanOut(context.Background(), targets, Command{Cmd: cmd, Output: c.add})
	for i := range targets {
		if errs[i] != nil || res[i].ExitCode != 0 {
			t.Fatalf("%s: %v exit %d tail %v", targets[i].Name(), errs[i], res[i].ExitCode, res[i].Tail)
		}
	}
	counts := map[string]int{}
	for _, l := range c.lines {
		port, _, _ := strings.Cut(l.Text, " ")
		if port != strconv.Itoa(ports[l.Host]) {
			t.Fatalf("line %q attributed to %s (port %d)", l.Text, l.Host, ports[l.Host])
		}
		counts[l.Host]++
	}
	if counts["host-a"] != 6 || counts["host-b"] != 6 {
		t.Fatalf("lines per host %v, want 6 each", counts)
	}
}

// TestPoolOverRealSSHD reaches sshd through an inventory host whose address
// is an alias in an ssh config file (HostName, Port, IdentityFile).
func TestPoolOverRealSSHD(t *testing.T) {
	t.Parallel()
	s := startSSHD(t)
	dir := t.TempDir()
	sshCfg := filepath.Join(dir, "config")
	os.WriteFile(sshCfg, []byte(fmt.Sprintf("Host labalias\n  HostName 127.0.0.1\n  Port %d\n  IdentityFile %s\n", s.Port, s.UserKey)), 0o600)
	invFile := filepath.Join(dir, "hosts.yaml")
	os.WriteFile(invFile, []byte(fmt.Sprintf("known_hosts: %s\nhosts:\n  - name: srv1\n    address: labalias\n    roles: [server]\n", s.KnownHosts)), 0o600)
	inv, err := LoadInventory(invFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := NewPool(inv, SSHOptions{SSHConfigFiles: []string{sshCfg}, NoAgent: true})
	defer pool.Close()
	ts, err := pool.TargetsFor("server")
	if err != nil || len(ts) != 1 {
		t.Fatal(ts, err)
	}
	var c collect
	res, err := ts[0].Run(context.Background(), Command{Cmd: "echo via alias", Output: c.add})
	if err != nil || res.ExitCode != 0 || strings.Join(c.text(Stdout), "") != "via alias" || c.lines[0].Host != "srv1" {
		t.Fatalf("%v %v %+v", res, err, c.lines)
	}
}

// TestProxyJump reaches one sshd through another (ProxyJump): the second
// host's connection is a direct-tcpip channel of the first's.
func TestProxyJump(t *testing.T) {
	t.Parallel()
	bastion, inner := startSSHD(t), startSSHD(t)
	cfg := inner.config("inner")
	jc := bastion.config("bastion")
	cfg.Jump = &jc
	tg := NewSSH(cfg)
	defer tg.Close()
	var c collect
	res, err := tg.Run(context.Background(), Command{Cmd: "echo ${SSH_CONNECTION##* }", Output: c.add})
	if err != nil || res.ExitCode != 0 {
		t.Fatal(res, err)
	}
	if got := strings.Join(c.text(Stdout), ""); got != strconv.Itoa(inner.Port) {
		t.Fatalf("reached port %q, want %d", got, inner.Port)
	}
	tg.jump.mu.Lock()
	jconn := tg.jump.conn
	tg.jump.mu.Unlock()
	if jconn == nil || jconn.isDead() {
		t.Fatal("no connection to the jump host: it was not used")
	}
	// Losing the bastion loses the inner connection; the next command
	// dials both again.
	jconn.client.Close()
	if res, err := tg.Run(context.Background(), Command{Cmd: "true"}); err != nil || res.ExitCode != 0 {
		t.Fatalf("after the bastion connection closed: %v %v", res, err)
	}
}

// TestPoolSharesJumpHost: two inventory hosts behind one bastion share the
// bastion's connection.
func TestPoolSharesJumpHost(t *testing.T) {
	t.Parallel()
	bastion, inner := startSSHD(t), startSSHD(t)
	dir := t.TempDir()
	sshCfg := filepath.Join(dir, "config")
	conf := fmt.Sprintf(`Host bastion
  HostName 127.0.0.1
  Port %d
  IdentityFile %s
Host inner1 inner2
  HostName 127.0.0.1
  Port %d
  IdentityFile %s
  ProxyJump bastion
`, bastion.Port, bastion.UserKey, inner.Port, inner.UserKey)
	os.WriteFile(sshCfg, []byte(conf), 0o600)
	// One known_hosts for both servers.
	kh := filepath.Join(dir, "known_hosts")
	b1, _ := os.ReadFile(bastion.KnownHosts)
	b2, _ := os.ReadFile(inner.KnownHosts)
	os.WriteFile(kh, append(b1, b2...), 0o600)
	inv, err := ParseInventory("hosts.yaml", []byte("known_hosts: "+kh+"\nhosts:\n  - {name: a, address: inner1, roles: [server]}\n  - {name: b, address: inner2, roles: [server]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	pool := NewPool(inv, SSHOptions{SSHConfigFiles: []string{sshCfg}, NoAgent: true})
	defer pool.Close()
	ts, err := pool.TargetsFor("server")
	if err != nil {
		t.Fatal(err)
	}
	res, errs := FanOut(context.Background(), ts, Command{Cmd: "true"})
	for i := range ts {
		if errs[i] != nil || res[i].ExitCode != 0 {
			t.Fatalf("%s: %v %v", ts[i].Name(), res[i], errs[i])
		}
	}
	a, b := ts[0].(*SSHTarget), ts[1].(*SSHTarget)
	if a.jump == nil || a.jump != b.jump {
		t.Fatalf("jump targets %p %p: not shared", a.jump, b.jump)
	}
}
