package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kevinburke/ssh_config"
)

// SSHOptions are the settings shared by every SSH connection of a run.
type SSHOptions struct {
	// Prompter asks about unknown host keys and for secrets;
	// HeadlessPrompter{} when nil.
	Prompter Prompter
	// KnownHosts overrides the inventory's known_hosts file.
	KnownHosts string
	// SSHConfigFiles are read for host aliases, first match wins; nil
	// means ~/.ssh/config then /etc/ssh/ssh_config. Tests point it
	// elsewhere.
	SSHConfigFiles []string
	// NoAgent skips ssh-agent.
	NoAgent bool
	// ConnectTimeout and KeepAlive as in SSHConfig.
	ConnectTimeout time.Duration
	KeepAlive      time.Duration
	// SSHClient is the OpenSSH client asked how to reach each host
	// (ssh -G): "" looks "ssh" up in PATH, "none" uses the library
	// parser, as when no client is installed.
	SSHClient string
	// Warn, when set, is told what resolution went past (see
	// Pool.Warnings) as it happens.
	Warn func(msg string)
	// PromptHostKeys makes the Prompter decide about every unknown host
	// key even where the ssh config says StrictHostKeyChecking
	// accept-new or no (booth mode, which never trusts a key itself).
	// StrictHostKeyChecking yes is always followed.
	PromptHostKeys bool
}

// Pool turns inventory hosts into Targets, one per host, kept for reuse so
// that every step on a host shares one SSH connection. Safe for concurrent
// use.
type Pool struct {
	inv  *Inventory
	opts SSHOptions

	mu      sync.Mutex
	targets map[string]Target
	// jumps are the jump hosts' Targets, by user@host:port, shared by
	// every host behind the same bastion.
	jumps   map[string]*SSHTarget
	cfgs    []*ssh_config.Config
	cfgErr  error
	cfgOnce sync.Once
	// includeFile includes each of several SSHConfigFiles, for ssh -F.
	includeFile string
	includeErr  error
	includeOnce sync.Once

	warnMu   sync.Mutex
	warnings []string
}

// NewPool returns a Pool over inv (nil: everything local).
func NewPool(inv *Inventory, opts SSHOptions) *Pool {
	return &Pool{inv: inv, opts: opts, targets: map[string]Target{}, jumps: map[string]*SSHTarget{}}
}

// Inventory returns the pool's inventory.
func (p *Pool) Inventory() *Inventory { return p.inv }

// Target returns the Target for h, creating it on first use. It does not
// connect; SSHTarget.Connect does, or the first command.
func (p *Pool) Target(h Host) (Target, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t, ok := p.targets[h.Name]; ok {
		return t, nil
	}
	var t Target
	if h.IsLocal() {
		t = NewLocal(WithLocalName(h.Name), WithLocalPrompter(p.opts.Prompter))
	} else {
		cfg, err := p.SSHConfig(h)
		if err != nil {
			return nil, err
		}
		if cfg.Jump != nil {
			cfg.JumpVia = p.jumpTarget(*cfg.Jump)
		}
		t = NewSSH(cfg)
	}
	p.targets[h.Name] = t
	return t, nil
}

// jumpTarget returns the shared Target for a jump host chain (p.mu held).
func (p *Pool) jumpTarget(c SSHConfig) *SSHTarget {
	key := jumpKey(c)
	if t, ok := p.jumps[key]; ok {
		return t
	}
	if c.Jump != nil {
		c.JumpVia = p.jumpTarget(*c.Jump)
	}
	t := NewSSH(c)
	p.jumps[key] = t
	return t
}

func jumpKey(c SSHConfig) string {
	k := c.User + "@" + c.addr()
	if c.Jump != nil {
		k += " via " + jumpKey(*c.Jump)
	}
	return k
}

