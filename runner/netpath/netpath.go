package netpath

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/dpulab/dpulab/runner"
)

// Prefix starts the name of every namespace, link and nftables table this
// package makes; Sweep removes what carries it and nothing else.
const Prefix = "dpulab-"

// Variant is one of the three emulated paths.
type Variant string

const (
	// Direct is a plain veth pair between the namespaces: the full-offload
	// (UPTv2) stand-in, where the DPU does the overlay and the firewall so
	// the host does neither.
	Direct Variant = "direct"
	// Firewall adds the stateful nftables chain on the host: partial
	// offload, the whitepaper's default mode (overlay on the DPU, firewall
	// on the host).
	Firewall Variant = "firewall"
	// OverlayFirewall adds Geneve (or VXLAN) encapsulation to Firewall:
	// the host does it all, as with a standard NIC.
	OverlayFirewall Variant = "overlay+firewall"
)

// Variants lists the variants from the least host work to the most.
func Variants() []Variant { return []Variant{Direct, Firewall, OverlayFirewall} }

// ParseVariant reads a variant's name as a lab file or a flag spells it.
func ParseVariant(s string) (Variant, error) {
	for _, v := range Variants() {
		if string(v) == s {
			return v, nil
		}
	}
	return "", fmt.Errorf("unknown network path %q: use one of %s, %s, %s", s, Direct, Firewall, OverlayFirewall)
}

// Overlay reports whether the variant encapsulates its traffic.
func (v Variant) Overlay() bool { return v == OverlayFirewall }

// HasFirewall reports whether the variant's traffic walks the firewall.
func (v Variant) HasFirewall() bool { return v == Firewall || v == OverlayFirewall }

// Describe says in a line what the variant stands for, and that it is an
// emulation.
func (v Variant) Describe() string {
	switch v {
	case Direct:
		return "emulated full offload (UPTv2): a plain veth path, as if the DPU did overlay and firewall"
	case Firewall:
		return "emulated partial offload: the host's kernel walks a stateful nftables firewall, the overlay is off the host"
	case OverlayFirewall:
		return "emulated standard NIC: the host's kernel does the overlay encapsulation and the stateful firewall"
	}
	return string(v)
}

// Encap is the encapsulation an overlay path uses.
type Encap string

const (
	// Geneve is what NSX uses and what a DPU offloads.
	Geneve Encap = "geneve"
	// VXLAN stands in for Geneve on kernels without it: the same work per
	// packet (a UDP/IP header in front of an Ethernet frame, a second
	// trip through the stack), 8 bytes less header.
	VXLAN Encap = "vxlan"
)

// DefaultFirewallRules is the firewall's rule count when Config leaves it
// zero. Measured on this project's shared 2-core VM (TestPerfVariants,
// -tags perf; dpulab bench, 50 clients, pipeline 16, 256 B, SET:GET 1:1,
// 5 interleaved rounds of 10 s), TPS as a share of the direct path's in
// the same round, median (min..max):
//
//	N=1000: firewall 0.55 (0.35..0.82), overlay+firewall 0.37 (0.25..0.63)
//	N=2000: firewall 0.29 (0.21..0.48), overlay+firewall 0.36 (0.29..0.49)
//
// At 1000 every round ordered the three as the whitepaper's modes do
// (direct > firewall > overlay+firewall); at 2000 the walk drowned the
// overlay's cost and the last two swapped places in 3 of 5 rounds.
const DefaultFirewallRules = 1000

// MaxFirewallRules bounds Config.FirewallRules: beyond it loading the
// ruleset takes longer than a lab step should, and the rate falls so far
// that the comparison says nothing a smaller N would not.
const MaxFirewallRules = 20000

// The addresses, all from 198.18.0.0/15 (RFC 2544's benchmarking range).
// They can be the same for every path at once: each path has its own two
// namespaces, so nothing ever routes between them.
var (
	underlayServer = netip.MustParseAddr("198.18.0.1")
	underlayClient = netip.MustParseAddr("198.18.0.2")
	overlayServer  = netip.MustParseAddr("198.19.0.1")
	overlayClient  = netip.MustParseAddr("198.19.0.2")
)

const (
	prefixLen = 24
	// vni is the overlay's network identifier (any: the namespaces are
	// the only two endpoints).
	vni = 4242
	// vxlanPort is IANA's VXLAN port; Linux defaults to the pre-standard
	// 8472 when none is given.
	vxlanPort = 4789
	// overlayMTU leaves room for the outer headers on the 1500-byte veth
	// (Geneve: 50 bytes without options; VXLAN: 50).
	overlayMTU = 1450
)

// maxRunID keeps Prefix + id + "-xx" within Linux's 15-byte interface names.
const maxRunID = 5

