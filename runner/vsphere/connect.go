package vsphere

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/session/keepalive"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/dpulab/dpulab/runner"
)

// Config says how to reach vCenter (or an ESXi host's own SDK).
type Config struct {
	// URL is https://HOST[:PORT][/sdk]; /sdk is added when the path is
	// empty. It must carry no user or password.
	URL string
	// User logs in (administrator@vsphere.local, a read-only lab user:
	// every call here only reads).
	User string
	// Password is asked for the password only once the server's
	// certificate is trusted, right before logging in, so that it is
	// never sent to a server that was not verified. It is kept in memory
	// for the login only.
	Password func(ctx context.Context) (string, error)
	// Thumbprint, when set, pins the certificate (SHA-256 or SHA-1 hex,
	// colons optional) instead of the known-thumbprints file.
	Thumbprint string
	// KnownThumbprints is the file of trusted certificates; empty means
	// DefaultKnownThumbprints().
	KnownThumbprints string
	// PasswordFrom says where Password gets the password ("$VAR, else
	// asked for"), for the fix of a refused login.
	PasswordFrom string
	// AcceptNew saves the thumbprint of a server not in KnownThumbprints
	// instead of refusing it (--accept-new-host-keys, as OpenSSH's
	// accept-new). A changed thumbprint is refused whatever this says.
	AcceptNew bool
	// Approved is a thumbprint the person was shown (ThumbprintError.Got
	// of a first-use refusal) and accepted, as in an SSH host key prompt:
	// saved when this very certificate is presented by a server not yet
	// known, and no other.
	Approved string
}

// FromInventory makes a Config from the inventory's vcenter section. The
// password comes from the environment variable vc.PasswordEnv names
// (DefaultPasswordEnv when it names none) when it is set and non-empty,
// else from ask (nil: no way to ask, an *Error saying which variable to
// set).
func FromInventory(vc *runner.VCenter, ask func(ctx context.Context, prompt string) (string, error)) Config {
	env := vc.PasswordEnv
	if env == "" {
		env = DefaultPasswordEnv
	}
	cfg := Config{URL: vc.URL, User: vc.User, Thumbprint: vc.Thumbprint, PasswordFrom: "$" + env + ", else typed when asked"}
	user := vc.User
	cfg.Password = func(ctx context.Context) (string, error) {
		if pw := os.Getenv(env); pw != "" {
			return pw, nil
		}
		if ask == nil {
			return "", NoPasswordError(vc.URL, user, env)
		}
		return ask(ctx, fmt.Sprintf("vCenter password for %s", user))
	}
	return cfg
}

// NoPasswordError says that the vCenter password was not given and there
// was no terminal to ask for it on: which variable to export.
func NoPasswordError(url, user, env string) *Error {
	if env == "" {
		env = DefaultPasswordEnv
	}
	return &Error{Problem: NoPassword, Address: url,
		Msg: fmt.Sprintf("vCenter password for %s: $%s is not set and there is no terminal to ask for it on", user, env),
		Fix: fmt.Sprintf("Export %s with the password before the run (read -rs %s && export %s), or name another variable with vcenter.password_env in the inventory; in the TUI it is asked for", env, env, env)}
}

// Client is a logged-in vCenter session.
type Client struct {
	vim  *vim25.Client
	addr string
	pin  *pinner
	ka   *keepalive.HandlerSOAP
	// offset is vCenter's clock minus ours, measured at login: samples
	// carry vCenter's timestamps.
	offset time.Duration
	// origin is what vCenter says it is (Origin).
	origin Origin
}

// Address is the server's host:port.
func (c *Client) Address() string { return c.addr }

// Thumbprint is the server certificate's SHA-256 thumbprint.
func (c *Client) Thumbprint() string { return c.pin.got() }

// Accepted reports whether this connection saved a new thumbprint
// (AcceptNew on first use): worth telling the person.
func (c *Client) Accepted() bool { return c.pin.accepted() }

