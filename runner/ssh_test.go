//go:build unix

package runner

import (
	"context"
	cryptorand "crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// scriptedPrompter answers prompts from fields and records what it was asked.
type scriptedPrompter struct {
	decision HostKeyDecision
	secrets  map[SecretKind]string

	mu       sync.Mutex
	hostKeys []HostKeyPrompt
	asked    []SecretPrompt
}

func (p *scriptedPrompter) HostKey(ctx context.Context, hp HostKeyPrompt) (HostKeyDecision, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hostKeys = append(p.hostKeys, hp)
	return p.decision, nil
}

func (p *scriptedPrompter) Secret(ctx context.Context, sp SecretPrompt) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, sp)
	s, ok := p.secrets[sp.Kind]
	if !ok {
		return "", fmt.Errorf("no %s scripted", sp.Kind)
	}
	return s, nil
}

func (p *scriptedPrompter) secretCount(k SecretKind) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, a := range p.asked {
		if a.Kind == k {
			n++
		}
	}
	return n
}

// knownHostsFor writes a known_hosts file trusting key for 127.0.0.1:port.
func knownHostsFor(t *testing.T, port int, key ssh.PublicKey) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "known_hosts")
	line := knownhosts.Line([]string{knownhosts.Normalize(fmt.Sprintf("127.0.0.1:%d", port))}, key)
	if err := os.WriteFile(file, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

func fakeConfig(f *fakeSSH, knownHostsFile string, p Prompter) SSHConfig {
	return SSHConfig{
		Name: "fake", Addr: "127.0.0.1", Port: f.port(), User: "lab",
		NoAgent: true, KnownHosts: knownHostsFile, Prompter: p,
		KillGrace: 500 * time.Millisecond,
	}
}

func TestSSHTargetOnFakeServer(t *testing.T) {
	t.Parallel()
	f := newFakeSSH(t, "pw")
	p := &scriptedPrompter{secrets: map[SecretKind]string{SecretPassword: "pw"}}
	tg := NewSSH(fakeConfig(f, knownHostsFor(t, f.port(), f.hostKey.PublicKey()), p))
	defer tg.Close()
	targetSuite(t, tg)
	if n := p.secretCount(SecretPassword); n != 1 {
		t.Errorf("password asked %d times over many sessions, want once (one connection reused)", n)
	}
	for _, c := range f.execLog() {
		if strings.Contains(c, "pw") && !strings.Contains(c, "pwned") {
			t.Errorf("password in a command line: %q", c)
		}
	}
}

func TestSSHWrongPassword(t *testing.T) {
	f := newFakeSSH(t, "right")
	p := &scriptedPrompter{secrets: map[SecretKind]string{SecretPassword: "wrong"}}
	tg := NewSSH(fakeConfig(f, knownHostsFor(t, f.port(), f.hostKey.PublicKey()), p))
	defer tg.Close()
	_, err := tg.Run(context.Background(), Command{Cmd: "true"})
	var ae *ConnError
	if !errors.As(err, &ae) || ae.Cause != CauseAuthFailed || ae.Host != "fake" || ae.User != "lab" {
		t.Fatalf("err = %v, want an authentication ConnError for lab@fake", err)
	}
	if n := p.secretCount(SecretPassword); n != 3 {
		t.Fatalf("asked %d times, want 3 attempts", n)
	}
	for i, a := range p.asked {
		if a.Attempt != i+1 || a.Host != "fake" || a.User != "lab" {
			t.Fatalf("prompt %d = %+v", i, a)
		}
	}
	if strings.Contains(err.Error(), "wrong") {
		t.Fatalf("error shows the password: %v", err)
	}
}

func TestSSHUnknownHostKey(t *testing.T) {
	t.Parallel()
	f := newFakeSSH(t, "pw")
	fp := ssh.FingerprintSHA256(f.hostKey.PublicKey())
	secrets := map[SecretKind]string{SecretPassword: "pw"}
	ctx := context.Background()

	t.Run("headless refuses", func(t *testing.T) {
		kh := filepath.Join(t.TempDir(), "ssh", "known_hosts")
		tg := NewSSH(fakeConfig(f, kh, nil))
		defer tg.Close()
		_, err := tg.Run(ctx, Command{Cmd: "true"})
		var he *HostKeyError
		if !errors.As(err, &he) || !errors.Is(err, ErrHostKeyRefused) || he.Fingerprint != fp || len(he.Known) != 0 {
			t.Fatalf("err = %v", err)
		}
		if !strings.Contains(err.Error(), fp) || !strings.Contains(Hint(err), "--accept-new-host-keys") {
			t.Fatalf("message does not help: %v / %s", err, Hint(err))
		}
		if _, err := os.Stat(kh); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("known_hosts written on refusal: %v", err)
		}
	})
	t.Run("accept-new saves", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "ssh")
		kh := filepath.Join(dir, "known_hosts")
		p := &scriptedPrompter{decision: AcceptAndSave, secrets: secrets}
		tg := NewSSH(fakeConfig(f, kh, p))
		if res, err := tg.Run(ctx, Command{Cmd: "true"}); err != nil || res.ExitCode != 0 {
			t.Fatalf("%v %v", res, err)
		}
		tg.Close()
		if len(p.hostKeys) != 1 {
			t.Fatalf("prompts %v", p.hostKeys)
		}
		hp := p.hostKeys[0]
		if hp.Host != "fake" || hp.Fingerprint != fp || hp.KeyType != "ssh-ed25519" || hp.KnownHosts != kh || !strings.Contains(hp.Address, fmt.Sprint(f.port())) {
			t.Fatalf("prompt %+v", hp)
		}
		st, err := os.Stat(kh)
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("known_hosts %v %v", st, err)
		}
		if dst, _ := os.Stat(dir); dst.Mode().Perm() != 0o700 {
			t.Fatalf("dir mode %v", dst.Mode())
		}
		// Now known: a headless target connects without asking.
		p2 := &scriptedPrompter{decision: Refuse, secrets: secrets}
		tg2 := NewSSH(fakeConfig(f, kh, p2))
		defer tg2.Close()
		if _, err := tg2.Run(ctx, Command{Cmd: "true"}); err != nil {
			t.Fatal(err)
		}
		if len(p2.hostKeys) != 0 {
			t.Fatal("asked again about a saved key")
		}
	})
	t.Run("headless flag accepts and saves", func(t *testing.T) {
		kh := filepath.Join(t.TempDir(), "known_hosts")
		cfg := fakeConfig(f, kh, nil)
		cfg.Prompter = acceptNewWithPassword{HeadlessPrompter{AcceptNewHostKeys: true}}
		tg := NewSSH(cfg)
		defer tg.Close()
		if _, err := tg.Run(ctx, Command{Cmd: "true"}); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(kh)
		if !strings.Contains(string(b), fmt.Sprintf("[127.0.0.1]:%d ssh-ed25519 ", f.port())) {
			t.Fatalf("known_hosts %q", b)
		}
	})
	t.Run("accept once does not save", func(t *testing.T) {
		kh := filepath.Join(t.TempDir(), "known_hosts")
		p := &scriptedPrompter{decision: AcceptOnce, secrets: secrets}
		tg := NewSSH(fakeConfig(f, kh, p))
		defer tg.Close()
		if _, err := tg.Run(ctx, Command{Cmd: "true"}); err != nil {
			t.Fatal(err)
		}
		// Reconnecting in the same Target does not ask again.
		f.drop()
		if _, err := tg.Run(ctx, Command{Cmd: "true"}); err != nil {
			t.Fatal(err)
		}
		if len(p.hostKeys) != 1 {
			t.Fatalf("asked %d times", len(p.hostKeys))
		}
		if _, err := os.Stat(kh); !errors.Is(err, os.ErrNotExist) {
			t.Fatal("known_hosts written for accept-once")
		}
	})
}

