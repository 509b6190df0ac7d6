package results

import "strings"

// What a run's numbers are, as every output labels them (the product's
// promise: a number is measured where it says, or labelled for what it
// is). A run is measured unless it is marked: a rehearsal (Rehearsal), an
// emulation (Emulation), or, when shown from a saved folder, a replay
// (said by the replay view, which knows it replays).

// RunKind is the label that heads every output of r (report.md's and
// report.html's status, the headless summary, the TUI's header, the
// booth), or "" when r was measured on the hosts it names.
func RunKind(r *Results) string {
	if r == nil {
		return ""
	}
	var parts []string
	if r.Rehearsal {
		s := "REHEARSAL: no DPU in this run"
		if r.RehearsalReason != "" {
			s += " (" + r.RehearsalReason + ")"
		}
		parts = append(parts, s)
	}
	if r.Emulation != "" {
		parts = append(parts, "EMULATION: "+r.Emulation)
	}
	return strings.Join(parts, "; ")
}

// RunKindShort is RunKind in one word for narrow places (a title bar, a
// compare table's caption): "REHEARSAL", "EMULATION", both, or "".
func RunKindShort(r *Results) string {
	if r == nil {
		return ""
	}
	var parts []string
	if r.Rehearsal {
		parts = append(parts, "REHEARSAL")
	}
	if r.Emulation != "" {
		parts = append(parts, "EMULATION")
	}
	return strings.Join(parts, "+")
}

// Measured reports whether r's numbers are measurements of what its lab
// is about: false for a rehearsal or an emulation, whose figures must not
// be set beside published ones as if comparable.
func (r *Results) Measured() bool { return !r.Rehearsal && r.Emulation == "" }

// kindArticle names r's kind in a sentence: "a rehearsal", "an emulation",
// "a rehearsal and an emulation".
func kindArticle(r *Results) string {
	switch {
	case r.Rehearsal && r.Emulation != "":
		return "a rehearsal and an emulation"
	case r.Rehearsal:
		return "a rehearsal"
	case r.Emulation != "":
		return "an emulation"
	}
	return "a measurement"
}
