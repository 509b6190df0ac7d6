package steps

import (
	"context"
	"fmt"
	"time"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/kinds/load"
)

// Software RDMA: Soft-RoCE (the kernel's rdma_rxe) and soft-iWARP (siw)
// give an ordinary network interface an RDMA device, so the RDMA lab runs
// on any Linux VM. Its figures measure the kernel's RDMA stack on the CPU,
// not RDMA hardware, and are labelled so (results.Results.SoftwareRDMA,
// results.RunKind) everywhere.
//
// How it is found: before the first bench over transport rdma, the engine
// lists the RDMA devices of the bench's client and server hosts, once per
// host and run. A software device is one the kernel registered without a
// parent bus: its sysfs node resolves under /sys/devices/virtual/ (rxe0 →
// /sys/devices/virtual/infiniband/rxe0), where a NIC's resolves under its
// PCI path. This asks the kernel, not the device's name, which a person
// chooses (rdma link add NAME type rxe). It is the engine's, not a lab
// step's, so every lab with an RDMA bench gets it and no lab can forget it.
//
// A host with software devices is taken to have run its RDMA over them,
// even when it has a hardware device too (which one a connection used
// follows its addresses, which this does not trace): the label then says
// so. Labelling a hardware run as software is the safe mistake.

// sysfsRoot is where the RDMA probe reads sysfs (Options.SysfsRoot).
func (e *Engine) sysfsRoot() string {
	if e.opts.SysfsRoot != "" {
		return e.opts.SysfsRoot
	}
	return "/sys"
}

// probeRDMADevices lists h's RDMA devices, asked once per run.
func (e *Engine) probeRDMADevices(ctx context.Context, h hostRef) ([]load.RDMADevice, error) {
	e.mu.Lock()
	devs, ok := e.rdmaDevs[h.Name]
	e.mu.Unlock()
	if ok {
		return devs, nil
	}
	t, err := e.hosts.target(ctx, h.Name)
	if err != nil {
		return nil, err
	}
	var lines []string
	res, err := t.Run(ctx, runner.Command{Cmd: load.RDMADevicesScript(e.sysfsRoot()), Timeout: 15 * time.Second, Output: func(l runner.Line) {
		if l.Stream == runner.Stdout {
			lines = append(lines, l.Text)
		}
	}})
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 {
		return nil, fmt.Errorf("listing RDMA devices: exit status %d", res.ExitCode)
	}
	devs = load.ParseRDMADevices(lines)
	e.mu.Lock()
	if e.rdmaDevs == nil {
		e.rdmaDevs = map[string][]load.RDMADevice{}
	}
	e.rdmaDevs[h.Name] = devs
	e.mu.Unlock()
	return devs, nil
}

// noteSoftwareRDMA probes the hosts of an RDMA bench and, when any of them
// has software RDMA devices, labels the run (results.SoftwareRDMA) and
// tells the views (SoftwareRDMAFound). A host that
// cannot be asked is said and skipped: the bench itself will tell whether
// it has RDMA at all.
func (e *Engine) noteSoftwareRDMA(ctx context.Context, step string, hosts []hostRef) {
	for _, h := range hosts {
		e.mu.Lock()
		_, done := e.rdmaDevs[h.Name]
		e.mu.Unlock()
		if done {
			continue
		}
		if _, err := e.probeRDMADevices(ctx, h); err != nil {
			e.say(step, h.Name, "could not list the RDMA devices here, to tell software RDMA from hardware: %v", err)
			continue
		}
		e.mu.Lock()
		e.rdmaHosts = append(e.rdmaHosts, h.Name)
		e.mu.Unlock()
	}
	e.mu.Lock()
	devs := load.SoftwareRDMAText(e.rdmaHosts, e.rdmaDevs)
	changed := devs != "" && e.results != nil && e.results.SoftwareRDMA != devs
	if changed {
		e.results.SoftwareRDMA = devs
	}
	e.mu.Unlock()
	if changed {
		e.opts.Emit(SoftwareRDMAFound{Step: step, Devices: devs})
	}
}

// SoftwareRDMA names the software RDMA devices this run's RDMA benches
// went through ("rxe0 on server, rxe1 on client"), "" when none did.
func (e *Engine) SoftwareRDMA() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.results == nil {
		return ""
	}
	return e.results.SoftwareRDMA
}
