package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
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

// authTrace records what authentication met on one dial, so that a failure
// can be told apart: a missing or locked identity file, or credentials the
// server did not take (and which methods it would have taken).
type authTrace struct {
	mu sync.Mutex
	// started: the key exchange is done and authentication began.
	started bool
	offered []string
	tried   []string
	// missing are identity files named by the inventory or ~/.ssh/config
	// that do not exist; defaultsMissing the default ones (~/.ssh/id_*).
	missing         []string
	defaultsMissing []string
	unreadable      string
	unreadableErr   error
	// encrypted is an identity whose passphrase was not given or wrong.
	encrypted    string
	encryptedErr error
	keys         int
	agent        bool
}

// note is the ClientConfig.AuthCallback: it sees which methods the server
// allows and which were tried, and leaves the choice to config.Auth.
func (tr *authTrace) note(ctx *ssh.ClientAuthContext) (ssh.AuthMethod, error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.started = true
	tr.offered = append(tr.offered[:0], ctx.AllowedMethods...)
	tr.tried = append(tr.tried[:0], ctx.TriedMethods...)
	return nil, nil
}

func (tr *authTrace) authStarted() bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.started
}

// classify turns a failed authentication into a ConnError naming its
// likeliest cause.
func (tr *authTrace) classify(e *ConnError) *ConnError {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, m := range tr.tried {
		if m != "none" {
			e.Tried = append(e.Tried, m)
		}
	}
	for _, m := range tr.offered {
		if m != "none" {
			e.Offered = append(e.Offered, m)
		}
	}
	e.Cause = CauseAuthFailed
	switch {
	case tr.encrypted != "":
		e.Cause, e.Identity = CauseIdentityEncrypted, tr.encrypted
		if tr.encryptedErr != nil {
			e.Err = tr.encryptedErr
		}
	case tr.unreadable != "":
		e.Cause, e.Identity, e.Err = CauseIdentityUnreadable, tr.unreadable, tr.unreadableErr
	case len(tr.missing) > 0:
		e.Cause, e.Identity = CauseIdentityMissing, tr.missing[0]
		e.Err = fmt.Errorf("%s does not exist", tr.missing[0])
	case tr.keys == 0 && !tr.agent && len(tr.defaultsMissing) > 0:
		e.Cause = CauseIdentityMissing
		e.Err = fmt.Errorf("no identity file: none of %s exists, and no ssh-agent", strings.Join(tr.defaultsMissing, ", "))
	}
	return e
}

