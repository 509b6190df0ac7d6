//go:build unix

package runner

import (
	"context"
	"crypto/ed25519"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// userKey makes a key pair, writes the private half to dir (encrypted with
// passphrase when non-empty) and returns the file and the public key.
func userKey(t *testing.T, dir, passphrase string) (string, ssh.PublicKey, ed25519.PrivateKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	var blk *pem.Block
	if passphrase != "" {
		blk, err = ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte(passphrase))
	} else {
		blk, err = ssh.MarshalPrivateKey(priv, "")
	}
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "id_test")
	if err := os.WriteFile(file, pem.EncodeToMemory(blk), 0o600); err != nil {
		t.Fatal(err)
	}
	sp, _ := ssh.NewPublicKey(pub)
	return file, sp, priv
}

func TestSSHAuthMethods(t *testing.T) {
	ctx := context.Background()
	t.Run("identity file", func(t *testing.T) {
		file, pub, _ := userKey(t, t.TempDir(), "")
		f := newFakeSSH(t, "", func(f *fakeSSH) { f.userKey = pub })
		p := &scriptedPrompter{}
		cfg := fakeConfig(f, knownHostsFor(t, f.port(), f.hostKey.PublicKey()), p)
		cfg.Identities = []string{filepath.Join(t.TempDir(), "missing"), file}
		tg := NewSSH(cfg)
		defer tg.Close()
		if err := tg.Connect(ctx); err != nil {
			t.Fatal(err)
		}
		if len(p.asked) != 0 {
			t.Fatalf("asked %v", p.asked)
		}
	})
	t.Run("encrypted identity asks for the passphrase", func(t *testing.T) {
		file, pub, _ := userKey(t, t.TempDir(), "open sesame")
		f := newFakeSSH(t, "", func(f *fakeSSH) { f.userKey = pub })
		p := &scriptedPrompter{secrets: map[SecretKind]string{SecretPassphrase: "open sesame"}}
		cfg := fakeConfig(f, knownHostsFor(t, f.port(), f.hostKey.PublicKey()), p)
		cfg.Identities = []string{file}
		tg := NewSSH(cfg)
		defer tg.Close()
		if err := tg.Connect(ctx); err != nil {
			t.Fatal(err)
		}
		if len(p.asked) != 1 || p.asked[0].Kind != SecretPassphrase || p.asked[0].Prompt != file {
			t.Fatalf("asked %+v", p.asked)
		}
		// Reconnect reuses the passphrase from memory.
		f.drop()
		if _, err := tg.Run(ctx, Command{Cmd: "true"}); err != nil {
			t.Fatal(err)
		}
		if len(p.asked) != 1 {
			t.Fatalf("asked again: %+v", p.asked)
		}
	})
	t.Run("a slow answer and slow decryption do not count against the connect timeout", func(t *testing.T) {
		file, pub, _ := userKey(t, t.TempDir(), "open sesame")
		f := newFakeSSH(t, "", func(f *fakeSSH) { f.userKey = pub })
		p := &slowPrompter{scriptedPrompter{secrets: map[SecretKind]string{SecretPassphrase: "open sesame"}}, 400 * time.Millisecond}
		cfg := fakeConfig(f, knownHostsFor(t, f.port(), f.hostKey.PublicKey()), p)
		cfg.Identities = []string{file}
		// Shorter than the bcrypt KDF of an encrypted OpenSSH key.
		cfg.ConnectTimeout = 200 * time.Millisecond
		tg := NewSSH(cfg)
		defer tg.Close()
		if err := tg.Connect(ctx); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("encrypted identity the host does not know is not unlocked", func(t *testing.T) {
		f := newFakeSSH(t, "pw")
		file, _, _ := userKey(t, t.TempDir(), "open sesame")
		p := &scriptedPrompter{secrets: map[SecretKind]string{SecretPassword: "pw"}}
		cfg := fakeConfig(f, knownHostsFor(t, f.port(), f.hostKey.PublicKey()), p)
		cfg.Identities = []string{file}
		tg := NewSSH(cfg)
		defer tg.Close()
		if err := tg.Connect(ctx); err != nil {
			t.Fatal(err)
		}
		if p.secretCount(SecretPassphrase) != 0 || p.secretCount(SecretPassword) != 1 {
			t.Fatalf("asked %+v", p.asked)
		}
	})
	t.Run("keyboard-interactive", func(t *testing.T) {
		f := newFakeSSH(t, "", func(f *fakeSSH) { f.kiAnswer = "424242" })
		p := &scriptedPrompter{secrets: map[SecretKind]string{SecretKeyboardInteractive: "424242"}}
		tg := NewSSH(fakeConfig(f, knownHostsFor(t, f.port(), f.hostKey.PublicKey()), p))
		defer tg.Close()
		if err := tg.Connect(ctx); err != nil {
			t.Fatal(err)
		}
		ki := p.asked[len(p.asked)-1]
		if ki.Kind != SecretKeyboardInteractive || ki.Prompt != "Verification code: " || ki.Echo {
			t.Fatalf("asked %+v", p.asked)
		}
	})
	t.Run("ssh-agent", func(t *testing.T) {
		_, pub, priv := userKey(t, t.TempDir(), "")
		f := newFakeSSH(t, "", func(f *fakeSSH) { f.userKey = pub })
		keyring := agent.NewKeyring()
		if err := keyring.Add(agent.AddedKey{PrivateKey: priv}); err != nil {
			t.Fatal(err)
		}
		sock := filepath.Join(t.TempDir(), "agent.sock")
		ln, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() { agent.ServeAgent(keyring, c); c.Close() }()
			}
		}()
		t.Setenv("SSH_AUTH_SOCK", sock)
		p := &scriptedPrompter{}
		cfg := fakeConfig(f, knownHostsFor(t, f.port(), f.hostKey.PublicKey()), p)
		cfg.NoAgent = false
		tg := NewSSH(cfg)
		defer tg.Close()
		if err := tg.Connect(ctx); err != nil {
			t.Fatal(err)
		}
		if len(p.asked) != 0 {
			t.Fatalf("asked %v", p.asked)
		}
	})
	t.Run("headless cannot give a password", func(t *testing.T) {
		f := newFakeSSH(t, "pw")
		tg := NewSSH(fakeConfig(f, knownHostsFor(t, f.port(), f.hostKey.PublicKey()), nil))
		defer tg.Close()
		err := tg.Connect(ctx)
		var ce *ConnError
		if !errors.As(err, &ce) || ce.Cause != CauseAuthFailed || !strings.Contains(err.Error(), "use an SSH key") {
			t.Fatalf("err = %v", err)
		}
	})
}

