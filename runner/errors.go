package runner

import (
	"errors"
	"fmt"
)

// ConnError reports that the connection to a host was lost or could not be
// made. A command that was running when it was lost may or may not have
// finished on the host. The next operation on the Target dials again.
type ConnError struct {
	Host string
	Op   string
	Err  error
}

func (e *ConnError) Error() string {
	return fmt.Sprintf("%s: connection to %s lost or refused: %v (check the host is up and reachable; the next command reconnects)", e.Op, e.Host, e.Err)
}

func (e *ConnError) Unwrap() error { return e.Err }

// AuthError reports that no authentication method was accepted by a host.
type AuthError struct {
	Host string
	User string
	Err  error
}

func (e *AuthError) Error() string {
	return fmt.Sprintf("ssh %s@%s: authentication failed: %v (check the user, the identity file in the inventory, ssh-agent, or the password)", e.User, e.Host, e.Err)
}

func (e *AuthError) Unwrap() error { return e.Err }

// SudoError reports that a command needing root could not get it.
type SudoError struct {
	Host   string
	User   string
	Reason string
}

func (e *SudoError) Error() string {
	return fmt.Sprintf("sudo on %s as %s: %s", e.Host, e.User, e.Reason)
}

// ErrHostKeyRefused is returned (wrapped in a HostKeyError) when a host's key
// is unknown and the Prompter, or the headless default, refused it.
var ErrHostKeyRefused = errors.New("host key not trusted")

// HostKeyError reports a host key that was not accepted: unknown and refused,
// or changed (Known lists the known_hosts entries it contradicts). A changed
// key is always refused: it is what a man-in-the-middle looks like.
type HostKeyError struct {
	Host        string
	KeyType     string
	Fingerprint string
	// Known holds the known_hosts lines the offered key contradicts; empty
	// when the host was simply unknown.
	Known []KnownKey
	// KnownHosts is the file an accepted key would have been saved to.
	KnownHosts string
	Err        error
}

// KnownKey is one known_hosts entry for a host.
type KnownKey struct {
	File        string
	Line        int
	KeyType     string
	Fingerprint string
}

func (e *HostKeyError) Error() string {
	if len(e.Known) > 0 {
		k := e.Known[0]
		return fmt.Sprintf("host key for %s CHANGED: offered %s %s, but %s:%d has %s %s; this may be a man-in-the-middle attack; if the host was really reinstalled, remove that line (ssh-keygen -R) and connect again",
			e.Host, e.KeyType, e.Fingerprint, k.File, k.Line, k.KeyType, k.Fingerprint)
	}
	return fmt.Sprintf("host key for %s not trusted: %s %s is not in %s (accept it when asked, run with --accept-new-host-keys, or add it with ssh-keyscan after checking the fingerprint): %v",
		e.Host, e.KeyType, e.Fingerprint, e.KnownHosts, e.Err)
}

func (e *HostKeyError) Unwrap() error { return e.Err }