// CAVerified reports whether the certificate also verifies against this
// machine's CA roots for the server's name. vCenter's certificates are
// usually issued by its own VMCA, which no system trusts: the pinned
// thumbprint is what makes the connection trusted, as a host key does for
// SSH.
func (c *Client) CAVerified() bool { return c.pin.ca() }

// ClockOffset is vCenter's clock minus this machine's at login.
func (c *Client) ClockOffset() time.Duration { return c.offset }

// Vim is the underlying govmomi client, for queries this package does not
// wrap.
func (c *Client) Vim() *vim25.Client { return c.vim }

// Dial connects to vCenter, verifies its certificate against the pin, then
// asks for the password and logs in. Errors never contain the password.
func Dial(ctx context.Context, cfg Config) (*Client, error) {
	u, addr, err := parseURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	if cfg.User == "" {
		return nil, fmt.Errorf("vCenter %s: no user: set vcenter.user in the inventory", addr)
	}
	if cfg.Password == nil {
		return nil, fmt.Errorf("vCenter %s: no way to get the password", addr)
	}
	p := &pinner{addr: addr, file: cfg.KnownThumbprints, acceptNew: cfg.AcceptNew, approved: normThumbprint(cfg.Approved), serverName: u.Hostname()}
	if cfg.Thumbprint != "" {
		if p.pin = normThumbprint(cfg.Thumbprint); p.pin == "" {
			return nil, fmt.Errorf("vCenter %s: thumbprint %q is not a SHA-256 or SHA-1 fingerprint in hex", addr, cfg.Thumbprint)
		}
	}
	if p.file == "" {
		if p.file, err = DefaultKnownThumbprints(); err != nil {
			return nil, err
		}
	}

	sc := soap.NewClient(u, false)
	// Our own TLS dial: it honours ctx (govmomi's uses tls.Dial) and
	// checks the pin on every connection the transport opens.
	sc.DefaultTransport().DialTLSContext = p.dialTLS
	vc, err := vim25.NewClient(ctx, sc)
	if err != nil {
		return nil, connErr(u.String(), addr, err)
	}
	pw, err := cfg.Password(ctx)
	if err != nil {
		return nil, err
	}
	// Keeps the session from idling out (vCenter's default is 30 minutes)
	// between a lab's checks and its benches: started by Login, stopped
	// by Logout.
	ka := keepalive.NewHandlerSOAP(vc.RoundTripper, 5*time.Minute, nil)
	vc.RoundTripper = ka
	if err := session.NewManager(vc).Login(ctx, url.UserPassword(cfg.User, pw)); err != nil {
		if isFault[*types.InvalidLogin](err) || isFault[types.InvalidLogin](err) {
			from := cfg.PasswordFrom
			if from == "" {
				from = "as given"
			}
			return nil, &Error{Problem: LoginRefused, Address: addr,
				Msg: fmt.Sprintf("vCenter %s refused the login of %s: wrong user name or password", addr, cfg.User),
				Fix: fmt.Sprintf("Check vcenter.user in the inventory (with its domain, e.g. administrator@vsphere.local) and the password (%s): "+
					"log in to the vSphere Client with the same two; a locked-out account is refused the same way", from)}
		}
		return nil, redact(connErr(u.String(), addr, err), pw)
	}
	c := &Client{vim: vc, addr: addr, pin: p, ka: ka}
	c.origin = c.readOrigin(ctx, u)
	if t, err := methods.GetCurrentTime(ctx, vc); err == nil && t != nil {
		c.offset = time.Until(*t)
	}
	return c, nil
}

// Close logs out. The session would otherwise stay open on vCenter until
// it times out. It runs even when ctx is already cancelled (an interrupted
// run cleans up too), for at most 10 seconds.
func (c *Client) Close(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	err := session.NewManager(c.vim).Logout(ctx)
	c.ka.Stop()
	c.vim.CloseIdleConnections()
	if err != nil {
		return fmt.Errorf("vCenter %s: log out: %w", c.addr, err)
	}
	return nil
}

