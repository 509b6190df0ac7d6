package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"

	"github.com/melbahja/goph"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// authState holds what one SSH Target learnt while authenticating, in memory
// only: a password that worked is reused when the connection is re-made, so a
// dropped connection does not ask the person again.
type authState struct {
	mu       sync.Mutex
	password string
	// passphrases unlock identity files, by path.
	passphrases map[string]string
}

// authMethods builds the methods to try, in OpenSSH's order: ssh-agent,
// identity files, then keyboard-interactive and password through the
// Prompter. closer releases the agent connection after the handshake.
func (t *SSHTarget) authMethods(ctx context.Context, pr Prompter) (auth goph.Auth, closer func(), err error) {
	closer = func() {}
	if sock := os.Getenv("SSH_AUTH_SOCK"); sock != "" && !t.cfg.NoAgent {
		var d net.Dialer
		if c, err := d.DialContext(ctx, "unix", sock); err == nil {
			closer = func() { c.Close() }
			auth = append(auth, ssh.PublicKeysCallback(agent.NewClient(c).Signers))
		}
	}
	var signers []ssh.Signer
	for _, path := range t.cfg.Identities {
		s, err := t.loadIdentity(ctx, pr, path)
		if err != nil {
			closer()
			return nil, func() {}, err
		}
		if s != nil {
			signers = append(signers, s)
		}
	}
	if len(signers) > 0 {
		auth = append(auth, ssh.PublicKeys(signers...))
	}
	// keyboard-interactive before password, as OpenSSH orders them: servers
	// using PAM ask for the password that way.
	kiAttempt := 0
	auth = append(auth, ssh.RetryableAuthMethod(ssh.KeyboardInteractive(func(name, instruction string, questions []string, echos []bool) ([]string, error) {
		kiAttempt++
		answers := make([]string, len(questions))
		for i, q := range questions {
			a, err := pr.Secret(ctx, SecretPrompt{Kind: SecretKeyboardInteractive, Host: t.cfg.Name, User: t.cfg.User, Prompt: q, Echo: echos[i], Attempt: kiAttempt})
			if err != nil {
				return nil, &promptError{err}
			}
			answers[i] = a
		}
		return answers, nil
	}), 3))
	attempt := 0
	auth = append(auth, ssh.RetryableAuthMethod(ssh.PasswordCallback(func() (string, error) {
		attempt++
		t.auth.mu.Lock()
		pw := t.auth.password
		t.auth.mu.Unlock()
		if pw != "" && attempt == 1 {
			return pw, nil
		}
		pw, err := pr.Secret(ctx, SecretPrompt{Kind: SecretPassword, Host: t.cfg.Name, User: t.cfg.User, Attempt: attempt})
		if err != nil {
			return "", &promptError{err}
		}
		t.auth.mu.Lock()
		t.auth.password = pw
		t.auth.mu.Unlock()
		return pw, nil
	}), 3))
	return auth, closer, nil
}

// loadIdentity reads a private key file. A missing default file is skipped
// (nil, nil); an encrypted key becomes a signer that asks for the passphrase
// only when the server has accepted its public key, so that a person is not
// asked to unlock keys the host does not know.
func (t *SSHTarget) loadIdentity(ctx context.Context, pr Prompter, path string) (ssh.Signer, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("identity file %s: %w", path, err)
	}
	s, err := ssh.ParsePrivateKey(pem)
	if err == nil {
		return s, nil
	}
	var pm *ssh.PassphraseMissingError
	if !errors.As(err, &pm) {
		return nil, fmt.Errorf("identity file %s: %w (is it a private key?)", path, err)
	}
	if pm.PublicKey == nil {
		// Old PEM formats do not carry the public key: ask now.
		return t.unlock(ctx, pr, path, pem)
	}
	return &lazySigner{pub: pm.PublicKey, unlock: func() (ssh.Signer, error) {
		// Decrypting is slow on purpose (bcrypt KDF): like the prompt, it
		// must not run into the handshake's network deadline (which
		// x/crypto would then report as the last method's failure).
		if dp, ok := pr.(*deadlinePrompter); ok {
			defer dp.pause()()
		}
		return t.unlock(ctx, pr, path, pem)
	}}, nil
}

// unlock asks for an identity's passphrase (up to three times).
func (t *SSHTarget) unlock(ctx context.Context, pr Prompter, path string, pem []byte) (ssh.Signer, error) {
	t.auth.mu.Lock()
	known, ok := t.auth.passphrases[path]
	t.auth.mu.Unlock()
	if ok {
		if s, err := ssh.ParsePrivateKeyWithPassphrase(pem, []byte(known)); err == nil {
			return s, nil
		}
	}
	for attempt := 1; attempt <= 3; attempt++ {
		pass, err := pr.Secret(ctx, SecretPrompt{Kind: SecretPassphrase, Host: t.cfg.Name, User: t.cfg.User, Prompt: path, Attempt: attempt})
		if err != nil {
			return nil, &promptError{err}
		}
		s, err := ssh.ParsePrivateKeyWithPassphrase(pem, []byte(pass))
		if err == nil {
			t.auth.mu.Lock()
			if t.auth.passphrases == nil {
				t.auth.passphrases = map[string]string{}
			}
			t.auth.passphrases[path] = pass
			t.auth.mu.Unlock()
			return s, nil
		}
		// Any parse failure after a passphrase was given counts as a wrong
		// passphrase: ask again.
	}
	return nil, fmt.Errorf("identity file %s: wrong passphrase", path)
}

// promptError marks a failure to get a secret, so that the handshake error
// it causes is reported as an authentication failure.
type promptError struct{ err error }

func (e *promptError) Error() string { return e.err.Error() }
func (e *promptError) Unwrap() error { return e.err }

// lazySigner is an encrypted identity that is decrypted on first use.
type lazySigner struct {
	pub    ssh.PublicKey
	unlock func() (ssh.Signer, error)

	mu sync.Mutex
	s  ssh.Signer
}

func (l *lazySigner) PublicKey() ssh.PublicKey { return l.pub }

func (l *lazySigner) Sign(rand io.Reader, data []byte) (*ssh.Signature, error) {
	s, err := l.signer()
	if err != nil {
		return nil, err
	}
	return s.Sign(rand, data)
}

// SignWithAlgorithm lets RSA keys sign with rsa-sha2-256/512 once unlocked.
func (l *lazySigner) SignWithAlgorithm(rand io.Reader, data []byte, algorithm string) (*ssh.Signature, error) {
	s, err := l.signer()
	if err != nil {
		return nil, err
	}
	if as, ok := s.(ssh.AlgorithmSigner); ok {
		return as.SignWithAlgorithm(rand, data, algorithm)
	}
	return s.Sign(rand, data)
}

func (l *lazySigner) signer() (ssh.Signer, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.s != nil {
		return l.s, nil
	}
	s, err := l.unlock()
	if err != nil {
		return nil, err
	}
	l.s = s
	return s, nil
}
