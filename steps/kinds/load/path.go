package load

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dpulab/dpulab/runner/netpath"
	"github.com/dpulab/dpulab/steps/kinds/deploy"
	"github.com/dpulab/dpulab/steps/results"
)

// Placement says where a process runs: a network namespace and a CPU
// list for taskset, both empty for "as usual".
type Placement struct {
	NS   string
	CPUs string
}

// wrap prefixes an exec'd command line with the namespace and the CPU
// pinning. cmd must start with "exec ".
func (p Placement) Wrap(cmd string) string { return deploy.Placed(p.NS, p.CPUs, cmd) }

// SplitCPUs pins the servers to the first half of a host's cores and the
// load generator to the rest, so neither steals the other's cycles and
// the server's CPU share reads cleanly; a host with fewer than two cores
// (or an unknown count) is not pinned.
func SplitCPUs(n int) (server, client string) {
	if n < 2 {
		return "", ""
	}
	h := n / 2
	span := func(a, b int) string {
		if a == b {
			return strconv.Itoa(a)
		}
		return fmt.Sprintf("%d-%d", a, b)
	}
	return span(0, h-1), span(h, n-1)
}

// PathPoint is what a path's counters say about one job, for results.json.
func PathPoint(p *netpath.Path, d netpath.Counters) *results.PathCounters {
	pc := &results.PathCounters{Path: string(p.Variant), Encap: string(p.Encap), FirewallRules: p.FirewallRules,
		LinkPackets: d.Link.RxPackets + d.Link.TxPackets}
	if d.Encap != nil {
		n := d.Encap.RxPackets + d.Encap.TxPackets
		pc.EncapPackets = &n
	}
	if d.Firewall != nil {
		n := d.Firewall.Walked
		pc.FirewallPackets = &n
	}
	return pc
}

// EmulationNote is what results.json and every report say about a run
// with emulated paths.
const EmulationNote = "no DPU in this run: the compared network paths are emulated in one Linux kernel (network namespaces, an overlay and a stateful nftables firewall on the host, or a direct veth as if a DPU did that work); no PCIe, Arm cores or hypervisor are involved"

// VariantEmulation says what a made path stands for.
func VariantEmulation(p *netpath.Path) string {
	s := p.Variant.Describe()
	var with []string
	if p.Encap != "" {
		with = append(with, string(p.Encap)+" overlay")
	}
	if p.FirewallRules > 0 {
		with = append(with, fmt.Sprintf("%d-rule firewall", p.FirewallRules))
	}
	if len(with) > 0 {
		s += " (" + strings.Join(with, ", ") + ")"
	}
	return s
}

// PathNote is the dry run's line for a path: what is made, where, how.
func PathNote(p *netpath.Path) string {
	s := fmt.Sprintf("# emulated path %s (%s): namespaces %s (servers, at %s) and %s (load generator)", p.Variant, p.Variant.Describe(), p.ServerNS, p.ServerAddr, p.ClientNS)
	if p.Variant.Overlay() {
		s += ", a Geneve overlay (VXLAN where the kernel has no Geneve)"
	}
	if p.FirewallRules > 0 {
		s += fmt.Sprintf(", a %d-rule stateful nftables firewall", p.FirewallRules)
	}
	return s + "; made with ip and nft as root before the variant, removed after it"
}
