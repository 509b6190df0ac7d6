package runner

import (
	"context"
	"fmt"
)

// Prompter is how the runner asks a person something while connecting: trust
// an unknown host key, or give a secret (password, key passphrase, sudo
// password, keyboard-interactive answer). The step engine implements it by
// forwarding each call as a prompt event to the TUI and blocking until the
// answer comes back; headless runs use HeadlessPrompter.
//
// Calls may come from several goroutines at once (several hosts connecting in
// parallel). Implementations must honour ctx: when it is done, return
// ctx.Err(). Secrets returned by Secret are kept in memory only, for as long
// as the Target lives, and are never logged, written or put in an argv.
type Prompter interface {
	// HostKey decides about a host key that is not in known_hosts. It is
	// never called for a changed key: that is always refused.
	HostKey(ctx context.Context, p HostKeyPrompt) (HostKeyDecision, error)
	// Secret asks for a secret. An error (or ctx ending) aborts the
	// authentication that needed it.
	Secret(ctx context.Context, p SecretPrompt) (string, error)
}

// HostKeyPrompt describes an unknown host key, for a person to compare with
// the fingerprint the host's admin reads off (ssh-keygen -lf).
type HostKeyPrompt struct {
	// Host is the inventory name, Address the host:port dialled.
	Host    string
	Address string
	// KeyType is the key's algorithm (ssh-ed25519, ecdsa-sha2-nistp256, ...).
	KeyType string
	// Fingerprint is the SHA256 fingerprint as OpenSSH prints it
	// ("SHA256:...").
	Fingerprint string
	// KnownHosts is the file AcceptAndSave appends the key to.
	KnownHosts string
}

// HostKeyDecision is the answer to a HostKeyPrompt.
type HostKeyDecision int

const (
	// Refuse does not connect.
	Refuse HostKeyDecision = iota
	// AcceptOnce trusts the key for the life of this Target only.
	AcceptOnce
	// AcceptAndSave trusts the key and appends it to known_hosts.
	AcceptAndSave
)

func (d HostKeyDecision) String() string {
	switch d {
	case AcceptOnce:
		return "accept-once"
	case AcceptAndSave:
		return "accept-and-save"
	}
	return "refuse"
}

// SecretKind says what a SecretPrompt asks for.
type SecretKind int

const (
	// SecretPassword is the SSH password of User on Host.
	SecretPassword SecretKind = iota
	// SecretPassphrase unlocks the identity file named in Prompt.
	SecretPassphrase
	// SecretKeyboardInteractive answers one keyboard-interactive question
	// (Prompt holds the server's question; Echo says if the answer may be
	// shown while typed).
	SecretKeyboardInteractive
	// SecretSudo is the sudo password of User on Host.
	SecretSudo
)

func (k SecretKind) String() string {
	switch k {
	case SecretPassphrase:
		return "passphrase"
	case SecretKeyboardInteractive:
		return "keyboard-interactive"
	case SecretSudo:
		return "sudo password"
	}
	return "password"
}

// SecretPrompt asks for one secret.
type SecretPrompt struct {
	Kind SecretKind
	Host string
	User string
	// Prompt is the question to show: the server's keyboard-interactive
	// question, or the identity file's path for a passphrase.
	Prompt string
	// Echo is true when the answer need not be hidden while typed.
	Echo bool
	// Attempt counts from 1; above 1 the previous answer was wrong.
	Attempt int
}

// HeadlessPrompter answers prompts without a person: unknown host keys are
// refused unless AcceptNewHostKeys is set (OpenSSH's accept-new: trusted and
// saved), and secrets cannot be given, so password authentication fails with
// a message saying to use a key or ssh-agent.
type HeadlessPrompter struct {
	AcceptNewHostKeys bool
}

// HostKey implements Prompter.
func (h HeadlessPrompter) HostKey(ctx context.Context, p HostKeyPrompt) (HostKeyDecision, error) {
	if h.AcceptNewHostKeys {
		return AcceptAndSave, nil
	}
	return Refuse, nil
}

// Secret implements Prompter.
func (h HeadlessPrompter) Secret(ctx context.Context, p SecretPrompt) (string, error) {
	// The caller's error names the host; this says what is missing.
	fix := "use an SSH key (inventory identity or ssh-agent)"
	switch p.Kind {
	case SecretPassphrase:
		fix = "load the key into ssh-agent (ssh-add)"
	case SecretSudo:
		fix = "allow the user passwordless sudo on the host"
	}
	return "", fmt.Errorf("a %s is needed but nobody can be asked in a headless run: %s", p.Kind, fix)
}