// A command whose connection dropped keeps running on a real host; the
// runner kills its process group after the next successful dial.
func TestSSHOrphanKilledAfterReconnect(t *testing.T) {
	t.Parallel()
	f := newFakeSSH(t, "pw")
	p := &scriptedPrompter{secrets: map[SecretKind]string{SecretPassword: "pw"}}
	tg := NewSSH(fakeConfig(f, knownHostsFor(t, f.port(), f.hostKey.PublicKey()), p))
	defer tg.Close()
	ctx := context.Background()
	var once sync.Once
	_, err := tg.Run(ctx, Command{Cmd: "echo started; sleep 9717", Output: func(l Line) {
		if l.Text == "started" {
			// The group id is the wrapper's first line on stderr, a
			// channel of its own: drop only once it has had time to
			// arrive (a drop in the very first moments, before any
			// stderr byte crossed, leaves a group nobody can name; that
			// edge is not what this test is about).
			once.Do(func() {
				go func() {
					time.Sleep(500 * time.Millisecond)
					f.dropConns(false)
				}()
			})
		}
	}})
	var ce *ConnError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v", err)
	}
	if has, _ := psHas(t, "sleep 9717"); !has {
		t.Fatal("test setup: the command should still run after the drop")
	}
	if _, err := tg.Run(ctx, Command{Cmd: "true"}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "sleep 9717", 5*time.Second)
}

// slowPrompter answers like scriptedPrompter, after a delay (a person).
type slowPrompter struct {
	scriptedPrompter
	delay time.Duration
}

func (p *slowPrompter) Secret(ctx context.Context, sp SecretPrompt) (string, error) {
	time.Sleep(p.delay)
	return p.scriptedPrompter.Secret(ctx, sp)
}