// Config says which path to make.
type Config struct {
	// Variant is the path to make.
	Variant Variant
	// RunID names this path's objects (Prefix + RunID + ...): 1 to 5
	// characters a-z, 0-9. Empty: a random one.
	RunID string
	// FirewallRules is N, the rules each packet walks before the ones that
	// match it; zero means DefaultFirewallRules. Ignored without firewall.
	FirewallRules int
	// Encap forces the overlay's encapsulation; empty: Geneve where the
	// kernel has it, else VXLAN.
	Encap Encap
	// Sudo runs every command as root through sudo (a lab host reached as
	// an ordinary user). On this machine run as root instead.
	Sudo bool
}

// Validate checks the config and fills its defaults.
func (c *Config) Validate() error {
	if _, err := ParseVariant(string(c.Variant)); err != nil {
		return err
	}
	if c.RunID == "" {
		c.RunID = NewRunID()
	}
	if err := validRunID(c.RunID); err != nil {
		return err
	}
	if c.FirewallRules == 0 {
		c.FirewallRules = DefaultFirewallRules
	}
	if c.FirewallRules < 0 || c.FirewallRules > MaxFirewallRules {
		return fmt.Errorf("firewall_rules %d is out of range: use 1 to %d (default %d)", c.FirewallRules, MaxFirewallRules, DefaultFirewallRules)
	}
	switch c.Encap {
	case "", Geneve, VXLAN:
	default:
		return fmt.Errorf("unknown encapsulation %q: use %s or %s, or leave it empty to pick", c.Encap, Geneve, VXLAN)
	}
	return nil
}

func validRunID(id string) error {
	if id == "" || len(id) > maxRunID {
		return fmt.Errorf("run id %q: use 1 to %d characters a-z, 0-9 (Linux limits interface names to 15 bytes)", id, maxRunID)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return fmt.Errorf("run id %q: use only a-z and 0-9", id)
		}
	}
	return nil
}

// NewRunID returns a random run id (5 characters, 36^5 ≈ 60 million of
// them, so that two runs on one host do not meet by chance).
func NewRunID() string {
	const digits = "abcdefghijklmnopqrstuvwxyz0123456789"
	var b [maxRunID]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+).
	for i := range b {
		b[i] = digits[int(b[i])%len(digits)]
	}
	return string(b[:])
}

// Path is a made path. It is plain data so that a lab's progress can keep
// it and a later run (or Teardown after a restart) can remove it.
type Path struct {
	// Host is the name of the target it was made on.
	Host    string  `json:"host"`
	Variant Variant `json:"variant"`
	RunID   string  `json:"run_id"`
	Sudo    bool    `json:"sudo,omitempty"`
	// ServerNS and ClientNS are the namespaces: the server runs in the
	// first, the load generator in the second.
	ServerNS string `json:"server_ns"`
	ClientNS string `json:"client_ns"`
	// ServerAddr is where the server listens and the client dials;
	// ClientAddr is the client's source address.
	ServerAddr netip.Addr `json:"server_addr"`
	ClientAddr netip.Addr `json:"client_addr"`
	// ServerLink and ClientLink are the veth pair's ends (the wire).
	ServerLink string `json:"server_link"`
	ClientLink string `json:"client_link"`
	// Encap, ServerEncapDev and ClientEncapDev describe the overlay; empty
	// without one. EncapNote says why Geneve was not used, when it was not.
	Encap          Encap  `json:"encap,omitempty"`
	EncapNote      string `json:"encap_note,omitempty"`
	ServerEncapDev string `json:"server_encap_dev,omitempty"`
	ClientEncapDev string `json:"client_encap_dev,omitempty"`
	// FirewallTable is the nftables table (family inet, in ServerNS);
	// empty without firewall. FirewallRules is its N.
	FirewallTable string `json:"firewall_table,omitempty"`
	FirewallRules int    `json:"firewall_rules,omitempty"`
}

// names fills the object names of a path from its run id.
func names(v Variant, id string) Path {
	base := Prefix + id + "-"
	p := Path{
		Variant:    v,
		RunID:      id,
		ServerNS:   base + "srv",
		ClientNS:   base + "cli",
		ServerLink: base + "vs",
		ClientLink: base + "vc",
		ServerAddr: underlayServer,
		ClientAddr: underlayClient,
	}
	if v.Overlay() {
		p.ServerEncapDev, p.ClientEncapDev = base+"os", base+"oc"
		p.ServerAddr, p.ClientAddr = overlayServer, overlayClient
	}
	if v.HasFirewall() {
		p.FirewallTable = base + "fw"
	}
	return p
}

// RunPrefix is what every object of run id's paths starts with; Sweep
// with it removes that run's leftovers only.
func RunPrefix(id string) string { return Prefix + id + "-" }