// TargetsFor returns the Targets of every host playing role.
func (p *Pool) TargetsFor(role string) ([]Target, error) {
	hosts, err := p.inv.HostsFor(role)
	if err != nil {
		return nil, err
	}
	out := make([]Target, 0, len(hosts))
	for _, h := range hosts {
		t, err := p.Target(h)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// Connector is implemented by every Target of this package: Connect dials
// (SSH) so that host-key and password questions come before a lab's first
// step rather than in the middle of one.
type Connector interface {
	Connect(ctx context.Context) error
}

// ConnectAll connects every target that is a Connector, in parallel, and
// returns the errors joined (each names its host).
func ConnectAll(ctx context.Context, targets []Target) error {
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		c, ok := t.(Connector)
		if !ok {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.Connect(ctx)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Close closes every Target's connection.
func (p *Pool) Close() error {
	p.mu.Lock()
	ts := p.targets
	p.targets = map[string]Target{}
	js := p.jumps
	p.jumps = map[string]*SSHTarget{}
	p.mu.Unlock()
	var errs []error
	for _, t := range ts {
		if err := t.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	for _, t := range js {
		if err := t.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	p.mu.Lock()
	if p.includeFile != "" {
		os.Remove(p.includeFile)
	}
	p.mu.Unlock()
	return errors.Join(errs...)
}

// warn records a warning about the ssh configuration.
func (p *Pool) warn(msg string) {
	p.warnMu.Lock()
	p.warnings = append(p.warnings, msg)
	p.warnMu.Unlock()
	if p.opts.Warn != nil {
		p.opts.Warn(msg)
	}
}

// Warnings returns what resolving hosts met and went past: Match blocks
// the library parser skipped (no OpenSSH client), each naming file and
// line.
func (p *Pool) Warnings() []string {
	p.warnMu.Lock()
	defer p.warnMu.Unlock()
	return append([]string(nil), p.warnings...)
}

// openSSHClient returns the ssh binary to ask (ssh -G), or "" to use the
// library parser.
func (p *Pool) openSSHClient() string {
	switch p.opts.SSHClient {
	case "none":
		return ""
	case "":
		path, err := exec.LookPath("ssh")
		if err != nil {
			return ""
		}
		return path
	}
	return p.opts.SSHClient
}

// settings resolves alias as OpenSSH would: `ssh -G` when the client is
// installed, the library parser otherwise.
func (p *Pool) settings(alias, user string, port int) (hostSettings, error) {
	if bin := p.openSSHClient(); bin != "" {
		return p.openSSHSettings(bin, alias, user, port)
	}
	return p.librarySettings(alias, user, port)
}

// SSHConfig resolves how to reach h as OpenSSH would (see settings), the
// inventory's Port, User and Identity winning over the config files, and
// the inventory's (or SSHOptions') known_hosts over UserKnownHostsFile.
func (p *Pool) SSHConfig(h Host) (SSHConfig, error) {
	known := p.opts.KnownHosts
	if known == "" && p.inv != nil {
		known = p.inv.KnownHosts
	}
	cfg, err := p.resolve(h.Name, h.Address, h.User, h.Port, h.Identity, h.ProxyJump, known, 0)
	if err != nil {
		return SSHConfig{}, fmt.Errorf("host %s: %w", h.Name, err)
	}
	return cfg, nil
}

func (p *Pool) resolve(name, alias, user string, port int, identity, jump, known string, depth int) (SSHConfig, error) {
	if depth > 5 {
		return SSHConfig{}, errors.New("ProxyJump chain longer than 5 hops (a loop in ~/.ssh/config?)")
	}
	hs, err := p.settings(alias, user, port)
	if err != nil {
		return SSHConfig{}, err
	}
	if jump != "" {
		// The inventory's ProxyJump wins, as ssh -J does.
		hs.ProxyJump, hs.ProxyCommand = jump, ""
	}
	if hs.User == "" {
		hs.User = currentUser()
	}
	if hs.Port == 0 {
		hs.Port = 22
	}
	if hs.HostName == "" {
		hs.HostName = alias
	}
	exp := func(s string) string { return expandTokens(s, alias, hs.HostName, hs.User, hs.Port) }
	cfg := SSHConfig{
		Name: name, Alias: alias, Addr: hs.HostName, Port: hs.Port, User: hs.User,
		NoAgent: p.opts.NoAgent, Prompter: p.opts.Prompter,
		ConnectTimeout: p.opts.ConnectTimeout, KeepAlive: p.opts.KeepAlive,
		IdentitiesOnly: hs.IdentitiesOnly, HashKnownHosts: hs.HashKnownHosts,
		StrictHostKeyChecking: hs.StrictHostKeyChecking,
	}
	if p.opts.PromptHostKeys && cfg.StrictHostKeyChecking != "yes" {
		cfg.StrictHostKeyChecking = "ask"
	}
	switch a := hs.IdentityAgent; {
	case strings.EqualFold(a, "none"):
		cfg.NoAgent = true
	case a == "" || a == "SSH_AUTH_SOCK":
	case strings.HasPrefix(a, "$"):
		cfg.IdentityAgent = os.Getenv(strings.TrimPrefix(a, "$"))
	default:
		cfg.IdentityAgent = exp(a)
	}
	if known != "" {
		cfg.KnownHosts = known
	} else {
		for i, f := range hs.UserKnownHosts {
			if strings.EqualFold(f, "none") {
				continue
			}
			if i == 0 {
				cfg.KnownHosts = exp(f)
			} else {
				cfg.KnownHostsRead = append(cfg.KnownHostsRead, exp(f))
			}
		}
		if cfg.KnownHosts == "" {
			cfg.KnownHosts = expandHome("~/.ssh/known_hosts")
		}
	}
	for _, f := range hs.GlobalKnownHosts {
		if !strings.EqualFold(f, "none") {
			cfg.KnownHostsRead = append(cfg.KnownHostsRead, exp(f))
		}
	}
	switch {
	case identity != "":
		cfg.Identities = []string{expandHome(identity)}
	case hs.defaultIDs:
		for _, f := range hs.IdentityFiles {
			cfg.DefaultIdentities = append(cfg.DefaultIdentities, exp(f))
		}
	default:
		for _, f := range hs.IdentityFiles {
			cfg.Identities = append(cfg.Identities, exp(f))
		}
	}
	for _, f := range hs.CertificateFiles {
		cfg.Certificates = append(cfg.Certificates, exp(f))
	}
	if c := hs.ProxyCommand; c != "" && !strings.EqualFold(c, "none") {
		cfg.ProxyCommand = c
	}
	if j := hs.ProxyJump; j != "" && !strings.EqualFold(j, "none") && cfg.ProxyCommand == "" {
		hops := strings.Split(j, ",")
		var prev *SSHConfig
		for _, hop := range hops {
			ju, jh, jp, err := parseJump(strings.TrimSpace(hop))
			if err != nil {
				return SSHConfig{}, err
			}
			jc, err := p.resolve(jh, jh, ju, jp, "", "", known, depth+1)
			if err != nil {
				return SSHConfig{}, fmt.Errorf("jump host %s: %w", jh, err)
			}
			if jc.Jump == nil && jc.ProxyCommand == "" && prev != nil {
				jc.Jump = prev
			}
			c := jc
			prev = &c
		}
		cfg.Jump = prev
	}
	return cfg, nil
}

// parseJump splits a ProxyJump hop: [user@]host[:port] or ssh://...
func parseJump(s string) (user, host string, port int, err error) {
	s = strings.TrimPrefix(s, "ssh://")
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		user, s = s[:i], s[i+1:]
	}
	host = s
	if h, ps, e := net.SplitHostPort(s); e == nil {
		host = h
		port, err = strconv.Atoi(ps)
		if err != nil {
			return "", "", 0, fmt.Errorf("ProxyJump %q: bad port", s)
		}
	}
	if host == "" {
		return "", "", 0, fmt.Errorf("ProxyJump hop %q has no host", s)
	}
	return user, host, port, nil
}

// expandTokens expands the ssh_config tokens of paths: ~, %d (home), %u
// (local user), %r (remote user), %h (host name), %n (the alias as
// given), %p (port), %%.
func expandTokens(s, alias, host, remoteUser string, port int) string {
	home, _ := os.UserHomeDir()
	s = expandHome(s)
	r := strings.NewReplacer("%%", "%", "%d", home, "%u", currentUser(), "%r", remoteUser, "%h", host, "%n", alias, "%p", strconv.Itoa(port))
	return r.Replace(s)
}