// acceptNewWithPassword is the headless prompter plus the fake's password.
type acceptNewWithPassword struct{ HeadlessPrompter }

func (a acceptNewWithPassword) Secret(ctx context.Context, p SecretPrompt) (string, error) {
	return "pw", nil
}

func TestSSHChangedHostKey(t *testing.T) {
	f := newFakeSSH(t, "pw")
	// known_hosts has another key for this host on line 2.
	other := newFakeSSH(t, "pw")
	kh := filepath.Join(t.TempDir(), "known_hosts")
	line := knownhosts.Line([]string{knownhosts.Normalize(fmt.Sprintf("127.0.0.1:%d", f.port()))}, other.hostKey.PublicKey())
	if err := os.WriteFile(kh, []byte("# lab hosts\n"+line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &scriptedPrompter{decision: AcceptAndSave, secrets: map[SecretKind]string{SecretPassword: "pw"}}
	tg := NewSSH(fakeConfig(f, kh, p))
	defer tg.Close()
	_, err := tg.Run(context.Background(), Command{Cmd: "true"})
	var he *HostKeyError
	if !errors.As(err, &he) || len(he.Known) != 1 {
		t.Fatalf("err = %v, want a changed-key HostKeyError", err)
	}
	offered := ssh.FingerprintSHA256(f.hostKey.PublicKey())
	if he.Fingerprint != offered || he.Known[0].File != kh || he.Known[0].Line != 2 || he.Known[0].Fingerprint != ssh.FingerprintSHA256(other.hostKey.PublicKey()) {
		t.Fatalf("error %+v", he)
	}
	msg := err.Error()
	for _, want := range []string{"fake", offered, fmt.Sprintf("%s:2", kh), "CHANGED"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q: %s", want, msg)
		}
	}
	if len(p.hostKeys) != 0 {
		t.Fatal("a changed key was offered to the prompter; it must always be refused")
	}
	b, _ := os.ReadFile(kh)
	if strings.Count(string(b), "\n") != 2 {
		t.Fatalf("known_hosts modified: %q", b)
	}
}

func TestSSHDroppedConnection(t *testing.T) {
	t.Parallel()
	f := newFakeSSH(t, "pw")
	p := &scriptedPrompter{secrets: map[SecretKind]string{SecretPassword: "pw"}}
	tg := NewSSH(fakeConfig(f, knownHostsFor(t, f.port(), f.hostKey.PublicKey()), p))
	defer tg.Close()
	ctx := context.Background()
	var once sync.Once
	_, err := tg.Run(ctx, Command{Cmd: "echo started; sleep 30", Output: func(l Line) {
		if l.Text == "started" {
			once.Do(func() { go f.drop() })
		}
	}})
	var ce *ConnError
	if !errors.As(err, &ce) || ce.Host != "fake" {
		t.Fatalf("err = %v (%T), want *ConnError naming the host", err, err)
	}
	if !strings.Contains(err.Error(), "fake") {
		t.Fatalf("message lacks host: %v", err)
	}
	var c collect
	res, err := tg.Run(ctx, Command{Cmd: "echo again", Output: c.add})
	if err != nil || res.ExitCode != 0 || strings.Join(c.text(Stdout), "") != "again" {
		t.Fatalf("after reconnect: %v %v %q", res, err, c.text(Stdout))
	}
	if n := p.secretCount(SecretPassword); n != 1 {
		t.Fatalf("password asked %d times; a reconnect reuses the one that worked", n)
	}
	// The server is gone for good: a clear ConnError, not a hang.
	f.close()
	_, err = tg.Run(ctx, Command{Cmd: "true"})
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want *ConnError", err)
	}
}

