package netpath

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dpulab/dpulab/runner"
)

// LinkStats are one device's counters from `ip -s -j link`.
type LinkStats struct {
	Device    string `json:"device"`
	RxPackets uint64 `json:"rx_packets"`
	TxPackets uint64 `json:"tx_packets"`
	RxBytes   uint64 `json:"rx_bytes"`
	TxBytes   uint64 `json:"tx_bytes"`
}

// Counters prove which way traffic went. All are read in the server's
// namespace: what the server sent and received.
type Counters struct {
	// Link is the veth end of the server (the wire every variant uses).
	Link LinkStats `json:"link"`
	// Encap is the server's Geneve/VXLAN device; nil without overlay.
	Encap *LinkStats `json:"encap,omitempty"`
	// Firewall is the firewall's counters; nil without firewall.
	Firewall *FirewallStats `json:"firewall,omitempty"`
}

// Sub returns c minus before, counter by counter: the traffic between two
// readings of the same path.
func (c Counters) Sub(before Counters) Counters {
	d := c
	d.Link = c.Link.sub(before.Link)
	if c.Encap != nil && before.Encap != nil {
		e := c.Encap.sub(*before.Encap)
		d.Encap = &e
	}
	if c.Firewall != nil && before.Firewall != nil {
		f := *c.Firewall
		f.Walked -= before.Firewall.Walked
		f.Established -= before.Firewall.Established
		f.New -= before.Firewall.New
		f.Dropped -= before.Firewall.Dropped
		d.Firewall = &f
	}
	return d
}

func (l LinkStats) sub(b LinkStats) LinkStats {
	return LinkStats{Device: l.Device, RxPackets: l.RxPackets - b.RxPackets, TxPackets: l.TxPackets - b.TxPackets,
		RxBytes: l.RxBytes - b.RxBytes, TxBytes: l.TxBytes - b.TxBytes}
}

// Counters reads the path's counters on t.
func (p *Path) Counters(ctx context.Context, t runner.Target) (Counters, error) {
	var c Counters
	devs := []string{p.ServerLink}
	if p.ServerEncapDev != "" {
		devs = append(devs, p.ServerEncapDev)
	}
	out, err := must(ctx, t, p.Sudo, "read link counters", "ip -n "+runner.Quote(p.ServerNS)+" -s -j link show", nil)
	if err != nil {
		return c, err
	}
	links, err := parseLinks([]byte(out))
	if err != nil {
		return c, err
	}
	byName := map[string]LinkStats{}
	for _, l := range links {
		byName[l.Name] = l.stats()
	}
	for _, d := range devs {
		if _, ok := byName[d]; !ok {
			return c, fmt.Errorf("read counters of %s path %s on %s: device %s is gone from namespace %s", p.Variant, p.RunID, t.Name(), d, p.ServerNS)
		}
	}
	c.Link = byName[p.ServerLink]
	if p.ServerEncapDev != "" {
		e := byName[p.ServerEncapDev]
		c.Encap = &e
	}
	if p.FirewallTable != "" {
		out, err := must(ctx, t, p.Sudo, "read firewall counters",
			p.ServerExec()+" nft -j list counters table inet "+runner.Quote(p.FirewallTable), nil)
		if err != nil {
			return c, err
		}
		fs, err := parseCounters([]byte(out), p.FirewallTable, p.FirewallRules)
		if err != nil {
			return c, err
		}
		c.Firewall = &fs
	}
	return c, nil
}

// ipLink is the part of `ip -s -j link show` read here. iproute2 prints
// stats64 with -s (stats with older versions).
type ipLink struct {
	Name    string     `json:"ifname"`
	Stats64 *linkStats `json:"stats64"`
	Stats   *linkStats `json:"stats"`
}

type linkStats struct {
	Rx struct {
		Bytes   uint64 `json:"bytes"`
		Packets uint64 `json:"packets"`
	} `json:"rx"`
	Tx struct {
		Bytes   uint64 `json:"bytes"`
		Packets uint64 `json:"packets"`
	} `json:"tx"`
}

func (l ipLink) stats() LinkStats {
	s := l.Stats64
	if s == nil {
		s = l.Stats
	}
	if s == nil {
		return LinkStats{Device: l.Name}
	}
	return LinkStats{Device: l.Name, RxPackets: s.Rx.Packets, TxPackets: s.Tx.Packets, RxBytes: s.Rx.Bytes, TxBytes: s.Tx.Bytes}
}

func parseLinks(out []byte) ([]ipLink, error) {
	var links []ipLink
	if err := json.Unmarshal(out, &links); err != nil {
		return nil, fmt.Errorf("read `ip -j link show`: %w", err)
	}
	return links, nil
}
