package steps

import (
	"fmt"
	"slices"
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
