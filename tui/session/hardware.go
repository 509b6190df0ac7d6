package session

import (
	"strings"

	"github.com/dpulab/dpulab/internal/wire/transportwire"
	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/server/rdma"
	"github.com/dpulab/dpulab/server/transport"
	"github.com/dpulab/dpulab/steps"
)

// hardware fills in what of l's hardware this run lacks, by the rules
// that decide it when the lab runs, asked without running anything: the
// engine's rehearsal rule (steps.RehearsalHere), the transports of the
// binaries that would run each step (labs.TransportUses judged by
// steps.TransportJudge: this program for this machine, the Linux agent
// for lab hosts), and, with every role on this machine, whether the
// build's RDMA provider finds a device here (rdma.Provider, as `dpulab
// version` says it).
func (c *EngineCatalog) hardware(l *labs.Lab, in *LabInfo) {
	in.Rehearse = c.Rehearse
	in.Rehearsal = steps.RehearsalHere(l, c.Inventory, c.Rehearse)
	local := c.Inventory == nil || len(c.Inventory.Hosts) == 0
	judge := steps.TransportJudge(c.Inventory, nil)
	var provErr error
	var provName string
	for _, u := range labs.TransportUses(l) {
		why := ""
		if !transportwire.IsKnown(u.Transport) {
			continue
		}
		cannot, _ := judge(u.Transport)
		switch {
		case cannot != "":
			// The mark is short; the picker's line has the reason.
			why = "transport " + string(u.Transport) + " is not in this build"
			if strings.HasPrefix(cannot, "transport "+string(u.Transport)+": the dpulab agent ") {
				why = "transport " + string(u.Transport) + " is not in the lab hosts' dpulab agent"
			}
		case u.Transport == transport.RDMA && local:
			if provName == "" && provErr == nil {
				provName, provErr = rdma.Provider()
			}
			if provName != "" && provErr != nil {
				why = "no RDMA device usable on this machine"
				in.NoHardware = "no RDMA device usable on this machine (" + provName + ": " + provErr.Error() + ")"
			}
		}
		if why == "" {
			continue
		}
		if in.CannotRunSteps == nil {
			in.CannotRunSteps = map[string]string{}
		}
		if _, ok := in.CannotRunSteps[u.Step]; !ok {
			in.CannotRunSteps[u.Step] = why
		}
	}
}
