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
	"sort"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// knownHostsMu serialises appends to known_hosts files from this process:
// several hosts may be accepted at once when a step fans out.
var knownHostsMu sync.Mutex

// hostKeyChecker verifies host keys against the known_hosts files (the
// user's, which accepted keys are saved to, and read-only ones such as
// /etc/ssh/ssh_known_hosts) and asks the Prompter about unknown ones.
// @cert-authority, @revoked and hashed entries are honoured (x/crypto's
// knownhosts reads them).
type hostKeyChecker struct {
	host string // inventory name, for prompts and errors
	file string // known_hosts path (may not exist yet)
	read []string
	// hash saves entries hashed (HashKnownHosts yes).
	hash bool
	// strict is StrictHostKeyChecking ("ask" when empty).
	strict string

	mu sync.Mutex
	// once holds keys accepted for this Target's life only (AcceptOnce).
	once map[string][]byte
	// refused remembers keys the Prompter refused, by address and key, so
	// that the person is asked once per host, not once per dial (concurrent
	// commands, reconnects, cleanup after the failure).
	refused map[string]*HostKeyError
}

// load reads the known_hosts files; a missing file is an empty one (every
// host unknown) rather than an error, as with OpenSSH.
func (h *hostKeyChecker) load() (ssh.HostKeyCallback, error) {
	var files []string
	for _, f := range append([]string{h.file}, h.read...) {
		if _, err := os.Stat(f); err == nil {
			files = append(files, f)
		}
	}
	cb, err := knownhosts.New(files...)
	if err != nil {
		return nil, fmt.Errorf("read known_hosts: %w (fix or remove the bad line)", err)
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
	want, ca := h.plainWant(ke.Want)
	if ca || len(want) == 0 {
		// A CA vouches for the host: its certificate may be of any
		// type, and x/crypto offers certificate algorithms first.
		return nil
	}
	var algs []string
	seen := map[string]bool{}
	for _, w := range want {
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

		key, he := h.check(hostname, remote, key)
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
		var d HostKeyDecision
		switch h.strict {
		case "yes":
			// StrictHostKeyChecking yes: nobody is asked.
			d = Refuse
		case "accept-new", "no":
			d = AcceptAndSave
		default:
			var perr error
			d, perr = p.HostKey(ctx, HostKeyPrompt{Host: h.host, Address: hostname, KeyType: key.Type(), Fingerprint: fp, KnownHosts: h.file})
			if perr != nil {
				// No decision (cancelled, no terminal): the next dial asks again.
				return hkErr(perr)
			}
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
			if err := appendKnownHost(h.file, hostname, key, h.hash); err != nil {
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
	_, he := h.check(hostname, remote, key)
	return he
}

// check is mismatch that also returns the key the verdict is about: a
// host certificate no @cert-authority line vouches for is judged by its
// plain key, as OpenSSH does (it offers certificate algorithms only for
// hosts with a CA), so that a server with a HostCertificate stays usable
// for a client that knows its plain key, or accepts it.
func (h *hostKeyChecker) check(hostname string, remote net.Addr, key ssh.PublicKey) (ssh.PublicKey, *HostKeyError) {
	cb, err := h.load()
	if err == nil {
		err = cb(hostname, remote, key)
		if cert, ok := key.(*ssh.Certificate); ok && err != nil {
			var re *knownhosts.RevokedError
			if cerr := cb(hostname, remote, cert.SignatureKey); errors.As(cerr, &re) {
				// The CA itself is @revoked.
				err = cerr
			} else if strings.HasPrefix(err.Error(), "ssh: no authorities for hostname") {
				// x/crypto's wording for "no @cert-authority line matches".
				key = cert.Key
				err = cb(hostname, remote, key)
			}
		}
		if err == nil {
			return key, nil
		}
	}
	fp := ssh.FingerprintSHA256(key)
	he := &HostKeyError{Host: h.host, Address: hostname, KeyType: key.Type(), Fingerprint: fp, KnownHosts: h.file}
	he.Err = err
	var ke *knownhosts.KeyError
	if errors.As(err, &ke) {
		want, _ := h.plainWant(ke.Want)
		for _, w := range want {
			he.Known = append(he.Known, KnownKey{File: w.Filename, Line: w.Line, KeyType: w.Key.Type(), Fingerprint: ssh.FingerprintSHA256(w.Key)})
		}
	}
	return key, he
}

// plainWant drops the @cert-authority lines from a KeyError's Want:
// x/crypto's knownhosts lists them as if they were the host's own keys,
// which would make every host known through a CA look "changed". ca says
// some were dropped.
func (h *hostKeyChecker) plainWant(want []knownhosts.KnownKey) ([]knownhosts.KnownKey, bool) {
	caLines := map[string]map[int]bool{}
	var out []knownhosts.KnownKey
	ca := false
	for _, w := range want {
		lines, ok := caLines[w.Filename]
		if !ok {
			lines = certAuthorityLines(w.Filename)
			caLines[w.Filename] = lines
		}
		if lines[w.Line] {
			ca = true
			continue
		}
		out = append(out, w)
	}
	return out, ca
}

// certAuthorityLines returns the numbers of the @cert-authority lines of a
// known_hosts file.
func certAuthorityLines(file string) map[int]bool {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	out := map[int]bool{}
	for i, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "@cert-authority" {
			out[i+1] = true
		}
	}
	return out
}

// appendKnownHost adds one line for hostname to file, creating the file
// (0600) and its directory (0700) when needed, as OpenSSH does; hashed
// (|1|salt|hash) when hash is set, as with HashKnownHosts yes.
func appendKnownHost(file, hostname string, key ssh.PublicKey, hash bool) error {
	knownHostsMu.Lock()
	defer knownHostsMu.Unlock()
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return fmt.Errorf("save host key: %w", err)
	}
	f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("save host key: %w", err)
	}
	name := knownhosts.Normalize(hostname)
	if hash {
		name = knownhosts.HashHostname(name)
	}
	line := knownhosts.Line([]string{name}, key) + "\n"
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

// onceLines returns the keys accepted for this Target's life only as
// known_hosts lines (for OpenSSH's ssh, which cannot be told otherwise).
func (h *hostKeyChecker) onceLines() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for host, raw := range h.once {
		k, err := ssh.ParsePublicKey(raw)
		if err != nil {
			continue
		}
		out = append(out, knownhosts.Line([]string{knownhosts.Normalize(host)}, k))
	}
	sort.Strings(out)
	return out
}