// Plan is the path cfg describes on host, as Make would name and address
// it, without making anything: what a dry run shows. It validates cfg and
// fills its defaults (a random RunID when empty). Encap stays empty: only
// the kernel that makes the path knows whether it has Geneve.
func Plan(host string, cfg *Config) (Path, error) {
	if err := cfg.Validate(); err != nil {
		return Path{}, err
	}
	p := names(cfg.Variant, cfg.RunID)
	p.Host, p.Sudo = host, cfg.Sudo
	if cfg.Variant.HasFirewall() {
		p.FirewallRules = cfg.FirewallRules
	}
	return p, nil
}

// Make builds the path cfg describes on t. On failure it removes what it
// had made, so an error leaves nothing behind; the namespaces' names are
// taken by `ip netns add`, which refuses a name that exists, so a run id
// in use is an error, never a path shared with another run.
func Make(ctx context.Context, t runner.Target, cfg Config) (*Path, error) {
	p, err := Plan(t.Name(), &cfg)
	if err != nil {
		return nil, err
	}
	var made []string
	err = p.build(ctx, t, cfg, &made)
	if err == nil {
		return &p, nil
	}
	// Undo on a context of its own: the caller's may be what ended.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	var undo []error
	for i := len(made) - 1; i >= 0; i-- {
		if rerr := removeNamespace(cctx, t, cfg.Sudo, made[i]); rerr != nil {
			undo = append(undo, rerr)
		}
	}
	if len(undo) > 0 {
		return nil, fmt.Errorf("make %s path on %s: %w; and removing what was made failed: %w (run `dpulab cleanup`)", cfg.Variant, t.Name(), err, errors.Join(undo...))
	}
	return nil, fmt.Errorf("make %s path on %s: %w", cfg.Variant, t.Name(), err)
}

func (p *Path) build(ctx context.Context, t runner.Target, cfg Config, made *[]string) error {
	q := runner.Quote
	run := func(what, cmd string) error {
		_, err := must(ctx, t, p.Sudo, what, cmd, nil)
		return err
	}
	for _, ns := range []string{p.ServerNS, p.ClientNS} {
		if err := run("create namespace "+ns, "ip netns add "+q(ns)); err != nil {
			return err
		}
		*made = append(*made, ns)
		// IPv6 off inside: its neighbour discovery and router
		// solicitations would cross the firewall and the overlay and
		// move the counters that are meant to count the benchmark.
		if err := run("prepare namespace "+ns, p.exec(ns)+" sh -c "+q(prepareNS)); err != nil {
			return err
		}
	}
	// Both ends are created inside their namespaces: nothing of the path
	// ever exists in the host's own namespace, even for an instant.
	if err := run("create veth pair", "ip link add "+q(p.ServerLink)+" netns "+q(p.ServerNS)+
		" type veth peer name "+q(p.ClientLink)+" netns "+q(p.ClientNS)); err != nil {
		return err
	}
	underlay := !cfg.Variant.Overlay()
	if err := p.addrUp(ctx, t, p.ServerNS, p.ServerLink, underlayServer, underlay); err != nil {
		return err
	}
	if err := p.addrUp(ctx, t, p.ClientNS, p.ClientLink, underlayClient, underlay); err != nil {
		return err
	}
	if cfg.Variant.Overlay() {
		if err := p.makeOverlay(ctx, t, cfg.Encap); err != nil {
			return err
		}
	}
	if cfg.Variant.HasFirewall() {
		dev := p.ServerLink
		if cfg.Variant.Overlay() {
			dev = p.ServerEncapDev
		}
		rs := ruleset(p.FirewallTable, dev, p.ClientAddr, p.ServerAddr, p.FirewallRules)
		if _, err := must(ctx, t, p.Sudo, "load the firewall ("+fmt.Sprint(p.FirewallRules)+" rules)", p.exec(p.ServerNS)+" nft -f -", []byte(rs)); err != nil {
			return err
		}
	}
	return nil
}

// prepareNS runs inside a new namespace: loopback up (a server may also
// bind 127.0.0.1 there), IPv6 off where the kernel has it.
const prepareNS = `ip link set lo up || exit 1
if [ -d /proc/sys/net/ipv6 ]; then
	sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 || exit 1
fi`

// addrUp brings dev up in ns, with addr when withAddr.
func (p *Path) addrUp(ctx context.Context, t runner.Target, ns, dev string, addr netip.Addr, withAddr bool) error {
	q := runner.Quote
	cmd := "ip -n " + q(ns) + " link set " + q(dev) + " up"
	if withAddr {
		cmd = "ip -n " + q(ns) + " addr add " + q(netip.PrefixFrom(addr, prefixLen).String()) + " dev " + q(dev) + " && " + cmd
	}
	_, err := must(ctx, t, p.Sudo, "configure "+dev, cmd, nil)
	return err
}

