package netpath

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
)

// The firewall's named counters. nft keeps them per object, so one
// `nft -j list counters` reads them all without listing N rules.
const (
	// ctrWalkedIn/Out count the packets that entered the rule chain.
	ctrWalkedIn  = "walked_in"
	ctrWalkedOut = "walked_out"
	// ctrEstablished counts packets of known connections (conntrack).
	ctrEstablished = "established"
	// ctrNew counts connections the policy let in (first packets).
	ctrNew = "new"
	// ctrDropped counts what the policy refused.
	ctrDropped = "dropped"
)

// ruleset is the nftables script (for `nft -f -`) of the emulated
// distributed firewall: a table in the server's namespace whose base
// chains send every packet into or out of dev (the server's "vNIC") to
// chain dfw.
//
// dfw walks n rules that never match the lab's traffic before the ones
// that do. That is the point of the emulation: a distributed firewall
// classifies every packet against a policy of many rules (NSX evaluates
// its rule table per vNIC), and that per-packet work on the host's cores is
// what a DPU takes away. A linear walk makes the cost grow with n, which is
// the knob (firewall_rules). The established-connection rule comes after
// the walk on purpose: first, it would let almost every packet skip the
// policy and the firewall would cost nothing measurable.
//
// The rules are stateful (conntrack on in the namespace) and the policy is
// a real one: established and related traffic, new TCP connections from the
// client to the server, and ICMP pass; everything else is dropped. The
// non-matching rules name sources and destinations in 198.19.128.0/17,
// which no path ever assigns.
func ruleset(table, dev string, client, server netip.Addr, n int) string {
	var b strings.Builder
	b.Grow(64*n + 1024)
	fmt.Fprintf(&b, "table inet %s {\n", table)
	for _, c := range []string{ctrWalkedIn, ctrWalkedOut, ctrEstablished, ctrNew, ctrDropped} {
		fmt.Fprintf(&b, "\tcounter %s { }\n", c)
	}
	b.WriteString("\tchain dfw {\n")
	for i := 0; i < n; i++ {
		// 64 × 254 sources and destinations, 60,000 ports: rules
		// differ as a real policy's do, so nft cannot fold them.
		src := fmt.Sprintf("198.19.%d.%d", 128+(i/254)%64, 1+i%254)
		dst := fmt.Sprintf("198.19.%d.%d", 192+(i/254)%64, 1+(i*7)%254)
		fmt.Fprintf(&b, "\t\tip saddr %s ip daddr %s tcp dport %d ct state new accept\n", src, dst, 1024+i%60000)
	}
	fmt.Fprintf(&b, "\t\tct state established,related counter name %q accept\n", ctrEstablished)
	b.WriteString("\t\tct state invalid drop\n")
	fmt.Fprintf(&b, "\t\tip saddr %s ip daddr %s tcp flags & (syn|ack) == syn ct state new counter name %q accept\n", client, server, ctrNew)
	b.WriteString("\t\tmeta l4proto icmp accept\n")
	fmt.Fprintf(&b, "\t\tcounter name %q drop\n", ctrDropped)
	b.WriteString("\t}\n")
	fmt.Fprintf(&b, "\tchain in {\n\t\ttype filter hook input priority filter; policy accept;\n\t\tiifname %q counter name %q jump dfw\n\t}\n", dev, ctrWalkedIn)
	fmt.Fprintf(&b, "\tchain out {\n\t\ttype filter hook output priority filter; policy accept;\n\t\toifname %q counter name %q jump dfw\n\t}\n", dev, ctrWalkedOut)
	b.WriteString("}\n")
	return b.String()
}

// FirewallStats are the firewall's counters, in packets.
type FirewallStats struct {
	// Table is the nftables table they were read from.
	Table string `json:"table"`
	// Rules is N, the rules each packet walked.
	Rules int `json:"rules"`
	// Walked counts packets that entered the rule chain (both ways).
	Walked uint64 `json:"walked"`
	// Established counts packets passed as part of a known connection.
	Established uint64 `json:"established"`
	// New counts connections let in.
	New uint64 `json:"new"`
	// Dropped counts packets the policy refused.
	Dropped uint64 `json:"dropped"`
}

// parseCounters reads `nft -j list counters table inet NAME`.
func parseCounters(out []byte, table string, rules int) (FirewallStats, error) {
	var doc struct {
		Nftables []struct {
			Counter *struct {
				Name    string `json:"name"`
				Table   string `json:"table"`
				Packets uint64 `json:"packets"`
			} `json:"counter"`
		} `json:"nftables"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return FirewallStats{}, fmt.Errorf("read `nft -j list counters`: %w", err)
	}
	fs := FirewallStats{Table: table, Rules: rules}
	seen := 0
	for _, o := range doc.Nftables {
		c := o.Counter
		if c == nil || c.Table != table {
			continue
		}
		seen++
		switch c.Name {
		case ctrWalkedIn, ctrWalkedOut:
			fs.Walked += c.Packets
		case ctrEstablished:
			fs.Established += c.Packets
		case ctrNew:
			fs.New += c.Packets
		case ctrDropped:
			fs.Dropped += c.Packets
		default:
			seen--
		}
	}
	if seen != 5 {
		return fs, fmt.Errorf("nftables table %s has %d of the firewall's 5 counters: it was changed after dpulab made it", table, seen)
	}
	return fs, nil
}