func TestSSHKeepAliveClosesDeadConnection(t *testing.T) {
	f := newFakeSSH(t, "pw")
	p := &scriptedPrompter{secrets: map[SecretKind]string{SecretPassword: "pw"}}
	cfg := fakeConfig(f, knownHostsFor(t, f.port(), f.hostKey.PublicKey()), p)
	cfg.KeepAlive = 50 * time.Millisecond
	tg := NewSSH(cfg)
	defer tg.Close()
	if err := tg.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.drop()
	tg.mu.Lock()
	c := tg.conn
	tg.mu.Unlock()
	select {
	case <-c.dead:
	case <-time.After(5 * time.Second):
		t.Fatal("dead connection not noticed")
	}
}

// fakeSudo returns a setup installing sudo and id stand-ins in front of PATH
// for commands run by the fake server: the user is uid 1000 and sudo wants password pw.
func fakeSudo(t *testing.T, mode, pw string) func(*fakeSSH) {
	dir := t.TempDir()
	sudo := `#!/bin/sh
n=0
while [ $# -gt 0 ]; do case "$1" in -n) n=1; shift;; -k|-S) shift;; -p) shift 2;; *) break;; esac; done
case "$FAKE_SUDO_MODE" in
nopasswd) FAKE_SUDO_ROOT=1 exec "$@";;
denied) echo "lab is not in the sudoers file." >&2; exit 1;;
esac
if [ $n = 1 ]; then echo "sudo: a password is required" >&2; exit 1; fi
IFS= read -r pw
[ "$pw" = "$FAKE_SUDO_PW" ] || { echo "Sorry, try again." >&2; exit 1; }
FAKE_SUDO_ROOT=1 exec "$@"
`
	id := `#!/bin/sh
if [ "$1" = -u ]; then if [ -n "$FAKE_SUDO_ROOT" ]; then echo 0; else echo 1000; fi; exit 0; fi
exec /usr/bin/id "$@"
`
	for name, body := range map[string]string{"sudo": sudo, "id": id} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"PATH=" + dir + ":" + os.Getenv("PATH"), "FAKE_SUDO_MODE=" + mode, "FAKE_SUDO_PW=" + pw}
	return func(f *fakeSSH) { f.env = env }
}