// makeOverlay creates the tunnel devices over the veth (underlay
// addresses on the veth, overlay addresses on the tunnel). Geneve is tried
// first unless want says otherwise; a kernel without it gets VXLAN, and
// EncapNote records what the kernel said.
func (p *Path) makeOverlay(ctx context.Context, t runner.Target, want Encap) error {
	q := runner.Quote
	for _, side := range []struct {
		ns, link, dev       string
		local, remote, addr netip.Addr
	}{
		{p.ServerNS, p.ServerLink, p.ServerEncapDev, underlayServer, underlayClient, overlayServer},
		{p.ClientNS, p.ClientLink, p.ClientEncapDev, underlayClient, underlayServer, overlayClient},
	} {
		if err := p.addrUp(ctx, t, side.ns, side.link, side.local, true); err != nil {
			return err
		}
		geneve := "ip -n " + q(side.ns) + " link add " + q(side.dev) + " mtu " + fmt.Sprint(overlayMTU) +
			" type geneve id " + fmt.Sprint(vni) + " remote " + q(side.remote.String())
		vxlan := "ip -n " + q(side.ns) + " link add " + q(side.dev) + " mtu " + fmt.Sprint(overlayMTU) +
			" type vxlan id " + fmt.Sprint(vni) + " local " + q(side.local.String()) + " remote " + q(side.remote.String()) +
			" dstport " + fmt.Sprint(vxlanPort) + " dev " + q(side.link) + " nolearning"
		// The server side decides; the client side follows it.
		if p.Encap == "" {
			if want != VXLAN {
				r, err := sh(ctx, t, p.Sudo, geneve, nil)
				if err != nil {
					return fmt.Errorf("create geneve device: %w", err)
				}
				if r.code == 0 {
					p.Encap = Geneve
				} else if want == Geneve {
					return fmt.Errorf("create geneve device on %s: %s (exit %d): the kernel needs the geneve module (modprobe geneve)", t.Name(), said(r), r.code)
				} else {
					p.EncapNote = "this kernel has no Geneve (ip said: " + said(r) + "); VXLAN does the same work per packet"
				}
			}
			if p.Encap == "" {
				if _, err := must(ctx, t, p.Sudo, "create vxlan device", vxlan, nil); err != nil {
					return fmt.Errorf("%w: the kernel needs the vxlan module (modprobe vxlan)", err)
				}
				p.Encap = VXLAN
			}
		} else {
			cmd := vxlan
			if p.Encap == Geneve {
				cmd = geneve
			}
			if _, err := must(ctx, t, p.Sudo, "create "+string(p.Encap)+" device", cmd, nil); err != nil {
				return err
			}
		}
		if err := p.addrUp(ctx, t, side.ns, side.dev, side.addr, true); err != nil {
			return err
		}
	}
	return nil
}

// Teardown removes the path: it stops whatever still runs in its
// namespaces and deletes them, which takes the links and the firewall's
// table with them. It removes nothing else, and a path already gone (a
// second Teardown, a Sweep before) is not an error.
//
// It is cleanup, called on every way out, Ctrl-C included: it goes on when
// ctx is cancelled (keeping ctx's values) and gives up after a minute.
func (p *Path) Teardown(ctx context.Context, t runner.Target) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	var errs []error
	for _, ns := range []string{p.ClientNS, p.ServerNS} {
		if err := removeNamespace(ctx, t, p.Sudo, ns); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("tear down %s path %s on %s: %w", p.Variant, p.RunID, t.Name(), err)
	}
	return nil
}

// ServerExec is the command prefix that runs what follows it in the
// server's namespace (`ip netns exec NAME`), with NAME quoted. Run it as
// root (Command.Sudo when the path was made with Sudo).
func (p *Path) ServerExec() string { return p.exec(p.ServerNS) }

// ClientExec is ServerExec for the client's namespace.
func (p *Path) ClientExec() string { return p.exec(p.ClientNS) }

// InServer wraps shell text cmd (its values already quoted) so that it
// runs in the server's namespace: `ip netns exec NAME sh -c 'cmd'`.
func (p *Path) InServer(cmd string) string { return p.ServerExec() + " sh -c " + runner.Quote(cmd) }

// InClient is InServer for the client's namespace.
func (p *Path) InClient(cmd string) string { return p.ClientExec() + " sh -c " + runner.Quote(cmd) }

func (p *Path) exec(ns string) string { return "ip netns exec " + runner.Quote(ns) }

// String names the path for logs and lab text, labelled as an emulation.
func (p *Path) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (emulated) %s→%s", p.Variant, p.ClientAddr, p.ServerAddr)
	if p.Encap != "" {
		fmt.Fprintf(&b, " over %s", p.Encap)
	}
	if p.FirewallTable != "" {
		fmt.Fprintf(&b, ", firewall of %d rules", p.FirewallRules)
	}
	return b.String()
}
