package labs

import (
	"fmt"
	"strings"

	"github.com/dpulab/dpulab/internal/wire/transportwire"
)

// TransportJudge says of a transport a lab names why the dpulab binaries
// that would run it (this program on this machine, the agent on a lab
// host) cannot ("" when they can), and, when what they have is a
// simulation, what labels figures measured over it. labs is a parser and
// does not judge builds: the engine gives the judge for where the lab
// runs (steps.TransportJudge).
type TransportJudge func(n transportwire.Name) (cannot, simulated string)

// TransportNote is one reason some steps or variants of a lab cannot run
// where it is to run, or run over a simulation: the reason, the places it
// applies to, and whether it stops them (Cannot: the binary that would run
// the transport lacks it, Reason says why) or only labels them (Reason:
// the simulation they run over).
type TransportNote struct {
	Reason string
	Where  []string
	Cannot bool
}

// String is the note as lint and the dry run print it.
func (n TransportNote) String() string {
	what := "run over "
	if n.Cannot {
		what = "cannot run here: "
	}
	return strings.Join(n.Where, "; ") + " " + what + n.Reason
}

// TransportNotes says which steps and variants of l cannot run, as judge
// says, or run over a simulation, and why: `dpulab lint` and the dry run
// print them, so a lab that needs RDMA is not found out at its deploy
// step. Only literal transports are looked at; a templated one is the
// engine's to check when it plans the step.
//
// Each reason is said once, with every place it applies to.
func TransportNotes(l *Lab, judge TransportJudge) []string {
	var out []string
	for _, n := range TransportProblems(l, judge) {
		out = append(out, n.String())
	}
	return out
}

// TransportProblems is TransportNotes as values, for the TUI's picker.
func TransportProblems(l *Lab, judge TransportJudge) []TransportNote {
	var notes []TransportNote
	index := map[string]int{}
	add := func(reason, w string, cannot bool) {
		i, ok := index[reason]
		if !ok {
			i = len(notes)
			index[reason] = i
			notes = append(notes, TransportNote{Reason: reason, Cannot: cannot})
		}
		notes[i].Where = append(notes[i].Where, w)
	}
	for _, u := range TransportUses(l) {
		if !transportwire.IsKnown(u.Transport) {
			continue // Check refuses it
		}
		if cannot, sim := judge(u.Transport); cannot != "" {
			add(cannot, u.Where, true)
		} else if sim != "" {
			add(sim, u.Where, false)
		}
	}
	return notes
}

// TransportUse is one place of a lab that names a transport literally.
type TransportUse struct {
	// Step is the step's id; Where says the place in words ("step sizes,
	// variant \"RDMA RC\"").
	Step, Where string
	Transport   transportwire.Name
}

// TransportUses lists the places of l that name a transport literally (a
// templated one is the engine's to check when it plans the step), in
// step order: what TransportProblems judges, and what the TUI marks a
// step by.
func TransportUses(l *Lab) []TransportUse {
	var out []TransportUse
	use := func(step, w string, v Value) {
		s := strings.TrimSpace(string(v))
		if s == "" || strings.Contains(s, "{{") {
			return
		}
		out = append(out, TransportUse{Step: step, Where: w, Transport: transportwire.Name(s)})
	}
	for i := range l.Steps {
		st := &l.Steps[i]
		what := "step " + st.ID
		if st.Deploy != nil {
			use(st.ID, what, st.Deploy.Transport)
		}
		if st.Bench != nil && st.Kind == KindBench {
			use(st.ID, what, st.Bench.Transport)
		}
		if st.Compare != nil {
			for _, v := range st.Compare.Variants {
				w := fmt.Sprintf("%s, variant %q", what, v.Label)
				use(st.ID, w, v.Transport)
				if v.Deploy != nil {
					use(st.ID, w, v.Deploy.Transport)
				}
			}
		}
	}
	return out
}
