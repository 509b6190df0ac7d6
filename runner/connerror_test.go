//go:build unix

package runner

import (
	"context"
	cryptorand "crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/dpulab/dpulab/internal/testpeer"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// connErr runs one command and returns its error as a *ConnError.
func connErr(t *testing.T, cfg SSHConfig) (*ConnError, error) {
	t.Helper()
	tg := NewSSH(cfg)
	defer tg.Close()
	_, err := tg.Run(context.Background(), Command{Cmd: "true"})
	var ce *ConnError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v (%T), want a *ConnError", err, err)
	}
	return ce, err
}

// checkMessage asserts the error names the host exactly once and the hint
// says each of want.
func checkMessage(t *testing.T, err error, host string, want ...string) {
	t.Helper()
	t.Logf("error: %v\nhint: %s", err, Hint(err))
	if n := strings.Count(err.Error(), host); n != 1 {
		t.Errorf("error names %s %d times, want once: %v", host, n, err)
	}
	h := Hint(err)
	for _, w := range want {
		if !strings.Contains(h, w) {
			t.Errorf("hint lacks %q: %s", w, h)
		}
	}
}

// TestSSHFailuresClassified: each way of failing to reach a real sshd
// comes back as a ConnError with its own Cause, and a Hint that names the
// fix for that cause.
func TestSSHFailuresClassified(t *testing.T) {
	t.Parallel()
	sshd := startSSHD(t)
	const host = "lab-host-7"

	t.Run("identity file missing", func(t *testing.T) {
		t.Parallel()
		cfg := sshd.config(host)
		missing := filepath.Join(t.TempDir(), "id_nope")
		cfg.Identities = []string{missing}
		ce, err := connErr(t, cfg)
		if ce.Cause != CauseIdentityMissing || ce.Identity != missing {
			t.Fatalf("cause %v identity %q: %v", ce.Cause, ce.Identity, err)
		}
		checkMessage(t, err, host, "ssh-keygen", missing)
	})
	t.Run("identity encrypted, no passphrase", func(t *testing.T) {
		t.Parallel()
		file, pub, _ := userKey(t, t.TempDir(), "secret phrase")
		authorize(t, sshd, pub)
		cfg := sshd.config(host)
		cfg.Identities = []string{file}
		ce, err := connErr(t, cfg)
		if ce.Cause != CauseIdentityEncrypted || ce.Identity != file {
			t.Fatalf("cause %v identity %q: %v", ce.Cause, ce.Identity, err)
		}
		checkMessage(t, err, host, "ssh-add "+file)
	})
	t.Run("identity unreadable", func(t *testing.T) {
		t.Parallel()
		cfg := sshd.config(host)
		dir := t.TempDir() // a directory where a key file should be
		cfg.Identities = []string{dir}
		ce, err := connErr(t, cfg)
		if ce.Cause != CauseIdentityUnreadable || ce.Identity != dir {
			t.Fatalf("cause %v identity %q: %v", ce.Cause, ce.Identity, err)
		}
		checkMessage(t, err, host, "chmod 600")
	})
	t.Run("auth failed", func(t *testing.T) {
		t.Parallel()
		file, _, _ := userKey(t, t.TempDir(), "") // not in authorized_keys
		cfg := sshd.config(host)
		cfg.Identities = []string{file}
		ce, err := connErr(t, cfg)
		if ce.Cause != CauseAuthFailed || !contains(ce.Tried, "publickey") || !contains(ce.Offered, "publickey") {
			t.Fatalf("cause %v tried %v offered %v: %v", ce.Cause, ce.Tried, ce.Offered, err)
		}
		if !strings.Contains(err.Error(), "tried: publickey") {
			t.Errorf("message does not say what was tried: %v", err)
		}
		checkMessage(t, err, host, "authorized_keys")
	})
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		cfg := sshd.config(host)
		cfg.Port = closedPort(t)
		ce, err := connErr(t, cfg)
		if ce.Cause != CauseRefused {
			t.Fatalf("cause %v: %v", ce.Cause, err)
		}
		checkMessage(t, err, host, "sshd", fmt.Sprint(cfg.Port))
	})
	t.Run("host key unknown, headless, concurrent", func(t *testing.T) {
		t.Parallel()
		cfg := sshd.config(host)
		cfg.KnownHosts = filepath.Join(t.TempDir(), "known_hosts")
		p := &countingPrompter{}
		cfg.Prompter = p
		tg := NewSSH(cfg)
		defer tg.Close()
		// Twelve commands at once, as a fanned-out step makes, and one
		// after them (cleanup): one question in all.
		errs := make([]error, 13)
		var wg sync.WaitGroup
		for i := 0; i < 12; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = tg.Run(context.Background(), Command{Cmd: "true"})
			}()
		}
		wg.Wait()
		_, errs[12] = tg.Run(context.Background(), Command{Cmd: "true"})
		for i, err := range errs {
			var ce *ConnError
			if !errors.As(err, &ce) || ce.Cause != CauseHostKeyUnknown {
				t.Fatalf("run %d: %v", i, err)
			}
		}
		if n := p.hostKeyCalls(); n != 1 {
			t.Fatalf("asked about the host key %d times, want once", n)
		}
		checkMessage(t, errs[0], host, sshd.Fingerprint(), "--accept-new-host-keys", cfg.KnownHosts)
	})
	t.Run("host key changed", func(t *testing.T) {
		t.Parallel()
		other := testpeer.StartSSHD(t) // another ed25519 key
		cfg := sshd.config(host)
		cfg.KnownHosts = knownHostsWith(t, sshd.Port, other.HostKey)
		ce, err := connErr(t, cfg)
		if ce.Cause != CauseHostKeyChanged {
			t.Fatalf("cause %v: %v", ce.Cause, err)
		}
		checkMessage(t, err, host, "man-in-the-middle", "ssh-keygen -R", cfg.KnownHosts+":2")
	})
	t.Run("host key changed type: RSA offered, ed25519 known", func(t *testing.T) {
		t.Parallel()
		rsaOnly := &realSSHD{testpeer.StartSSHD(t, testpeer.SSHDHostKeys("rsa"))}
		cfg := rsaOnly.config(host)
		cfg.KnownHosts = knownHostsWith(t, rsaOnly.Port, sshd.HostKey)
		ce, err := connErr(t, cfg)
		if ce.Cause != CauseHostKeyTypeChanged {
			t.Fatalf("cause %v: %v", ce.Cause, err)
		}
		for _, w := range []string{"ssh-rsa", "ssh-ed25519", cfg.KnownHosts + ":2", ssh.FingerprintSHA256(rsaOnly.HostKey)} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("message lacks %q: %v", w, err)
			}
		}
		checkMessage(t, err, host, "ssh-ed25519", "ssh-rsa", cfg.KnownHosts+":2")
	})
	t.Run("host key changed type: ed25519 offered, RSA known", func(t *testing.T) {
		t.Parallel()
		k, err := rsa.GenerateKey(cryptorand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		pub, _ := ssh.NewPublicKey(&k.PublicKey)
		cfg := sshd.config(host)
		cfg.KnownHosts = knownHostsWith(t, sshd.Port, pub)
		ce, err := connErr(t, cfg)
		if ce.Cause != CauseHostKeyTypeChanged {
			t.Fatalf("cause %v: %v", ce.Cause, err)
		}
		checkMessage(t, err, host, "ssh-ed25519", "ssh-rsa", cfg.KnownHosts+":2")
	})
}

