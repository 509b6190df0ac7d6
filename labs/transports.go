package labs

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dpulab/dpulab/server/transport"
)

// TransportNotes says which steps and variants of l cannot run in this
// build, or run over a simulation, and why: `dpulab lint` and the dry run
// print them, so a lab that needs RDMA is not found out at its deploy
// step. Only literal transports are looked at; a templated one is the
// engine's to check when it plans the step.
//
// Each reason is said once, with every place it applies to.
func TransportNotes(l *Lab) []string {
	var reasons []string
	where := map[string][]string{}
	add := func(reason, w string) {
		if _, ok := where[reason]; !ok {
			reasons = append(reasons, reason)
		}
		where[reason] = append(where[reason], w)
	}
	note := func(w string, v Value) {
		s := strings.TrimSpace(string(v))
		if s == "" || strings.Contains(s, "{{") {
			return
		}
		n := transport.Name(s)
		if err := transport.Available(n); errors.Is(err, transport.ErrNotBuilt) {
			add(fmt.Sprintf("cannot run in this build: %v", err), w)
		} else if sim := transport.Simulated(n); sim != "" {
			add(fmt.Sprintf("run over %s", sim), w)
		}
	}
	for i := range l.Steps {
		st := &l.Steps[i]
		what := "step " + st.ID
		if st.Deploy != nil {
			note(what, st.Deploy.Transport)
		}
		if st.Bench != nil && st.Kind == KindBench {
			note(what, st.Bench.Transport)
		}
		if st.Compare != nil {
			for _, v := range st.Compare.Variants {
				w := fmt.Sprintf("%s, variant %q", what, v.Label)
				note(w, v.Transport)
				if v.Deploy != nil {
					note(w, v.Deploy.Transport)
				}
			}
		}
	}
	notes := make([]string, len(reasons))
	for i, r := range reasons {
		notes[i] = strings.Join(where[r], "; ") + " " + r
	}
	return notes
}