// authMethods builds the methods to try, in OpenSSH's order: ssh-agent,
// identity files, then keyboard-interactive and password through the
// Prompter. closer releases the agent connection after the handshake.
// Identity files that are missing, unreadable or locked do not stop the
// attempt (another method may work, as with OpenSSH); tr records them.
func (t *SSHTarget) authMethods(ctx context.Context, pr Prompter, tr *authTrace) (auth goph.Auth, closer func()) {
	closer = func() {}
	var signers []ssh.Signer
	for i, path := range append(append([]string(nil), t.cfg.Identities...), t.cfg.DefaultIdentities...) {
		if s := t.loadIdentity(ctx, pr, path, i < len(t.cfg.Identities), tr); s != nil {
			signers = append(signers, s)
		}
	}
	signers = append(t.certSigners(signers), signers...)
	tr.keys = len(signers)
	sock := os.Getenv("SSH_AUTH_SOCK")
	if t.cfg.IdentityAgent != "" {
		sock = t.cfg.IdentityAgent
	}
	if sock != "" && !t.cfg.NoAgent {
		var d net.Dialer
		if c, err := d.DialContext(ctx, "unix", sock); err == nil {
			closer = func() { c.Close() }
			tr.agent = true
			agentSigners := agent.NewClient(c).Signers
			if t.cfg.IdentitiesOnly {
				// OpenSSH's IdentitiesOnly: of the agent's keys, only
				// those of the configured identity files.
				agentSigners = onlyKeysOf(agentSigners, signers)
			}
			auth = append(auth, ssh.PublicKeysCallback(agentSigners))
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
	return auth, closer
}

// onlyKeysOf filters an agent's signers to the keys of identity files.
func onlyKeysOf(agentSigners func() ([]ssh.Signer, error), ids []ssh.Signer) func() ([]ssh.Signer, error) {
	want := map[string]bool{}
	for _, s := range ids {
		want[string(s.PublicKey().Marshal())] = true
		if c, ok := s.PublicKey().(*ssh.Certificate); ok {
			want[string(c.Key.Marshal())] = true
		}
	}
	return func() ([]ssh.Signer, error) {
		all, err := agentSigners()
		if err != nil {
			return nil, err
		}
		var out []ssh.Signer
		for _, s := range all {
			pub := s.PublicKey()
			if c, ok := pub.(*ssh.Certificate); ok {
				pub = c.Key
			}
			if want[string(pub.Marshal())] {
				out = append(out, s)
			}
		}
		return out, nil
	}
}

// certSigners pairs user certificates (CertificateFile, and KEY-cert.pub
// next to each identity file, as OpenSSH does) with the identity whose
// public key they certify; a certificate with no such identity is
// skipped. They are offered before the plain keys, as OpenSSH orders
// them.
func (t *SSHTarget) certSigners(signers []ssh.Signer) []ssh.Signer {
	files := append([]string(nil), t.cfg.Certificates...)
	for _, id := range append(append([]string(nil), t.cfg.Identities...), t.cfg.DefaultIdentities...) {
		files = append(files, id+"-cert.pub")
	}
	var out []ssh.Signer
	seen := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		pub, _, _, _, err := ssh.ParseAuthorizedKey(b)
		if err != nil {
			continue
		}
		cert, ok := pub.(*ssh.Certificate)
		if !ok || seen[string(cert.Marshal())] {
			continue
		}
		for _, s := range signers {
			if cs, err := ssh.NewCertSigner(cert, s); err == nil {
				seen[string(cert.Marshal())] = true
				out = append(out, cs)
				break
			}
		}
	}
	return out
}

// loadIdentity reads a private key file. A missing file is skipped (nil),
// and so is an unreadable one, both noted in tr; an encrypted key becomes a
// signer that asks for the passphrase only when the server has accepted
// its public key, so that a person is not asked to unlock keys the host
// does not know.
func (t *SSHTarget) loadIdentity(ctx context.Context, pr Prompter, path string, explicit bool, tr *authTrace) ssh.Signer {
	pem, err := os.ReadFile(path)
	if err != nil {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		switch {
		case errors.Is(err, os.ErrNotExist) && explicit:
			tr.missing = append(tr.missing, path)
		case errors.Is(err, os.ErrNotExist):
			tr.defaultsMissing = append(tr.defaultsMissing, path)
		case tr.unreadable == "":
			tr.unreadable, tr.unreadableErr = path, err
		}
		return nil
	}
	s, err := goph.GetSignerForRawKey(pem, "")
	if err == nil {
		return s
	}
	var pm *ssh.PassphraseMissingError
	if !errors.As(err, &pm) {
		tr.mu.Lock()
		if tr.unreadable == "" {
			tr.unreadable, tr.unreadableErr = path, fmt.Errorf("%s is not a private key: %w", path, err)
		}
		tr.mu.Unlock()
		return nil
	}
	unlock := func() (ssh.Signer, error) {
		s, err := t.unlock(ctx, pr, path, pem)
		if err != nil {
			tr.mu.Lock()
			if tr.encrypted == "" {
				tr.encrypted, tr.encryptedErr = path, err
			}
			tr.mu.Unlock()
		}
		return s, err
	}
	if pm.PublicKey == nil {
		// Old PEM formats do not carry the public key: ask now.
		s, err := unlock()
		if err != nil {
			return nil
		}
		return s
	}
	return &lazySigner{pub: pm.PublicKey, unlock: func() (ssh.Signer, error) {
		// Decrypting is slow on purpose (bcrypt KDF): like the prompt, it
		// must not run into the handshake's network deadline (which
		// x/crypto would then report as the last method's failure).
		if dp, ok := pr.(*deadlinePrompter); ok {
			defer dp.pause()()
		}
		return unlock()
	}}
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
		s, err := goph.GetSignerForRawKey(pem, pass)
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
	return nil, errors.New("the passphrase was wrong three times")
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
