package steps

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dpulab/dpulab/labs"
)

// A rehearsal is a run that cannot measure what its lab is about: asked
// for (Options.Rehearse: the hardware checks are skipped), or found, when
// the variants a compare step puts on different roles land on one host
// (the default inventory maps every role to this machine). Either way the
// run's results say so (results.Results.Rehearsal and its reason), and so
// does every output: the headless header and summary, report.md and
// report.html, the TUI, a replay.

// rehearsalReason says why this run is a rehearsal, or "" when it is not.
func (e *Engine) rehearsalReason() string {
	var why []string
	if e.opts.Rehearse {
		why = append(why, "asked for with --rehearse: the hardware checks are skipped")
	}
	if s := e.sharedHosts(); s != "" {
		why = append(why, s)
	}
	return strings.Join(why, "; ")
}

// sharedHosts finds a compare step whose variants run on different roles
// that resolve to a common host, and says which.
func (e *Engine) sharedHosts() string {
	for _, st := range e.lab.Steps {
		if st.Kind != labs.KindCompare || st.Compare == nil {
			continue
		}
		// host → the first variant on it and its role: variants of one
		// role sharing a host is the lab's design (one server, several
		// transports); variants of different roles sharing one is not.
		type on struct{ label, role string }
		seen := map[string]on{}
		for _, v := range st.Compare.Variants {
			if v.On == "" {
				continue
			}
			hs, err := e.hosts.hosts([]string{v.On})
			if err != nil {
				continue
			}
			var names []string
			for _, h := range hs {
				names = append(names, h.Name)
			}
			slices.Sort(names)
			for _, n := range slices.Compact(names) {
				if other, ok := seen[n]; ok && other.role != v.On {
					return fmt.Sprintf("%q (role %s) and %q (role %s) of step %s run on the same host (%s)", other.label, other.role, v.Label, v.On, st.ID, n)
				}
				if _, ok := seen[n]; !ok {
					seen[n] = on{v.Label, v.On}
				}
			}
		}
	}
	return ""
}

// Rehearsal says why this run is a rehearsal, or "" when it is not.
func (e *Engine) Rehearsal() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.results == nil || !e.results.Rehearsal {
		return ""
	}
	return e.results.RehearsalReason
}

// rehearsalVars gives each variable that has a rehearsal value
// (labs.Variable.Rehearsal) that value in a rehearsal, unless --set or the
// saved progress of this run gave it one: the lab's interface and MTU from
// this machine's default route, a shorter sweep. It returns what it did, in
// words, for the run's output.
func rehearsalVars(lab *labs.Lab, vars, saved, set map[string]string) []string {
	var taken, kept []string
	var route *routeInfo
	var routeErr error
	for _, v := range lab.Variables {
		if v.Rehearsal == "" {
			continue
		}
		if _, ok := set[v.Name]; ok {
			continue
		}
		if _, ok := saved[v.Name]; ok {
			continue
		}
		val, from := v.Rehearsal, "the lab's rehearsal value"
		if val == labs.RehearsalDefaultRoute {
			if route == nil && routeErr == nil {
				route, routeErr = defaultRoute()
			}
			if routeErr != nil {
				kept = append(kept, fmt.Sprintf("%s=%s kept (%v: --set %s=VALUE)", v.Name, vars[v.Name], routeErr, v.Name))
				continue
			}
			val, from = route.iface, "this machine's default route, dev "+route.iface
			if v.Type == labs.TypeInt {
				val = strconv.Itoa(route.mtu)
				from = "the MTU of " + route.iface + ", this machine's default route"
			}
		}
		if err := v.Check(val); err != nil {
			kept = append(kept, fmt.Sprintf("%s=%s kept (%s from %s does not fit: %v)", v.Name, vars[v.Name], val, from, err))
			continue
		}
		vars[v.Name] = val
		taken = append(taken, fmt.Sprintf("%s=%s (%s)", v.Name, val, from))
	}
	var out []string
	if len(taken) > 0 {
		out = append(out, "REHEARSAL: variables set for a rehearsal on this machine: "+strings.Join(taken, ", ")+"; --set NAME=VALUE gives another")
	}
	if len(kept) > 0 {
		out = append(out, "REHEARSAL: "+strings.Join(kept, "; "))
	}
	return out
}

// routeInfo is this machine's default route: its interface and MTU.
type routeInfo struct {
	iface string
	mtu   int
}

// procNetRoute and sysClassNet are read for the default route (tests
// point them elsewhere).
var (
	procNetRoute = "/proc/net/route"
	sysClassNet  = "/sys/class/net"
)

// defaultRoute reads the IPv4 default route with the lowest metric from
// /proc/net/route, and its interface's MTU.
func defaultRoute() (*routeInfo, error) {
	b, err := os.ReadFile(procNetRoute)
	if err != nil {
		return nil, fmt.Errorf("no default route read: %w", err)
	}
	best, bestMetric := "", -1
	for i, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if i == 0 || len(f) < 8 || f[1] != "00000000" || f[7] != "00000000" {
			continue
		}
		m, err := strconv.Atoi(f[6])
		if err != nil {
			continue
		}
		if bestMetric < 0 || m < bestMetric {
			best, bestMetric = f[0], m
		}
	}
	if best == "" {
		return nil, errors.New("this machine has no IPv4 default route")
	}
	mb, err := os.ReadFile(filepath.Join(sysClassNet, best, "mtu"))
	if err != nil {
		return nil, fmt.Errorf("MTU of %s: %w", best, err)
	}
	mtu, err := strconv.Atoi(strings.TrimSpace(string(mb)))
	if err != nil {
		return nil, fmt.Errorf("MTU of %s: %q", best, strings.TrimSpace(string(mb)))
	}
	return &routeInfo{iface: best, mtu: mtu}, nil
}
