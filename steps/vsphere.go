package steps

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/runner/vsphere"
	"github.com/dpulab/dpulab/steps/results"
)

// The engine's side of vSphere (runner/vsphere): one logged-in vCenter
// session per run, opened when a bench first needs it, the password asked
// through the engine's prompt path (a PromptSecret, never argv, a file or
// a log), the certificate's thumbprint pinned as an SSH host key is; and
// the source of the ESXi hosts' points of a bench job's server hosts
// (kindEnv.VSphere), which steps/kinds/load joins to the job's series as
// the host (ESXi) metrics of steps/results.

// vcenterConn is the run's vCenter session (zero value: not dialled).
type vcenterConn struct {
	mu     sync.Mutex
	client *vsphere.Client
	// tail and poll, when set, replace load.DefaultHostMetricsTail and
	// the sampler's default poll (tests against the simulator).
	tail, poll time.Duration
}

// vcenter returns the run's vCenter session, dialling it on first use; nil
// without an error when the inventory has no vcenter section.
func (e *Engine) vcenter(ctx context.Context, step string) (*vsphere.Client, error) {
	inv := e.opts.Inventory
	if inv == nil || inv.VCenter == nil {
		return nil, nil
	}
	e.vc.mu.Lock()
	defer e.vc.mu.Unlock()
	if e.vc.client != nil {
		return e.vc.client, nil
	}
	cfg := vsphere.FromInventory(inv.VCenter, func(ctx context.Context, prompt string) (string, error) {
		noPw := vsphere.NoPasswordError(inv.VCenter.URL, inv.VCenter.User, inv.VCenter.PasswordEnv)
		a, err := e.ask(ctx, Prompt{Step: step, Type: PromptSecret, Host: inv.VCenter.URL, Message: prompt, Fix: noPw.Fix})
		if err != nil {
			return "", fmt.Errorf("no answer to %q: %w", prompt, err)
		}
		if a.NoTerminal {
			return "", noPw
		}
		if a.Choice == "cancel" {
			return "", errors.New("vCenter password: cancelled")
		}
		return a.Secret, nil
	})
	cfg.AcceptNew = e.opts.AcceptNewHostKeys
	if e.opts.StateDir != "" {
		cfg.KnownThumbprints = filepath.Join(e.opts.StateDir, vsphere.KnownThumbprintsName)
	}
	c, err := vsphere.Dial(ctx, cfg)
	var te *vsphere.ThumbprintError
	if errors.As(err, &te) && te.Unknown() && !cfg.AcceptNew {
		// First use: show the thumbprint and ask, as for an SSH host key.
		a, aerr := e.ask(ctx, Prompt{Step: step, Type: PromptHostKey, Host: te.Address,
			Message:     fmt.Sprintf("vCenter %s is not known yet. Compare its certificate's thumbprint with the one vCenter shows (vSphere Client: Administration > Certificates).", te.Address),
			KeyType:     "TLS certificate SHA-256",
			Fingerprint: te.Got,
			Choices:     []string{"once", "save", "refuse"},
		})
		switch {
		case aerr != nil:
			return nil, fmt.Errorf("%w (no answer: %v)", err, aerr)
		case a.Choice == "save":
			cfg.Approved = te.Got
		case a.Choice == "once":
			cfg.Thumbprint = te.Got
		default:
			return nil, err
		}
		c, err = vsphere.Dial(ctx, cfg)
	}
	if err != nil {
		return nil, err
	}
	e.opts.Emit(Output{Step: step, Line: runner.Line{Host: c.Address(), Text: "vSphere figures and checks from: " + c.Origin().Label(), Time: time.Now()}})
	if c.Accepted() {
		e.opts.Emit(Output{Step: step, Line: runner.Line{Host: c.Address(), Text: fmt.Sprintf("vCenter %s: certificate thumbprint %s saved as trusted", c.Address(), c.Thumbprint()), Time: time.Now()}})
	}
	e.vc.client = c
	return c, nil
}

// keepHostMetricsSource records in the results where a bench step's host
// (ESXi) figures come from: vCenter's url and version (SIMULATED for
// govmomi's simulator), the ESXi hosts and VMs read; a step's later jobs
// (sweep points, variants) add their hosts to its entry.
func (e *Engine) keepHostMetricsSource(step string, o vsphere.Origin, hosts, vms []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.results == nil {
		return
	}
	src := &results.HostMetricsSource{Step: step, VCenter: o.URL}
	found := false
	for i := range e.results.HostMetricsFrom {
		if s := &e.results.HostMetricsFrom[i]; s.Step == step && s.VCenter == o.URL {
			src, found = s, true
		}
	}
	src.Product, src.Version, src.Build, src.Simulated = o.Product, o.Version, o.Build, o.Simulated
	if o.Simulated {
		src.Simulator = vsphere.SimulatorProduct
	}
	for _, h := range hosts {
		if !slices.Contains(src.ESXiHosts, h) {
			src.ESXiHosts = append(src.ESXiHosts, h)
		}
	}
	for _, v := range vms {
		if !slices.Contains(src.VMs, v) {
			src.VMs = append(src.VMs, v)
		}
	}
	if !found {
		e.results.HostMetricsFrom = append(e.results.HostMetricsFrom, *src)
	}
}

// ownHint is the fix an error carries itself (a *vsphere.Error's, a
// refused certificate's): it replaces the step's hint, written for what
// the step checks, not for failing to ask.
func ownHint(err error) string {
	var h interface{ Hint() string }
	if errors.As(err, &h) {
		return h.Hint()
	}
	return ""
}

// closeVCenter logs the run's vCenter session out (every exit path: the
// engine's Cleanup calls it).
func (e *Engine) closeVCenter(ctx context.Context) {
	e.vc.mu.Lock()
	c := e.vc.client
	e.vc.client = nil
	e.vc.mu.Unlock()
	if c != nil {
		if err := c.Close(ctx); err != nil {
			e.opts.Emit(Output{Line: runner.Line{Host: c.Address(), Stream: runner.Stderr, Text: err.Error(), Time: time.Now()}})
		}
	}
}

// esxiHosts lists the distinct ESXi hosts (inventory esxi:) of hosts.
func (e *Engine) esxiHosts(hosts []hostRef) []string {
	return e.vsphereNames(hosts, func(h runner.Host) string { return h.ESXi })
}

// serverVMs lists the distinct VMs (inventory vm:) of those of hosts that
// run on an ESXi host the sampler reads: their network use is read too.
func (e *Engine) serverVMs(hosts []hostRef) []string {
	return e.vsphereNames(hosts, func(h runner.Host) string {
		if h.ESXi == "" {
			return ""
		}
		return h.VM
	})
}

// vsphereNames lists the distinct non-empty names that name gives the
// inventory entries of hosts, in the order of hosts; nil without a vCenter.
func (e *Engine) vsphereNames(hosts []hostRef, name func(runner.Host) string) []string {
	inv := e.opts.Inventory
	if inv == nil || inv.VCenter == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, h := range hosts {
		ih, ok := inv.Host(h.Name)
		if !ok {
			continue
		}
		if n := name(ih); n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
