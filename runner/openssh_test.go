//go:build unix

package runner

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// writeFile writes a test file or fails.
func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// matchConfig is an ssh config whose Match blocks only OpenSSH can
// evaluate. The lines of the blocks the library parser skips are 1, 3, 7
// and 9.
func matchConfig(port int, key, known string) string {
	return fmt.Sprintf(`Match user nobody
  Port 1111
Match host labhost exec "true"
  HostName 127.0.0.1
Match host labhost exec "false"
  User wrong-user
Match final originalhost labhost
  IdentitiesOnly yes
Match canonical all
  Port 2222
Host labhost
  HostName localhost
  Port %d
  IdentityFile %s
  UserKnownHostsFile %s
  StrictHostKeyChecking yes
`, port, key, known)
}

// TestOpenSSHResolvesMatchBlocks: with the OpenSSH client installed, a
// host is resolved by `ssh -G`, which evaluates Match user, exec and final
// (the library parser failed every host on the first Match user), with
// the inventory's user given to it; the connection then uses what it said.
func TestOpenSSHResolvesMatchBlocks(t *testing.T) {
	t.Parallel()
	testpeer.Require(t, "ssh")
	s := startSSHD(t)
	dir := t.TempDir()
	cfgFile := writeFile(t, filepath.Join(dir, "config"), matchConfig(s.Port, s.UserKey, s.KnownHosts))
	inv, err := ParseInventory("hosts.yaml", []byte("hosts:\n  - {name: srv, address: labhost, roles: [server]}\n  - {name: as-nobody, address: labhost, user: nobody, roles: [other]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	pool := NewPool(inv, SSHOptions{SSHConfigFiles: []string{cfgFile}, NoAgent: true})
	defer pool.Close()
	cfg, err := pool.SSHConfig(inv.Hosts[0])
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != "127.0.0.1" || cfg.Port != s.Port || cfg.User != currentUser() || !cfg.IdentitiesOnly ||
		cfg.StrictHostKeyChecking != "yes" || cfg.KnownHosts != s.KnownHosts || len(cfg.Identities) != 1 || cfg.Identities[0] != s.UserKey {
		t.Fatalf("resolved %+v", cfg)
	}
	// The inventory's user reaches Match user.
	nb, err := pool.SSHConfig(inv.Hosts[1])
	if err != nil {
		t.Fatal(err)
	}
	if nb.User != "nobody" || nb.Port != 1111 {
		t.Fatalf("as nobody: user %q port %d, want nobody 1111", nb.User, nb.Port)
	}
	tg, err := pool.Target(inv.Hosts[0])
	if err != nil {
		t.Fatal(err)
	}
	var c collect
	res, err := tg.Run(context.Background(), Command{Cmd: "echo resolved by ssh -G", Output: c.add})
	if err != nil || res.ExitCode != 0 || strings.Join(c.text(Stdout), "") != "resolved by ssh -G" {
		t.Fatalf("%v %v %v", res, err, c.lines)
	}
	// The connection is goph's: its Config says where it went.
	st := tg.(*SSHTarget)
	st.mu.Lock()
	gc := st.conn.client.Config
	st.mu.Unlock()
	if gc.Addr != "127.0.0.1" || gc.Port != uint(s.Port) || gc.User != currentUser() {
		t.Fatalf("goph config %+v", gc)
	}
}

// TestLibraryParserSkipsMatchBlocks: without the OpenSSH client, Match
// blocks the library cannot evaluate are skipped with a warning naming
// file and line (not applied to every host, not failing every host), and
// "Match host X exec ..." is not read as "Host X".
func TestLibraryParserSkipsMatchBlocks(t *testing.T) {
	dir := t.TempDir()
	cfgFile := writeFile(t, filepath.Join(dir, "config"), matchConfig(2200, "/keys/id", "/kh")+"Match host other\n  Port 2300\n")
	inv, err := ParseInventory("hosts.yaml", []byte("hosts:\n  - {name: srv, address: labhost, roles: [server]}\n  - {name: o, address: other, roles: [server]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	pool := NewPool(inv, SSHOptions{SSHConfigFiles: []string{cfgFile}, SSHClient: "none"})
	defer pool.Close()
	cfg, err := pool.SSHConfig(inv.Hosts[0])
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != "localhost" || cfg.Port != 2200 || cfg.User == "wrong-user" || cfg.IdentitiesOnly || cfg.Identities[0] != "/keys/id" || cfg.StrictHostKeyChecking != "yes" {
		t.Fatalf("resolved %+v", cfg)
	}
	// Match host alone is a Host block.
	if o, err := pool.SSHConfig(inv.Hosts[1]); err != nil || o.Port != 2300 {
		t.Fatalf("Match host other: %+v %v", o, err)
	}
	warns := strings.Join(pool.Warnings(), "\n")
	for _, line := range []int{1, 3, 5, 7, 9} {
		if !strings.Contains(warns, fmt.Sprintf("%s:%d: ", cfgFile, line)) {
			t.Errorf("no warning for line %d:\n%s", line, warns)
		}
	}
	if n := len(pool.Warnings()); n != 5 {
		t.Errorf("%d warnings, want 5:\n%s", n, warns)
	}
}

// TestProxyCommandThroughSecondSSHD: ProxyCommand runs `ssh -W %h:%p`
// through a second sshd and dpulab speaks SSH over its pipes; the command
// is ended when the connection closes.
func TestProxyCommandThroughSecondSSHD(t *testing.T) {
	t.Parallel()
	testpeer.Require(t, "ssh")
	jump, inner := startSSHD(t), startSSHD(t)
	dir := t.TempDir()
	jumpCfg := writeFile(t, filepath.Join(dir, "jump_config"), fmt.Sprintf(`Host jump
  HostName 127.0.0.1
  Port %d
  IdentityFile %s
  UserKnownHostsFile %s
  StrictHostKeyChecking yes
  BatchMode yes
`, jump.Port, jump.UserKey, jump.KnownHosts))
	cfgFile := writeFile(t, filepath.Join(dir, "config"), fmt.Sprintf(`Host inner
  HostName 127.0.0.1
  Port %d
  IdentityFile %s
  UserKnownHostsFile %s
  ProxyCommand ssh -F %s -W %%h:%%p jump
`, inner.Port, inner.UserKey, inner.KnownHosts, jumpCfg))
	inv, err := ParseInventory("hosts.yaml", []byte("hosts:\n  - {name: inner, address: inner, roles: [server]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	pool := NewPool(inv, SSHOptions{SSHConfigFiles: []string{cfgFile}, NoAgent: true})
	// Before the sshds' cleanup: a failing test still closes.
	t.Cleanup(func() { pool.Close() })
	tg, err := pool.Target(inv.Hosts[0])
	if err != nil {
		t.Fatal(err)
	}
	var c collect
	res, err := tg.Run(context.Background(), Command{Cmd: "echo ${SSH_CONNECTION##* }", Output: c.add})
	if err != nil || res.ExitCode != 0 || strings.Join(c.text(Stdout), "") != fmt.Sprint(inner.Port) {
		t.Fatalf("%v %v %v", res, err, c.lines)
	}
	proxy := "-W 127.0.0.1:" + fmt.Sprint(inner.Port) + " jump"
	pids := processesWith(t, jumpCfg)
	if len(pids) == 0 {
		t.Fatalf("no process runs the ProxyCommand (%s): the host was dialled directly", proxy)
	}
	if err := pool.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		// Reaped by Close: the /proc entry is gone.
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
			if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); strings.Contains(string(b), jumpCfg) {
				t.Fatalf("ProxyCommand pid %d still runs after Close", pid)
			}
		}
	}
}

// processesWith lists the pids whose command line contains s.
func processesWith(t *testing.T, s string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	var pids []int
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), s) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestProxyCommandLineQuotes(t *testing.T) {
	got, err := proxyCommandLine("nc %h %p # %r %n %%", "a b;rm -rf x", 2222, "u'x", "al$ias")
	if err != nil {
		t.Fatal(err)
	}
	want := `nc 'a b;rm -rf x' 2222 # 'u'\''x' 'al$ias' %`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if _, err := proxyCommandLine("nc %x", "h", 22, "u", "a"); err == nil {
		t.Fatal("unknown token accepted")
	}
}

// hostKeyPool resolves one host through an ssh config (ssh -G) whose
// known_hosts settings are extra, and returns its Target.
func hostKeyPool(t *testing.T, s *realSSHD, extra string) (*Pool, Target) {
	t.Helper()
	dir := t.TempDir()
	cfgFile := writeFile(t, filepath.Join(dir, "config"), fmt.Sprintf("Host h\n  HostName 127.0.0.1\n  Port %d\n  IdentityFile %s\n%s", s.Port, s.UserKey, extra))
	inv, err := ParseInventory("hosts.yaml", []byte("hosts:\n  - {name: h, address: h, roles: [server]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	pool := NewPool(inv, SSHOptions{SSHConfigFiles: []string{cfgFile}, NoAgent: true})
	t.Cleanup(func() { pool.Close() })
	tg, err := pool.Target(inv.Hosts[0])
	if err != nil {
		t.Fatal(err)
	}
	return pool, tg
}

// TestGlobalKnownHosts: a key known only from GlobalKnownHostsFile is
// trusted (StrictHostKeyChecking yes: nobody is asked).
func TestGlobalKnownHosts(t *testing.T) {
	t.Parallel()
	testpeer.Require(t, "ssh")
	s := startSSHD(t)
	dir := t.TempDir()
	user := filepath.Join(dir, "user_known_hosts")
	_, tg := hostKeyPool(t, s, fmt.Sprintf("  UserKnownHostsFile %s\n  GlobalKnownHostsFile %s\n  StrictHostKeyChecking yes\n", user, s.KnownHosts))
	if err := tg.(*SSHTarget).Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(user); err == nil {
		t.Fatal("the user's known_hosts was written though the global file knows the key")
	}
}

// TestCertAuthority: sshd presents a host certificate signed by a CA that
// an @cert-authority line trusts; no plain key of the host is known.
// The same CA marked @revoked is refused.
func TestCertAuthority(t *testing.T) {
	t.Parallel()
	testpeer.Require(t, "ssh")
	_, caPriv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := ssh.NewSignerFromKey(caPriv)
	if err != nil {
		t.Fatal(err)
	}
	s := &realSSHD{testpeer.StartSSHD(t, testpeer.SSHDHostCertificate(ca, "127.0.0.1"))}
	dir := t.TempDir()
	caLine := fmt.Sprintf("@cert-authority [127.0.0.1]:%d %s", s.Port, ssh.MarshalAuthorizedKey(ca.PublicKey()))
	kh := writeFile(t, filepath.Join(dir, "known_hosts"), "# trusted CA\n"+caLine)
	_, tg := hostKeyPool(t, s, fmt.Sprintf("  UserKnownHostsFile %s\n  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n", kh))
	if err := tg.(*SSHTarget).Connect(context.Background()); err != nil {
		t.Fatalf("host certificate signed by the trusted CA: %v", err)
	}

	revoked := writeFile(t, filepath.Join(dir, "revoked"), caLine+"@revoked * "+string(ssh.MarshalAuthorizedKey(ca.PublicKey())))
	_, tg2 := hostKeyPool(t, s, fmt.Sprintf("  UserKnownHostsFile %s\n  GlobalKnownHostsFile /dev/null\n", revoked))
	err = tg2.(*SSHTarget).Connect(context.Background())
	if err == nil || !strings.Contains(err.Error(), "@revoked") {
		t.Fatalf("revoked CA: err = %v", err)
	}
}

// TestHashKnownHosts: with HashKnownHosts yes an accepted key is saved
// hashed, and the next connection finds it.
func TestHashKnownHosts(t *testing.T) {
	t.Parallel()
	testpeer.Require(t, "ssh")
	s := startSSHD(t)
	dir := t.TempDir()
	kh := filepath.Join(dir, "known_hosts")
	_, tg := hostKeyPool(t, s, fmt.Sprintf("  UserKnownHostsFile %s\n  GlobalKnownHostsFile /dev/null\n  HashKnownHosts yes\n  StrictHostKeyChecking accept-new\n", kh))
	if err := tg.(*SSHTarget).Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(kh)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(string(b))
	if !strings.HasPrefix(line, "|1|") || strings.Contains(line, "127.0.0.1") || strings.Count(line, "\n") != 0 {
		t.Fatalf("saved line %q: want one hashed entry", line)
	}
	_, hosts, key, _, _, err := ssh.ParseKnownHosts(b)
	if err != nil || !strings.HasPrefix(hosts[0], "|1|") || ssh.FingerprintSHA256(key) != s.Fingerprint() {
		t.Fatalf("saved %v %v %v", hosts, key, err)
	}
	if hosts[0] == knownhosts.Normalize(s.Addr()) {
		t.Fatal("not hashed")
	}
	// Found again: a refusing second connection succeeds.
	_, tg2 := hostKeyPool(t, s, fmt.Sprintf("  UserKnownHostsFile %s\n  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n", kh))
	if err := tg2.(*SSHTarget).Connect(context.Background()); err != nil {
		t.Fatalf("hashed entry not found again: %v", err)
	}
}

// TestUserCertificate: a key the server does not know logs in with a
// certificate signed by a CA the server trusts (TrustedUserCAKeys),
// offered because CertificateFile names it; without it the key is
// refused.
func TestUserCertificate(t *testing.T) {
	t.Parallel()
	testpeer.Require(t, "ssh")
	dir := t.TempDir()
	_, caPriv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := ssh.NewSignerFromKey(caPriv)
	if err != nil {
		t.Fatal(err)
	}
	caFile := writeFile(t, filepath.Join(dir, "user_ca.pub"), string(ssh.MarshalAuthorizedKey(ca.PublicKey())))
	s := &realSSHD{testpeer.StartSSHD(t, testpeer.SSHDConfig("TrustedUserCAKeys "+caFile))}
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	blk, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	key := writeFile(t, filepath.Join(dir, "certified"), string(pem.EncodeToMemory(blk)))
	sp, _ := ssh.NewPublicKey(pub)
	cert := &ssh.Certificate{Key: sp, CertType: ssh.UserCert, KeyId: "test", ValidPrincipals: []string{currentUser()}, ValidBefore: ssh.CertTimeInfinity}
	if err := cert.SignCert(rand.Reader, ca); err != nil {
		t.Fatal(err)
	}
	certFile := writeFile(t, filepath.Join(dir, "the-cert.pub"), string(ssh.MarshalAuthorizedKey(cert)))

	connect := func(extra string) error {
		cfgFile := writeFile(t, filepath.Join(t.TempDir(), "config"), fmt.Sprintf("Host h\n  HostName 127.0.0.1\n  Port %d\n  IdentityFile %s\n  UserKnownHostsFile %s\n  IdentitiesOnly yes\n%s", s.Port, key, s.KnownHosts, extra))
		inv, err := ParseInventory("hosts.yaml", []byte("hosts:\n  - {name: h, address: h, roles: [server]}\n"))
		if err != nil {
			t.Fatal(err)
		}
		pool := NewPool(inv, SSHOptions{SSHConfigFiles: []string{cfgFile}, NoAgent: true})
		defer pool.Close()
		tg, err := pool.Target(inv.Hosts[0])
		if err != nil {
			t.Fatal(err)
		}
		return tg.(*SSHTarget).Connect(context.Background())
	}
	if err := connect(""); err == nil {
		t.Fatal("the uncertified key logged in: the test proves nothing")
	}
	if err := connect("  CertificateFile " + certFile + "\n"); err != nil {
		t.Fatalf("with the certificate: %v", err)
	}
}

// TestIdentityAgentAndIdentitiesOnly: IdentityAgent names the agent's
// socket (a real ssh-agent holding the key the server knows); with
// IdentitiesOnly yes and another IdentityFile, the agent's key is not
// offered, as with OpenSSH.
func TestIdentityAgentAndIdentitiesOnly(t *testing.T) {
	t.Parallel()
	agentBin := testpeer.Require(t, "ssh-agent")
	addBin := testpeer.Require(t, "ssh-add")
	s := startSSHD(t)
	dir := t.TempDir()
	sock := filepath.Join(dir, "agent.sock")
	ag := exec.Command(agentBin, "-D", "-a", sock)
	if err := ag.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ag.Process.Kill(); ag.Wait() })
	for i := 0; ; i++ {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if i == 100 {
			t.Fatal("ssh-agent did not create its socket")
		}
		time.Sleep(50 * time.Millisecond)
	}
	add := exec.Command(addBin, s.UserKey)
	add.Env = append(os.Environ(), "SSH_AUTH_SOCK="+sock)
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("ssh-add: %v %s", err, out)
	}
	connect := func(extra string) error {
		cfgFile := writeFile(t, filepath.Join(t.TempDir(), "config"), fmt.Sprintf("Host h\n  HostName 127.0.0.1\n  Port %d\n  UserKnownHostsFile %s\n  IdentityAgent %s\n  IdentityFile %s\n%s", s.Port, s.KnownHosts, sock, filepath.Join(dir, "no-such-key"), extra))
		inv, err := ParseInventory("hosts.yaml", []byte("hosts:\n  - {name: h, address: h, roles: [server]}\n"))
		if err != nil {
			t.Fatal(err)
		}
		pool := NewPool(inv, SSHOptions{SSHConfigFiles: []string{cfgFile}})
		defer pool.Close()
		tg, err := pool.Target(inv.Hosts[0])
		if err != nil {
			t.Fatal(err)
		}
		return tg.(*SSHTarget).Connect(context.Background())
	}
	if err := connect(""); err != nil {
		t.Fatalf("through the agent named by IdentityAgent: %v", err)
	}
	if err := connect("  IdentitiesOnly yes\n"); err == nil {
		t.Fatal("IdentitiesOnly yes: the agent's key was offered")
	}
}

// TestOpenSSHConfigError: a config OpenSSH refuses is reported with its
// own words (file and line), and StrictHostKeyChecking accept-new is
// left to the Prompter when SSHOptions.PromptHostKeys says so.
func TestOpenSSHConfigError(t *testing.T) {
	testpeer.Require(t, "ssh")
	dir := t.TempDir()
	bad := writeFile(t, filepath.Join(dir, "bad"), "Host x\n  NoSuchOption yes\n")
	inv, err := ParseInventory("hosts.yaml", []byte("hosts:\n  - {name: x, address: x, roles: [server]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	pool := NewPool(inv, SSHOptions{SSHConfigFiles: []string{bad}})
	defer pool.Close()
	if _, err := pool.SSHConfig(inv.Hosts[0]); err == nil || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), "ssh -G x") {
		t.Fatalf("err = %v", err)
	}
	good := writeFile(t, filepath.Join(dir, "good"), "Host x\n  StrictHostKeyChecking accept-new\n")
	for _, tc := range []struct {
		prompt bool
		want   string
	}{{false, "accept-new"}, {true, "ask"}} {
		p := NewPool(inv, SSHOptions{SSHConfigFiles: []string{good}, PromptHostKeys: tc.prompt})
		c, err := p.SSHConfig(inv.Hosts[0])
		p.Close()
		if err != nil || c.StrictHostKeyChecking != tc.want {
			t.Fatalf("PromptHostKeys %v: %q %v", tc.prompt, c.StrictHostKeyChecking, err)
		}
	}
}

// TestOpenSSHSeveralConfigFiles: several SSHConfigFiles are read in order
// by ssh -G (first value wins), through one file including them, removed
// by Close.
func TestOpenSSHSeveralConfigFiles(t *testing.T) {
	testpeer.Require(t, "ssh")
	dir := t.TempDir()
	a := writeFile(t, filepath.Join(dir, "a"), "Host x\n  Port 2001\n")
	b := writeFile(t, filepath.Join(dir, "b with space"), "Host x\n  Port 2002\n  User fromb\n")
	inv, err := ParseInventory("hosts.yaml", []byte("hosts:\n  - {name: x, address: x, roles: [server]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	pool := NewPool(inv, SSHOptions{SSHConfigFiles: []string{a, b}})
	c, err := pool.SSHConfig(inv.Hosts[0])
	if err != nil || c.Port != 2001 || c.User != "fromb" {
		t.Fatalf("%+v %v", c, err)
	}
	inc := pool.includeFile
	pool.Close()
	if _, err := os.Stat(inc); inc == "" || err == nil {
		t.Fatalf("include file %q left behind", inc)
	}
}
