package steps

import (
	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
)

// RehearsalHere says why running lab with inv (nil: every role on this
// machine) would be a rehearsal, by the engine's own rule
// (rehearsalReason: --rehearse, or variants of different roles on one
// host), or "" when it would measure what the lab is about. It connects
// to nothing and locks nothing: the TUI's picker asks it of every lab.
func RehearsalHere(lab *labs.Lab, inv *runner.Inventory, rehearse bool) string {
	if lab == nil {
		return ""
	}
	if inv != nil && len(inv.Hosts) == 0 {
		inv = nil
	}
	e := &Engine{lab: lab, opts: Options{Rehearse: rehearse, Inventory: inv}, hosts: &hostPool{lab: lab, inv: inv}}
	return e.rehearsalReason()
}
