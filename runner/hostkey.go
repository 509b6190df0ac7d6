package runner

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// knownHostsMu serialises appends to known_hosts files from this process:
// several hosts may be accepted at once when a step fans out.
var knownHostsMu sync.Mutex

// hostKeyChecker verifies host keys against one known_hosts file and asks
// the Prompter about unknown ones.
type hostKeyChecker struct {
	host string // inventory name, for prompts and errors
	file string // known_hosts path (may not exist yet)

	mu sync.Mutex
	// once holds keys accepted for this Target's life only (AcceptOnce).
	once map[string][]byte
	// refused remembers keys the Prompter refused, by address and key, so
	// that the person is asked once per host, not once per dial (concurrent
	// commands, reconnects, cleanup after the failure).
	refused map[string]*HostKeyError
}

// load reads the known_hosts file; a missing file is an empty one (every
// host unknown) rather than an error, as with OpenSSH.
func (h *hostKeyChecker) load() (ssh.HostKeyCallback, error) {
	if _, err := os.Stat(h.file); errors.Is(err, os.ErrNotExist) {
		return knownhosts.New()
	}
	cb, err := knownhosts.New(h.file)
	if err != nil {
		return nil, fmt.Errorf("read known_hosts %s: %w (fix or remove the bad line)", h.file, err)
	}
	return cb, nil
}

// algorithms returns the host key algorithms to offer for addr, restricted
// to the types known_hosts already holds for it, so that a server with
// several host keys presents one we can check instead of one we would take
// for a changed key. Nil (no restriction) for unknown hosts.
func (h *hostKeyChecker) algorithms(addr string) []string {
	cb, err := h.load()
	if err != nil {
		return nil
	}
	// A throwaway key never matches; the KeyError lists what is known.
	pub, _, _ := ed25519.GenerateKey(nil)
	probe, err := ssh.NewPublicKey(pub)
	if err != nil {
		return nil
	}
	err = cb(addr, fakeAddr(addr), probe)
	var ke *knownhosts.KeyError
	if !errors.As(err, &ke) || len(ke.Want) == 0 {
		return nil
	}
	var algs []string
	seen := map[string]bool{}
	for _, w := range ke.Want {
		for _, a := range algsForKeyType(w.Key.Type()) {
			if !seen[a] {
				seen[a] = true
				algs = append(algs, a)
			}
		}
	}
	return algs
}

func algsForKeyType(t string) []string {
	switch t {
	case ssh.KeyAlgoRSA:
		return []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
	case ssh.CertAlgoRSAv01:
		return []string{ssh.CertAlgoRSASHA512v01, ssh.CertAlgoRSASHA256v01, ssh.CertAlgoRSAv01}
	}
	return []string{t}
}

// fakeAddr turns "host:port" into a net.Addr for the probe; knownhosts also
// matches on the remote IP, which for a probe is the same address.
func fakeAddr(addr string) net.Addr {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return &net.TCPAddr{}
	}
	p, _ := net.LookupPort("tcp", port)
	return &net.TCPAddr{IP: net.ParseIP(host), Port: p}
}

// callback returns the ssh.HostKeyCallback for one dial. ctx bounds the
// prompt, since a person may take a while to answer.
func (h *hostKeyChecker) callback(ctx context.Context, p Prompter) ssh.HostKeyCallback {
	return func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		h.mu.Lock()
		if k, ok := h.once[hostname]; ok && bytes.Equal(k, key.Marshal()) {
			h.mu.Unlock()
			return nil
		}
		if he, ok := h.refused[hostname+" "+string(key.Marshal())]; ok {
			h.mu.Unlock()
			return he
		}
		h.mu.Unlock()

		he := h.mismatch(hostname, remote, key)
		if he == nil {
			return nil
		}
		if he.Cause() != CauseHostKeyUnknown || !errors.As(he.Err, new(*knownhosts.KeyError)) {
			// Changed, revoked, or known_hosts unreadable: never prompt
			// past it.
			return he
		}
		fp := he.Fingerprint
		hkErr := func(err error) *HostKeyError {
			return &HostKeyError{Host: h.host, Address: hostname, KeyType: key.Type(), Fingerprint: fp, KnownHosts: h.file, Err: err}
		}
		d, perr := p.HostKey(ctx, HostKeyPrompt{Host: h.host, Address: hostname, KeyType: key.Type(), Fingerprint: fp, KnownHosts: h.file})
		if perr != nil {
			// No decision (cancelled, no terminal): the next dial asks again.
			return hkErr(perr)
		}
		switch d {
		case AcceptOnce:
			h.mu.Lock()
			if h.once == nil {
				h.once = map[string][]byte{}
			}
			h.once[hostname] = key.Marshal()
			h.mu.Unlock()
			return nil
		case AcceptAndSave:
			if err := appendKnownHost(h.file, hostname, key); err != nil {
				return hkErr(err)
			}
			return nil
		}
		he = hkErr(ErrHostKeyRefused)
		h.mu.Lock()
		if h.refused == nil {
			h.refused = map[string]*HostKeyError{}
		}
		h.refused[hostname+" "+string(key.Marshal())] = he
		h.mu.Unlock()
		return he
	}
}

// mismatch checks key against known_hosts without asking anyone: nil when
// it is known, else a HostKeyError whose Known lists the entries it
// contradicts (none: the host is unknown).
func (h *hostKeyChecker) mismatch(hostname string, remote net.Addr, key ssh.PublicKey) *HostKeyError {
	fp := ssh.FingerprintSHA256(key)
	he := &HostKeyError{Host: h.host, Address: hostname, KeyType: key.Type(), Fingerprint: fp, KnownHosts: h.file}
	cb, err := h.load()
	if err != nil {
		he.Err = err
		return he
	}
	err = cb(hostname, remote, key)
	if err == nil {
		return nil
	}
	he.Err = err
	var ke *knownhosts.KeyError
	if errors.As(err, &ke) {
		for _, w := range ke.Want {
			he.Known = append(he.Known, KnownKey{File: w.Filename, Line: w.Line, KeyType: w.Key.Type(), Fingerprint: ssh.FingerprintSHA256(w.Key)})
		}
	}
	return he
}

// appendKnownHost adds one line for hostname to file, creating the file
// (0600) and its directory (0700) when needed, as OpenSSH does.
func appendKnownHost(file, hostname string, key ssh.PublicKey) error {
	knownHostsMu.Lock()
	defer knownHostsMu.Unlock()
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return fmt.Errorf("save host key: %w", err)
	}
	f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("save host key: %w", err)
	}
	line := knownhosts.Line([]string{knownhosts.Normalize(hostname)}, key) + "\n"
	// Do not glue our line onto a last line that lacks its newline.
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
			line = "\n" + line
		}
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return fmt.Errorf("save host key to %s: %w", file, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("save host key to %s: %w", file, err)
	}
	return nil
}