// TestNetCause classifies the network errors a real dial cannot produce
// here without leaving loopback.
func TestNetCause(t *testing.T) {
	tests := []struct {
		err  error
		want ConnCause
	}{
		{&net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "lab.invalid", IsNotFound: true}}, CauseDNS},
		{&net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.EHOSTUNREACH)}, CauseUnreachable},
		{&net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, CauseRefused},
		{&net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, CauseConnLost},
		{os.ErrDeadlineExceeded, CauseUnreachable},
		{errors.New("something else"), CauseOther},
	}
	for _, tc := range tests {
		if got := netCause(tc.err); got != tc.want {
			t.Errorf("netCause(%v) = %v, want %v", tc.err, got, tc.want)
		}
		ce := &ConnError{Host: "h", Addr: "lab.invalid:22", Cause: tc.want, Err: tc.err}
		if Hint(fmt.Errorf("deploy: %w", ce)) == "" {
			t.Errorf("no hint for %v", tc.want)
		}
	}
	if Hint(errors.New("plain")) != "" {
		t.Error("a hint for an error the runner did not classify")
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// authorize adds pub to the test sshd's authorized_keys.
func authorize(t *testing.T, s *realSSHD, pub ssh.PublicKey) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(s.Dir, "authorized_keys"), os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(ssh.MarshalAuthorizedKey(pub)); err != nil {
		t.Fatal(err)
	}
}

// knownHostsWith writes a known_hosts file whose line 2 holds key for
// 127.0.0.1:port.
func knownHostsWith(t *testing.T, port int, key ssh.PublicKey) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "known_hosts")
	line := knownhosts.Line([]string{knownhosts.Normalize(fmt.Sprintf("127.0.0.1:%d", port))}, key)
	if err := os.WriteFile(file, []byte("# lab\n"+line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// countingPrompter refuses host keys, as HeadlessPrompter does, and counts
// the questions.
type countingPrompter struct {
	HeadlessPrompter
	mu    sync.Mutex
	calls int
}

func (p *countingPrompter) HostKey(ctx context.Context, hp HostKeyPrompt) (HostKeyDecision, error) {
	p.mu.Lock()
	p.calls++
	p.mu.Unlock()
	return p.HeadlessPrompter.HostKey(ctx, hp)
}

func (p *countingPrompter) hostKeyCalls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls
}

// Every cause has a name and a hint, and the message names the host once.
func TestEveryCauseHasAHint(t *testing.T) {
	he := &HostKeyError{Host: "h1", Address: "10.0.0.5:22", KeyType: "ssh-rsa", Fingerprint: "SHA256:x", KnownHosts: "/k",
		Known: []KnownKey{{File: "/k", Line: 3, KeyType: "ssh-ed25519", Fingerprint: "SHA256:y"}}}
	for c := CauseOther; c <= CauseHandshake; c++ {
		if strings.HasPrefix(c.String(), "ConnCause(") {
			t.Errorf("cause %d has no name", int(c))
		}
		var inner error = errors.New("boom")
		if c == CauseHostKeyUnknown || c == CauseHostKeyChanged || c == CauseHostKeyTypeChanged {
			inner = he
		}
		err := fmt.Errorf("step: %w", &ConnError{Host: "h1", Addr: "10.0.0.5:22", User: "lab", Op: "connect", Cause: c, Identity: "/id", Err: inner})
		if Hint(err) == "" {
			t.Errorf("%v: no hint", c)
		}
		if n := strings.Count(err.Error(), "h1"); n != 1 {
			t.Errorf("%v: host named %d times: %v", c, n, err)
		}
	}
	if got := Hint(&SudoError{Host: "h1", User: "lab", Reason: "x"}); !strings.Contains(got, "sudo") {
		t.Errorf("sudo hint %q", got)
	}
}
