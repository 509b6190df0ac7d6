package runner

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"golang.org/x/crypto/ssh/knownhosts"
)

// ConnCause classifies why a connection to a host could not be made or was
// lost, so that the person is told what to do about that cause (Hint)
// instead of a generic "check the host".
type ConnCause int

const (
	// CauseOther is a failure none of the other causes describe.
	CauseOther ConnCause = iota
	// CauseRefused: nothing listens on the port (TCP RST).
	CauseRefused
	// CauseUnreachable: no answer in time, or no route to the host.
	CauseUnreachable
	// CauseDNS: the host name does not resolve.
	CauseDNS
	// CauseAuthFailed: the server accepted none of the credentials
	// tried (ConnError.Tried, .Offered say which).
	CauseAuthFailed
	// CauseIdentityMissing: an identity file named in the inventory or
	// ~/.ssh/config does not exist (or no identity file exists at all).
	CauseIdentityMissing
	// CauseIdentityUnreadable: an identity file could not be read
	// (permissions, a directory, not a private key).
	CauseIdentityUnreadable
	// CauseIdentityEncrypted: an identity file needs a passphrase that
	// was not given, or the one given was wrong.
	CauseIdentityEncrypted
	// CauseHostKeyUnknown: the host key is not in known_hosts and was
	// not accepted.
	CauseHostKeyUnknown
	// CauseHostKeyChanged: known_hosts holds another key of the same type.
	CauseHostKeyChanged
	// CauseHostKeyTypeChanged: known_hosts holds keys of other types only,
	// and the server offers none of them.
	CauseHostKeyTypeChanged
	// CauseConnLost: an established connection dropped.
	CauseConnLost
	// CauseSessionRefused: the server kept refusing to open a session
	// while none of ours was open (not a MaxSessions queue).
	CauseSessionRefused
	// CauseHandshake: the SSH handshake failed for another reason (no
	// common algorithm, not an SSH server).
	CauseHandshake
)

var causeNames = map[ConnCause]string{
	CauseOther:              "connection failed",
	CauseRefused:            "connection refused",
	CauseUnreachable:        "host unreachable",
	CauseDNS:                "host name does not resolve",
	CauseAuthFailed:         "authentication failed",
	CauseIdentityMissing:    "identity file missing",
	CauseIdentityUnreadable: "identity file unreadable",
	CauseIdentityEncrypted:  "identity file needs its passphrase",
	CauseHostKeyUnknown:     "host key unknown",
	CauseHostKeyChanged:     "host key CHANGED",
	CauseHostKeyTypeChanged: "host key type CHANGED",
	CauseConnLost:           "connection lost",
	CauseSessionRefused:     "session refused",
	CauseHandshake:          "SSH handshake failed",
}

func (c ConnCause) String() string {
	if s, ok := causeNames[c]; ok {
		return s
	}
	return fmt.Sprintf("ConnCause(%d)", int(c))
}

// ConnError reports that the connection to a host could not be made, or
// was lost, with its cause classified. A command that was running when the
// connection was lost may or may not have finished on the host. The next
// operation on the Target dials again.
type ConnError struct {
	// Host is the inventory name, Addr the host:port dialled.
	Host string
	Addr string
	// User is the remote user (for authentication causes).
	User string
	// Op is what was being done: "connect", "ssh handshake", "run", ...
	Op    string
	Cause ConnCause
	// Tried lists the authentication methods tried and Offered those the
	// server accepts (CauseAuthFailed and the identity causes).
	Tried   []string
	Offered []string
	// Identity is the identity file concerned (identity causes).
	Identity string
	// Err is the underlying error; a *HostKeyError for host key causes.
	Err error
}

