package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
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
	return errors.Join(errs...)
}

func (p *Pool) sshConfigs() ([]*ssh_config.Config, error) {
	p.cfgOnce.Do(func() {
		files := p.opts.SSHConfigFiles
		if files == nil {
			files = []string{expandHome("~/.ssh/config"), "/etc/ssh/ssh_config"}
		}
		for _, f := range files {
			fh, err := os.Open(f)
			if err != nil {
				if errors.Is(err, os.ErrNotExist) {
					continue
				}
				p.cfgErr = fmt.Errorf("ssh config: %w", err)
				return
			}
			c, err := ssh_config.Decode(fh)
			fh.Close()
			if err != nil {
				p.cfgErr = fmt.Errorf("ssh config %s: %w", f, err)
				return
			}
			p.cfgs = append(p.cfgs, c)
		}
	})
	return p.cfgs, p.cfgErr
}

// sshGet returns the first value for key of alias in the config files.
func (p *Pool) sshGet(alias, key string) string {
	cfgs, _ := p.sshConfigs()
	for _, c := range cfgs {
		if v, err := c.Get(alias, key); err == nil && v != "" {
			return v
		}
	}
	return ""
}

func (p *Pool) sshGetAll(alias, key string) []string {
	cfgs, _ := p.sshConfigs()
	var out []string
	for _, c := range cfgs {
		if v, err := c.GetAll(alias, key); err == nil {
			out = append(out, v...)
		}
	}
	return out
}

// SSHConfig resolves how to reach h: the inventory's fields first, then
// ~/.ssh/config for the host's address used as an alias (HostName, User,
// Port, IdentityFile, ProxyJump, UserKnownHostsFile), then defaults.
func (p *Pool) SSHConfig(h Host) (SSHConfig, error) {
	if _, err := p.sshConfigs(); err != nil {
		return SSHConfig{}, err
	}
	known := p.opts.KnownHosts
	if known == "" && p.inv != nil {
		known = p.inv.KnownHosts
	}
	cfg, err := p.resolve(h.Name, h.Address, h.User, h.Port, h.Identity, known, 0)
	if err != nil {
		return SSHConfig{}, fmt.Errorf("host %s: %w", h.Name, err)
	}
	return cfg, nil
}

func (p *Pool) resolve(name, alias, user string, port int, identity, known string, depth int) (SSHConfig, error) {
	if depth > 5 {
		return SSHConfig{}, errors.New("ProxyJump chain longer than 5 hops (a loop in ~/.ssh/config?)")
	}
	addr := alias
	if hn := p.sshGet(alias, "HostName"); hn != "" {
		addr = strings.ReplaceAll(hn, "%h", alias)
	}
	if user == "" {
		user = p.sshGet(alias, "User")
	}
	if user == "" {
		user = currentUser()
	}
	if port == 0 {
		if v := p.sshGet(alias, "Port"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 65535 {
				return SSHConfig{}, fmt.Errorf("~/.ssh/config Port %q for %s is not a port number", v, alias)
			}
			port = n
		}
	}
	if port == 0 {
		port = 22
	}
	if known == "" {
		if v := p.sshGet(alias, "UserKnownHostsFile"); v != "" {
			known = expandTokens(strings.Fields(v)[0], alias, user)
		}
	}
	if known == "" {
		known = expandHome("~/.ssh/known_hosts")
	}
	var ids, defaults []string
	if identity != "" {
		ids = []string{expandHome(identity)}
	} else {
		for _, v := range p.sshGetAll(alias, "IdentityFile") {
			if v == ssh_config.Default("IdentityFile") {
				continue
			}
			ids = append(ids, expandTokens(v, alias, user))
		}
		for _, d := range []string{"id_ed25519", "id_ecdsa", "id_rsa"} {
			defaults = append(defaults, filepath.Join(expandHome("~/.ssh"), d))
		}
	}
	cfg := SSHConfig{
		Name: name, Addr: addr, Port: port, User: user, Identities: ids, DefaultIdentities: defaults,
		NoAgent: p.opts.NoAgent, KnownHosts: known, Prompter: p.opts.Prompter,
		ConnectTimeout: p.opts.ConnectTimeout, KeepAlive: p.opts.KeepAlive,
	}
	if j := p.sshGet(alias, "ProxyJump"); j != "" && !strings.EqualFold(j, "none") {
		hops := strings.Split(j, ",")
		var prev *SSHConfig
		for _, hop := range hops {
			ju, jh, jp, err := parseJump(strings.TrimSpace(hop))
			if err != nil {
				return SSHConfig{}, err
			}
			jc, err := p.resolve(jh, jh, ju, jp, "", known, depth+1)
			if err != nil {
				return SSHConfig{}, fmt.Errorf("jump host %s: %w", jh, err)
			}
			if jc.Jump == nil && prev != nil {
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

// expandTokens expands the ssh_config tokens dpulab supports in paths: ~,
// %d (home), %u (local user), %r (remote user), %h (host), %%.
func expandTokens(s, host, remoteUser string) string {
	home, _ := os.UserHomeDir()
	s = expandHome(s)
	r := strings.NewReplacer("%%", "%", "%d", home, "%u", currentUser(), "%r", remoteUser, "%h", host)
	return r.Replace(s)
}
