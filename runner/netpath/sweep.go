package netpath

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/dpulab/dpulab/runner"
)

// Swept is what a Sweep removed.
type Swept struct {
	// Namespaces removed (with whatever ran in them, their links and their
	// tables).
	Namespaces []string `json:"namespaces"`
	// Links removed from the target's own namespace (a veth end left there
	// by a crash of another build of dpulab, say).
	Links []string `json:"links"`
	// Tables removed from the target's own namespace, as "family name".
	Tables []string `json:"tables"`
}

// Empty reports whether nothing was removed.
func (s Swept) Empty() bool { return len(s.Namespaces)+len(s.Links)+len(s.Tables) == 0 }

// SweepAll removes every namespace, link and nftables table named with
// Prefix on t: what crashed or killed runs left. It touches nothing else.
// Running paths of other runs on the same host are removed too: call it
// when no other dpulab run uses the host (`dpulab cleanup`, the start of a
// run), and Sweep with a run's prefix otherwise.
func SweepAll(ctx context.Context, t runner.Target, sudo bool) (Swept, error) {
	return Sweep(ctx, t, sudo, Prefix)
}

// Sweep removes the namespaces, links (in t's own namespace) and nftables
// tables (likewise) whose names start with prefix, which must itself start
// with Prefix (RunPrefix(id) for one run's). Processes still running in a
// namespace are stopped first: a namespace only goes away with its last
// process, and a server left running in it would keep its links alive.
// Without `nft` installed there are no tables to find, which is not an
// error. Everything it can remove it removes; the error lists the rest.
func Sweep(ctx context.Context, t runner.Target, sudo bool, prefix string) (Swept, error) {
	var s Swept
	if !strings.HasPrefix(prefix, Prefix) {
		return s, fmt.Errorf("sweep %q: only names starting with %q are dpulab's to remove", prefix, Prefix)
	}
	// Without `ip` nothing of ours can exist: Make needs it.
	if r, err := sh(ctx, t, sudo, "command -v ip", nil); err != nil {
		return s, fmt.Errorf("sweep %s* on %s: %w", prefix, t.Name(), err)
	} else if r.code != 0 {
		return s, nil
	}
	var errs []error
	nss, err := listNamespaces(ctx, t, sudo)
	if err != nil {
		return s, err
	}
	for _, ns := range matching(nss, prefix) {
		if err := removeNamespace(ctx, t, sudo, ns); err != nil {
			errs = append(errs, err)
			continue
		}
		s.Namespaces = append(s.Namespaces, ns)
	}

	links, err := listLinks(ctx, t, sudo)
	if err != nil {
		errs = append(errs, err)
	}
	for _, l := range matching(links, prefix) {
		// Deleting one end of a veth pair deletes the other: a name
		// gone by the time its turn comes is not an error.
		r, err := sh(ctx, t, sudo, "ip link del dev "+runner.Quote(l)+" || ! ip link show dev "+runner.Quote(l)+" >/dev/null 2>&1", nil)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("remove link %s: %w", l, err))
		case r.code != 0:
			errs = append(errs, fmt.Errorf("remove link %s on %s: %s", l, t.Name(), said(r)))
		default:
			s.Links = append(s.Links, l)
		}
	}

	tables, err := listTables(ctx, t, sudo)
	if err != nil {
		errs = append(errs, err)
	}
	for _, tb := range tables {
		if !strings.HasPrefix(tb.Name, prefix) {
			continue
		}
		cmd := "nft delete table " + runner.Quote(tb.Family) + " " + runner.Quote(tb.Name)
		if _, err := must(ctx, t, sudo, "remove nftables table "+tb.Name, cmd, nil); err != nil {
			errs = append(errs, err)
			continue
		}
		s.Tables = append(s.Tables, tb.Family+" "+tb.Name)
	}
	if err := errors.Join(errs...); err != nil {
		return s, fmt.Errorf("sweep %s* on %s: %w", prefix, t.Name(), err)
	}
	return s, nil
}

