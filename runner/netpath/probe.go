package netpath

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dpulab/dpulab/runner"
)

// Report is what Probe found: which variants can be made on a host and,
// for the others, why not, in words a trainee can act on.
type Report struct {
	// Host is the target's name.
	Host string `json:"host"`
	// Encap is what an overlay path would use there; empty when neither
	// Geneve nor VXLAN can be made.
	Encap Encap `json:"encap,omitempty"`
	// EncapNote says why not Geneve, when VXLAN stands in.
	EncapNote string `json:"encap_note,omitempty"`
	// Unavailable maps each variant that cannot be made to the reason.
	Unavailable map[Variant]string `json:"unavailable,omitempty"`
}

// Available reports whether v can be made, and when not, why.
func (r Report) Available(v Variant) (bool, string) {
	why, no := r.Unavailable[v]
	return !no, why
}

func (r *Report) refuse(why string, vs ...Variant) {
	if r.Unavailable == nil {
		r.Unavailable = map[Variant]string{}
	}
	for _, v := range vs {
		if _, ok := r.Unavailable[v]; !ok {
			r.Unavailable[v] = why
		}
	}
}

// probeScratch makes a scratch namespace and tries, inside it, what the
// paths need. It prints one line per answer ("netns ok", "geneve no
// <message>", ...) and removes the namespace on every way out.
const probeScratch = `ns=$1
out=$(ip netns add "$ns" 2>&1) || { echo "netns no $out"; exit 0; }
trap 'ip netns del "$ns" 2>/dev/null' EXIT INT TERM
echo "netns ok"
if out=$(ip -n "$ns" link add dpulab-pv0 type veth peer name dpulab-pv1 2>&1); then echo "veth ok"; else echo "veth no $out"; fi
if out=$(ip -n "$ns" link add dpulab-pg0 type geneve id 1 remote 198.18.0.2 2>&1); then echo "geneve ok"; else echo "geneve no $out"; fi
if out=$(ip -n "$ns" link add dpulab-px0 type vxlan id 1 remote 198.18.0.2 dstport 4789 2>&1); then echo "vxlan ok"; else echo "vxlan no $out"; fi
if ! command -v nft >/dev/null 2>&1; then echo "nft missing"
elif out=$(printf '%s\n' 'table inet dpulab-probe { chain c { type filter hook input priority filter; ct state established accept; }; }' | ip netns exec "$ns" nft -f - 2>&1); then echo "nft ok"
else echo "nft no $out"; fi`

// Probe reports which variants can be made on t (with sudo: as root
// through sudo). It needs root like Make; it tries for real, in a scratch
// namespace named with Prefix that it removes (Sweep would too), since
// only the kernel knows whether it has Geneve, VXLAN and conntrack. The
// error is for failures to ask at all (a lost connection); everything a
// host lacks is in the Report.
func Probe(ctx context.Context, t runner.Target, sudo bool) (Report, error) {
	r := Report{Host: t.Name()}
	all := Variants()
	pl, err := t.Platform(ctx)
	if err != nil {
		return r, fmt.Errorf("probe network paths: %w", err)
	}
	if pl.OS != "linux" {
		r.refuse(fmt.Sprintf("the emulated network paths need Linux (network namespaces, nftables); %s runs %s", t.Name(), pl.OS), all...)
		return r, nil
	}
	id, err := sh(ctx, t, sudo, "id -u", nil)
	var se *runner.SudoError
	switch {
	case errors.As(err, &se):
		r.refuse("they need root, and sudo on "+t.Name()+" did not work: "+se.Error(), all...)
		return r, nil
	case err != nil:
		return r, fmt.Errorf("probe network paths: %w", err)
	case strings.TrimSpace(id.stdout) != "0":
		r.refuse("they need root (network namespaces and nftables): run dpulab as root, e.g. `sudo dpulab ...`", all...)
		return r, nil
	}
	if r0, err := sh(ctx, t, sudo, "command -v ip", nil); err != nil {
		return r, fmt.Errorf("probe network paths: %w", err)
	} else if r0.code != 0 {
		r.refuse("the `ip` command is missing: install iproute2 (Debian/Ubuntu: apt-get install iproute2)", all...)
		return r, nil
	}

	scratch := Prefix + NewRunID() + "-probe"
	// The script's trap removes the namespace; a cancelled probe may not
	// reach it, so remove it again on a context of our own.
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = removeNamespace(cctx, t, sudo, scratch)
	}()
	out, err := sh(ctx, t, sudo, "sh -c "+runner.Quote(probeScratch)+" dpulab-probe "+runner.Quote(scratch), nil)
	if err != nil {
		return r, fmt.Errorf("probe network paths: %w", err)
	}
	ans := map[string]string{}
	for _, line := range strings.Split(out.stdout, "\n") {
		what, rest, _ := strings.Cut(line, " ")
		if what != "" {
			ans[what] = rest
		}
	}
	no := func(what string) (bool, string) {
		a, ok := ans[what]
		if !ok {
			return true, "no answer (" + said(out) + ")"
		}
		msg, isNo := strings.CutPrefix(a, "no ")
		if isNo {
			return true, strings.TrimSpace(msg)
		}
		return a != "ok", a
	}
	if bad, msg := no("netns"); bad {
		r.refuse("`ip netns add` failed ("+msg+"): the kernel needs network namespaces (CONFIG_NET_NS) and iproute2 its netns support", all...)
		return r, nil
	}
	if bad, msg := no("veth"); bad {
		r.refuse("veth pairs cannot be made ("+msg+"): load the veth module (modprobe veth)", all...)
		return r, nil
	}
	switch {
	case ans["nft"] == "missing":
		r.refuse("the `nft` command is missing: install nftables (Debian/Ubuntu: apt-get install nftables)", Firewall, OverlayFirewall)
	default:
		if bad, msg := no("nft"); bad {
			r.refuse("nftables with connection tracking does not work here ("+msg+"): load nf_tables and nf_conntrack (modprobe nf_tables nf_conntrack)", Firewall, OverlayFirewall)
		}
	}
	gBad, gMsg := no("geneve")
	vBad, vMsg := no("vxlan")
	switch {
	case !gBad:
		r.Encap = Geneve
	case !vBad:
		r.Encap = VXLAN
		r.EncapNote = "this kernel has no Geneve (ip said: " + gMsg + "); VXLAN does the same work per packet"
	default:
		r.refuse("neither Geneve nor VXLAN devices can be made (ip said: "+vMsg+"): load the vxlan module (modprobe vxlan) or use a kernel built with CONFIG_VXLAN", OverlayFirewall)
	}
	return r, nil
}