func (e *ConnError) Error() string {
	var b strings.Builder
	b.WriteString(e.Host)
	if e.Addr != "" && !strings.HasPrefix(e.Addr, e.Host+":") && e.Addr != e.Host {
		fmt.Fprintf(&b, " (%s)", e.Addr)
	}
	b.WriteString(": ")
	if e.Op != "" {
		b.WriteString(e.Op + ": ")
	}
	var he *HostKeyError
	if !errors.As(e.Err, &he) {
		// A HostKeyError says which of the host key causes it is.
		b.WriteString(e.Cause.String())
	}
	switch e.Cause {
	case CauseAuthFailed, CauseIdentityMissing, CauseIdentityUnreadable, CauseIdentityEncrypted:
		if e.User != "" {
			fmt.Fprintf(&b, " for user %s", e.User)
		}
		if e.Identity != "" {
			fmt.Fprintf(&b, " (%s)", e.Identity)
		}
		tried := "none"
		if len(e.Tried) > 0 {
			tried = strings.Join(e.Tried, ", ")
		}
		fmt.Fprintf(&b, "; tried: %s", tried)
		if len(e.Offered) > 0 {
			fmt.Fprintf(&b, "; the server accepts: %s", strings.Join(e.Offered, ", "))
		}
	}
	if e.Err != nil {
		if he == nil {
			b.WriteString(": ")
		}
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *ConnError) Unwrap() error { return e.Err }

// port is the port part of Addr ("22" when Addr has none).
func (e *ConnError) port() string {
	if _, p, err := net.SplitHostPort(e.Addr); err == nil {
		return p
	}
	return "22"
}

func (e *ConnError) addrHost() string {
	if h, _, err := net.SplitHostPort(e.Addr); err == nil {
		return h
	}
	return e.Addr
}

// hint is what to do next about this cause.
func (e *ConnError) hint() string {
	host, port := e.addrHost(), e.port()
	userAt := host
	if e.User != "" {
		userAt = e.User + "@" + host
	}
	sshCmd := "ssh -p " + port + " " + userAt
	switch e.Cause {
	case CauseRefused:
		return fmt.Sprintf("Nothing accepts connections on %s port %s: check that sshd runs on %s (systemctl status ssh) and that the inventory's address and port are right.", host, port, e.Host)
	case CauseUnreachable:
		return fmt.Sprintf("%s did not answer: check that the host is up and reachable from this machine (network, VPN, firewall on port %s); `%s` should connect.", host, port, sshCmd)
	case CauseDNS:
		return fmt.Sprintf("%q does not resolve: fix the host's address in the inventory (or HostName in ~/.ssh/config), or add it to DNS or /etc/hosts.", host)
	case CauseAuthFailed:
		h := fmt.Sprintf("%s did not accept the credentials for %s: give the host an `identity:` in the inventory whose public key is in ~/.ssh/authorized_keys of %s on the host (ssh-copy-id), load that key into ssh-agent, or check the user name.", e.Host, e.User, e.User)
		for _, m := range e.Offered {
			if m == "password" || m == "keyboard-interactive" {
				h += " The host also takes a password: run in the TUI to type it."
				break
			}
		}
		return h
	case CauseIdentityMissing:
		id := e.Identity
		if id == "" {
			id = "~/.ssh/id_ed25519"
		}
		return fmt.Sprintf("Fix the `identity:` path in the inventory (or IdentityFile in ~/.ssh/config), or create the key (ssh-keygen -t ed25519 -f %s) and install it on the host (ssh-copy-id -i %s -p %s %s).", id, id, port, userAt)
	case CauseIdentityUnreadable:
		return fmt.Sprintf("Make %s a private key file readable by the user running dpulab (owned by you, chmod 600).", e.Identity)
	case CauseIdentityEncrypted:
		return fmt.Sprintf("%s is protected by a passphrase: load it into ssh-agent (ssh-add %s) so dpulab can use it, or run in the TUI to type the passphrase.", e.Identity, e.Identity)
	case CauseHostKeyUnknown, CauseHostKeyChanged, CauseHostKeyTypeChanged:
		var he *HostKeyError
		if errors.As(e.Err, &he) {
			return he.hint(host, port)
		}
	case CauseConnLost:
		return fmt.Sprintf("The connection to %s dropped (host rebooted or overloaded, network, sshd restarted); a command that was running may or may not have finished. Check the host, then run again: the next command reconnects.", e.Host)
	case CauseSessionRefused:
		return fmt.Sprintf("sshd on %s refuses to open sessions for %s: check MaxSessions and any Match/ForceCommand rules in its /etc/ssh/sshd_config, and its log (journalctl -u ssh).", e.Host, e.User)
	case CauseHandshake:
		return fmt.Sprintf("Check that %s port %s is an SSH server and that it supports current algorithms (`ssh -v -p %s %s` shows the negotiation).", host, port, port, userAt)
	}
	return fmt.Sprintf("Check that %s is up and reachable (`%s`); the next command reconnects.", e.Host, sshCmd)
}

// Hint returns what the person should do next about err, when its chain
// holds an error the runner classified (a *ConnError, *SudoError or
// *HostKeyError), and "" otherwise. The step engine shows it instead of a
// step's own hint, which is about the step, not the connection.
func Hint(err error) string {
	var ce *ConnError
	if errors.As(err, &ce) {
		return ce.hint()
	}
	var he *HostKeyError
	if errors.As(err, &he) {
		host, port, perr := net.SplitHostPort(he.Address)
		if perr != nil {
			host, port = he.Host, "22"
		}
		return he.hint(host, port)
	}
	var se *SudoError
	if errors.As(err, &se) {
		return se.hint()
	}
	return ""
}

// SudoError reports that a command needing root could not get it.
type SudoError struct {
	Host   string
	User   string
	Reason string
	// Fix is what to do about it (Hint).
	Fix string
}

func (e *SudoError) Error() string {
	return fmt.Sprintf("sudo on %s as %s: %s", e.Host, e.User, e.Reason)
}

func (e *SudoError) hint() string {
	if e.Fix != "" {
		return e.Fix
	}
	return fmt.Sprintf("Allow %s to run sudo on %s (passwordless for headless runs), or connect as root.", e.User, e.Host)
}

// ErrHostKeyRefused is returned (wrapped in a HostKeyError) when a host's key
// is unknown and the Prompter, or the headless default, refused it.
var ErrHostKeyRefused = errors.New("host key not trusted")

// HostKeyError reports a host key that was not accepted: unknown and refused,
// or changed (Known lists the known_hosts entries it contradicts). A changed
// key is always refused: it is what a man-in-the-middle looks like. It
// reaches callers inside a *ConnError whose Cause tells which.
type HostKeyError struct {
	Host string
	// Address is the host:port dialled.
	Address     string
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

// Cause says whether the key was unknown, changed, or changed type.
func (e *HostKeyError) Cause() ConnCause {
	if len(e.Known) == 0 {
		return CauseHostKeyUnknown
	}
	for _, k := range e.Known {
		if k.KeyType == e.KeyType {
			return CauseHostKeyChanged
		}
	}
	return CauseHostKeyTypeChanged
}

func (e *HostKeyError) Error() string {
	if len(e.Known) > 0 {
		k := e.Known[0]
		what := "CHANGED"
		if e.Cause() == CauseHostKeyTypeChanged {
			what = "changed TYPE"
		}
		return fmt.Sprintf("host key %s: the server offers %s %s, but %s:%d has %s %s for it",
			what, e.KeyType, e.Fingerprint, k.File, k.Line, k.KeyType, k.Fingerprint)
	}
	var re *knownhosts.RevokedError
	if errors.As(e.Err, &re) {
		return fmt.Sprintf("host key %s %s is marked @revoked in %s:%d: refused", e.KeyType, e.Fingerprint, re.Revoked.Filename, re.Revoked.Line)
	}
	if e.Err != nil && !errors.Is(e.Err, ErrHostKeyRefused) {
		return fmt.Sprintf("host key %s %s is not in %s and could not be accepted: %v", e.KeyType, e.Fingerprint, e.KnownHosts, e.Err)
	}
	return fmt.Sprintf("host key %s %s is not in %s and was not accepted", e.KeyType, e.Fingerprint, e.KnownHosts)
}

func (e *HostKeyError) Unwrap() error { return e.Err }

func (e *HostKeyError) hint(host, port string) string {
	name := host
	if port != "22" {
		name = "[" + host + "]:" + port
	}
	switch e.Cause() {
	case CauseHostKeyChanged, CauseHostKeyTypeChanged:
		k := e.Known[0]
		types := ""
		if e.Cause() == CauseHostKeyTypeChanged {
			types = fmt.Sprintf(" (it used to present %s, now only %s)", k.KeyType, e.KeyType)
		}
		return fmt.Sprintf("The key of %s is not the one known%s: this may be a man-in-the-middle attack. Ask the host's admin for its fingerprint (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub); if the host was really reinstalled, remove the old entry (%s:%d, or ssh-keygen -R '%s' -f %s) and connect again.",
			e.Host, types, k.File, k.Line, name, k.File)
	}
	return fmt.Sprintf("Compare %s with the fingerprint the host's admin reads off (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub), then accept it when asked, run with --accept-new-host-keys, or add it yourself (ssh-keyscan -p %s %s >> %s).",
		e.Fingerprint, port, host, e.KnownHosts)
}

// onHost wraps err with the operation done on host, naming the host only
// when err does not already: runner errors name their host once ("HOST
// (addr): ..." for a ConnError, "run on HOST: ..."), and a message saying it
// twice reads like two failures.
func onHost(op, host string, err error) error {
	if namesHost(err, host) {
		return fmt.Errorf("%s: %w", op, err)
	}
	return fmt.Errorf("%s on %s: %w", op, host, err)
}

func namesHost(err error, host string) bool {
	var ce *ConnError
	if errors.As(err, &ce) && ce.Host == host {
		return true
	}
	s := " " + err.Error()
	return strings.Contains(s, " "+host+":") || strings.Contains(s, " "+host+" (")
}