func matching(names []string, prefix string) []string {
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// listNamespaces returns the named network namespaces (`ip -j netns list`;
// it prints nothing at all when there are none).
func listNamespaces(ctx context.Context, t runner.Target, sudo bool) ([]string, error) {
	out, err := must(ctx, t, sudo, "list network namespaces", "ip -j netns list", nil)
	if err != nil {
		return nil, err
	}
	return parseNetnsList([]byte(out))
}

func parseNetnsList(out []byte) ([]string, error) {
	if len(strings.TrimSpace(string(out))) == 0 {
		return nil, nil
	}
	var nss []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(out, &nss); err != nil {
		return nil, fmt.Errorf("read `ip -j netns list`: %w", err)
	}
	names := make([]string, 0, len(nss))
	for _, ns := range nss {
		names = append(names, ns.Name)
	}
	return names, nil
}

// listLinks returns the link names in t's own namespace.
func listLinks(ctx context.Context, t runner.Target, sudo bool) ([]string, error) {
	out, err := must(ctx, t, sudo, "list links", "ip -j link show", nil)
	if err != nil {
		return nil, err
	}
	links, err := parseLinks([]byte(out))
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(links))
	for _, l := range links {
		names = append(names, l.Name)
	}
	return names, nil
}

type nftTable struct {
	Family string `json:"family"`
	Name   string `json:"name"`
}

// listTables returns the nftables tables in t's own namespace; none when
// nft is not installed (so nothing of ours can be there either).
func listTables(ctx context.Context, t runner.Target, sudo bool) ([]nftTable, error) {
	r, err := sh(ctx, t, sudo, "command -v nft >/dev/null 2>&1 || exit 127; nft -j list tables", nil)
	if err != nil {
		return nil, fmt.Errorf("list nftables tables: %w", err)
	}
	if r.code == 127 {
		return nil, nil
	}
	if r.code != 0 {
		return nil, fmt.Errorf("list nftables tables on %s: %s (exit %d)", t.Name(), said(r), r.code)
	}
	return parseTables([]byte(r.stdout))
}

func parseTables(out []byte) ([]nftTable, error) {
	var doc struct {
		Nftables []struct {
			Table *nftTable `json:"table"`
		} `json:"nftables"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, fmt.Errorf("read `nft -j list tables`: %w", err)
	}
	var tables []nftTable
	for _, o := range doc.Nftables {
		if o.Table != nil {
			tables = append(tables, *o.Table)
		}
	}
	return tables, nil
}

// killNS stops every process in namespace $1: SIGTERM, up to 3 s to exit,
// then SIGKILL. A namespace that does not exist is done.
const killNS = `ns=$1
ip netns pids "$ns" >/dev/null 2>&1 || exit 0
i=0
while :; do
	pids=$(ip netns pids "$ns") || exit 1
	[ -z "$pids" ] && exit 0
	if [ $i -eq 0 ]; then
		kill -TERM $pids 2>/dev/null
	elif [ $i -ge 30 ]; then
		kill -KILL $pids 2>/dev/null
	fi
	[ $i -ge 60 ] && { echo "processes $pids in $ns do not end" >&2; exit 1; }
	sleep 0.1 2>/dev/null || sleep 1
	i=$((i+1))
done`

// removeNamespace stops what runs in ns and deletes it; a namespace that
// is not there is already removed.
func removeNamespace(ctx context.Context, t runner.Target, sudo bool, ns string) error {
	nss, err := listNamespaces(ctx, t, sudo)
	if err != nil {
		return err
	}
	found := false
	for _, n := range nss {
		found = found || n == ns
	}
	if !found {
		return nil
	}
	if _, err := must(ctx, t, sudo, "stop processes in namespace "+ns, "sh -c "+runner.Quote(killNS)+" dpulab-netns "+runner.Quote(ns), nil); err != nil {
		return err
	}
	_, err = must(ctx, t, sudo, "remove namespace "+ns, "ip netns del "+runner.Quote(ns), nil)
	return err
}