func parseURL(s string) (*url.URL, string, error) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return nil, "", fmt.Errorf("vCenter url: want https://HOST[:PORT][/sdk]")
	}
	if u.User != nil {
		return nil, "", fmt.Errorf("vCenter url %s: carries a user or password: give them apart", u.Redacted())
	}
	if u.Scheme != "https" {
		return nil, "", fmt.Errorf("vCenter url %s: use https", u.Redacted())
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/sdk"
	}
	port := u.Port()
	if port == "" {
		port = "443"
	}
	return u, net.JoinHostPort(strings.ToLower(u.Hostname()), port), nil
}

func isFault[T any](err error) bool {
	if !soap.IsSoapFault(err) {
		return false
	}
	_, ok := soap.ToSoapFault(err).VimFault().(T)
	return ok
}

// redact keeps a password out of an error's text whatever produced it.
func redact(err error, pw string) error {
	if err == nil || pw == "" || !strings.Contains(err.Error(), pw) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), pw, "[password]"))
}

// pinner checks the server certificate of every TLS connection.
type pinner struct {
	addr, serverName string
	pin              string // normalised, from the inventory
	approved         string // normalised, accepted by the person
	file             string
	acceptNew        bool

	mu          sync.Mutex
	seen        string
	saved, caOK bool
}

func (p *pinner) got() string    { p.mu.Lock(); defer p.mu.Unlock(); return p.seen }
func (p *pinner) accepted() bool { p.mu.Lock(); defer p.mu.Unlock(); return p.saved }
func (p *pinner) ca() bool       { p.mu.Lock(); defer p.mu.Unlock(); return p.caOK }

func (p *pinner) dialTLS(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: dialTimeout}
	raw, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	tc := tls.Client(raw, &tls.Config{
		ServerName: p.serverName,
		MinVersion: tls.VersionTLS12,
		// The chain is not what decides (VMCA certificates verify nowhere):
		// VerifyConnection checks the pinned thumbprint instead.
		InsecureSkipVerify: true,
		VerifyConnection:   p.verify,
	})
	if err := tc.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, err
	}
	return tc, nil
}

func (p *pinner) verify(cs tls.ConnectionState) error {
	if len(cs.PeerCertificates) == 0 {
		return fmt.Errorf("vCenter %s presented no certificate", p.addr)
	}
	leaf := cs.PeerCertificates[0]
	got := Thumbprint(leaf)
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	_, caErr := leaf.Verify(x509.VerifyOptions{DNSName: p.serverName, Intermediates: inter})
	p.mu.Lock()
	p.seen, p.caOK = got, caErr == nil
	p.mu.Unlock()

	if p.pin != "" {
		if matches(p.pin, leaf) {
			return nil
		}
		return &ThumbprintError{Address: p.addr, Got: got, Want: colonHexString(p.pin), Source: "the inventory's vcenter.thumbprint"}
	}
	known, err := readKnown(p.file)
	if err != nil {
		return err
	}
	var changed *knownEntry
	for i, e := range known {
		if e.addr != p.addr {
			continue
		}
		if matches(e.thumb, leaf) {
			return nil
		}
		if changed == nil {
			changed = &known[i]
		}
	}
	if changed != nil {
		return &ThumbprintError{Address: p.addr, Got: got, Want: colonHexString(changed.thumb), Source: fmt.Sprintf("%s:%d", p.file, changed.line)}
	}
	if !p.acceptNew && (p.approved == "" || !matches(p.approved, leaf)) {
		return &ThumbprintError{Address: p.addr, Got: got, Source: p.file}
	}
	if err := saveKnown(p.file, p.addr, got); err != nil {
		return err
	}
	p.mu.Lock()
	p.saved = true
	p.mu.Unlock()
	return nil
}

// colonHexString puts colons back into normalised hex.
func colonHexString(h string) string {
	var parts []string
	for i := 0; i+1 < len(h); i += 2 {
		parts = append(parts, h[i:i+2])
	}
	return strings.Join(parts, ":")
}