func TestSSHSudo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name     string
		mode     string
		answer   string
		wantErr  bool
		wantAsks int
	}{
		{"password on stdin", "password", "s3cret-sudo", false, 1},
		{"passwordless", "nopasswd", "", false, 0},
		{"wrong password", "password", "nope", true, 3},
		{"not allowed", "denied", "s3cret-sudo", true, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeSSH(t, "pw", fakeSudo(t, tc.mode, "s3cret-sudo"))
			p := &scriptedPrompter{secrets: map[SecretKind]string{SecretPassword: "pw", SecretSudo: tc.answer}}
			tg := NewSSH(fakeConfig(f, knownHostsFor(t, f.port(), f.hostKey.PublicKey()), p))
			defer tg.Close()
			var c collect
			res, err := tg.Run(ctx, Command{Cmd: "id -u; cat", Sudo: true, Stdin: []byte("user input\n"), Output: c.add})
			if tc.wantErr {
				var se *SudoError
				if !errors.As(err, &se) || se.Host != "fake" {
					t.Fatalf("err = %v, want *SudoError", err)
				}
				if strings.Contains(err.Error(), "nope") || strings.Contains(err.Error(), "s3cret") {
					t.Fatalf("error shows a password: %v", err)
				}
			} else {
				if err != nil || res.ExitCode != 0 {
					t.Fatalf("%v %v tail %v", res, err, res.Tail)
				}
				if got := strings.Join(c.text(Stdout), "|"); got != "0|user input" {
					t.Fatalf("stdout %q: the command must see its own stdin, not the password", got)
				}
				// Cached: a second sudo command does not ask again.
				if _, err := tg.Run(ctx, Command{Cmd: "true", Sudo: true}); err != nil {
					t.Fatal(err)
				}
			}
			if n := p.secretCount(SecretSudo); n != tc.wantAsks {
				t.Fatalf("sudo password asked %d times, want %d", n, tc.wantAsks)
			}
			for _, c := range f.execLog() {
				if strings.Contains(c, "s3cret") {
					t.Fatalf("sudo password in a command line: %q", c)
				}
			}
		})
	}
}

func TestConnectAll(t *testing.T) {
	f := newFakeSSH(t, "pw")
	p := &scriptedPrompter{secrets: map[SecretKind]string{SecretPassword: "wrong"}}
	bad := NewSSH(fakeConfig(f, knownHostsFor(t, f.port(), f.hostKey.PublicKey()), p))
	defer bad.Close()
	err := ConnectAll(context.Background(), []Target{NewLocal(), bad})
	var ae *ConnError
	if !errors.As(err, &ae) || ae.Cause != CauseAuthFailed || ae.Host != "fake" {
		t.Fatalf("err = %v", err)
	}
}

// A server with several host keys presents the type known_hosts holds for
// it, instead of its preferred one being taken for a changed key.
func TestSSHKnownKeyTypeIsNegotiated(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(cryptorand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rsaSigner, err := ssh.NewSignerFromKey(rsaKey)
	if err != nil {
		t.Fatal(err)
	}
	f := newFakeSSH(t, "pw", func(f *fakeSSH) { f.extraKeys = []ssh.Signer{rsaSigner} })
	// known_hosts knows only the ed25519 key; x/crypto prefers RSA.
	kh := knownHostsFor(t, f.port(), f.hostKey.PublicKey())
	p := &scriptedPrompter{decision: Refuse, secrets: map[SecretKind]string{SecretPassword: "pw"}}
	tg := NewSSH(fakeConfig(f, kh, p))
	defer tg.Close()
	if err := tg.Connect(context.Background()); err != nil {
		t.Fatalf("connect with the ed25519 key known: %v", err)
	}
}
