package session

import (
	"errors"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/server/rdma"
	"github.com/dpulab/dpulab/server/transport"
	"github.com/dpulab/dpulab/steps"
)

// hardware fills in what of l's hardware this run lacks, by the rules
// that decide it when the lab runs, asked without running anything: the
// engine's rehearsal rule (steps.RehearsalHere), the transports this
// binary was built with (labs.TransportUses, transport.Available), and,
// with every role on this machine, whether the build's RDMA provider
// finds a device here (rdma.Provider, as `dpulab version` says it).
func (c *EngineCatalog) hardware(l *labs.Lab, in *LabInfo) {
	in.Rehearse = c.Rehearse
	in.Rehearsal = steps.RehearsalHere(l, c.Inventory, c.Rehearse)
	local := c.Inventory == nil || len(c.Inventory.Hosts) == 0
	var provErr error
	var provName string
	for _, u := range labs.TransportUses(l) {
		why := ""
		err := transport.Available(u.Transport)
		switch {
		case errors.Is(err, transport.ErrNotBuilt):
			why = "transport " + string(u.Transport) + " is not in this build"
		case err == nil && u.Transport == transport.RDMA && local:
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
