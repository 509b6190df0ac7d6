// Package vspherecheck is the check kind's vsphere: form: a check step
// that asks vCenter instead of running a command: `vsphere:
// uptv2|uptv2-off|dpus|network-offload` checks, through vCenter (the
// inventory's vcenter: section; runner/vsphere), UPTv2 on each VM's
// vmxnet3 adapters (or on none of a default-mode VM's), the DPUs of each
// host's ESXi host, network offload on the distributed switch the VM's
// adapters use. It wraps the check kind (steps/kinds/command), so that the
// kind stays one registration, in labs (the vsphere: key, Spec) and in the
// engine, and asks the engine for vCenter through Env, a capability beside
// kind.Env.
package vspherecheck

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/runner/vsphere"
	"github.com/dpulab/dpulab/steps/kind"
	_ "github.com/dpulab/dpulab/steps/kinds/command" // registers the check kind this wraps
)

// The vSphere checks, the values of a check step's vsphere: key.
const (
	UPTv2          = "uptv2"
	UPTv2Off       = "uptv2-off"
	DPUs           = "dpus"
	NetworkOffload = "network-offload"
)

// Checks lists them.
var Checks = []string{UPTv2, UPTv2Off, DPUs, NetworkOffload}

// Spec is a check step's vsphere: key, kept in labs.Step.Spec when it is
// set.
type Spec struct {
	// Check is one of Checks.
	Check string
}

// checkOf is st's vsphere: ("" for a check that runs a command).
func checkOf(st *labs.Step) string {
	if sp, ok := st.Spec.(*Spec); ok {
		return sp.Check
	}
	return ""
}

// parse reads a check step: verify: (a command, the check kind's own
// syntax) or vsphere: (a query of vCenter), one of the two.
func parse(base func(*labs.StepParser, *labs.Step)) func(*labs.StepParser, *labs.Step) {
	return func(sp *labs.StepParser, s *labs.Step) {
		if !sp.Has("vsphere") {
			if s.Verify == nil {
				sp.Errorf("", "a check step needs verify: {run: COMMAND, ...} (or vsphere: %s)", strings.Join(Checks, "|"))
				return
			}
			if base != nil {
				base(sp, s)
			}
			return
		}
		c := sp.String("vsphere")
		if !slices.Contains(Checks, c) {
			sp.Errorf("vsphere", "vsphere: %q is not a vSphere check: use one of %s", c, strings.Join(Checks, ", "))
		}
		if s.Verify != nil || len(s.Run) > 0 || s.Sudo {
			sp.Errorf("vsphere", "a check step with vsphere: asks vCenter, it runs no command of its own: remove verify: and sudo: (skip_if: still runs on the host)")
		}
		s.Spec = &Spec{Check: c}
	}
}

// Env is what a vSphere check needs beside kind.Env: the engine's
// kindEnv implements it.
type Env interface {
	kind.Env
	// VCenterURL is the inventory's vCenter ("" when it has none).
	VCenterURL() string
	// VSphereNames are host's ESXi host and VM as vCenter names them (esxi
	// empty when the inventory gives none).
	VSphereNames(host string) (esxi, vm string)
	// VCenter is the run's vCenter session, dialled on first use (the
	// password asked for once).
	VCenter(ctx context.Context, step string) (Checker, error)
	// Target is host's target, reached but not prepared (nothing of the
	// lab is made there for a check that asks vCenter).
	Target(ctx context.Context, host string) (runner.Target, error)
}

// Checker is what a check asks vCenter (runner/vsphere.Client).
type Checker interface {
	CheckDPUs(ctx context.Context, hostName string) (vsphere.Result, []vsphere.DPU, error)
	CheckUPTv2(ctx context.Context, vmName string) ([]vsphere.Result, error)
	CheckUPTv2Off(ctx context.Context, vmName string) ([]vsphere.Result, error)
	CheckNetworkOffload(ctx context.Context, vmName string) ([]vsphere.Result, error)
}

var _ Checker = (*vsphere.Client)(nil)

func init() {
	labs.WrapKind(labs.KindCheck, func(syn labs.KindSyntax) labs.KindSyntax {
		syn.Keys = append(slices.Clone(syn.Keys), "vsphere")
		syn.Parse = parse(syn.Parse)
		syn.Encode = func(s *labs.Step, m *labs.StepEncoder) {
			m.Opt("vsphere", checkOf(s))
		}
		return syn
	})
	kind.Wrap(labs.KindCheck, func(k kind.Kind) kind.Kind {
		commands := k.Resolve
		k.Resolve = func(env kind.Env, st *labs.Step, vars map[string]string) (kind.Plan, error) {
			if checkOf(st) == "" {
				return commands(env, st, vars)
			}
			venv, ok := env.(Env)
			if !ok {
				return nil, fmt.Errorf("step %s: vSphere check %s: this run cannot reach vCenter", st.ID, checkOf(st))
			}
			return resolve(venv, st, vars)
		}
		return k
	})
}

// plan is a vsphere: check resolved: per host of its roles,
// the object vCenter is asked about.
type plan struct {
	env Env
	st  *labs.Step
	// name is the step's vsphere: check (one of Checks).
	name    string
	hosts   []kind.Host
	targets []vsphere.Target
	// skipIf is the step's skip_if rendered for each host ("" for none).
	skipIf []string
}

func resolve(env Env, st *labs.Step, vars map[string]string) (*plan, error) {
	hosts, err := env.HostsOf(st.On)
	if err != nil {
		return nil, err
	}
	p := &plan{env: env, st: st, name: checkOf(st), hosts: hosts}
	for _, h := range hosts {
		c := ""
		if st.SkipIf != "" {
			if c, err = labs.RenderCommand(st.SkipIf, env.CmdData(h, vars)); err != nil {
				return nil, fmt.Errorf("step %s: skip_if: %w", st.ID, err)
			}
		}
		p.skipIf = append(p.skipIf, c)
	}
	if env.VCenterURL() == "" {
		// Bare metal (skip_if says so), or vCenter not given: the run
		// fails it with what to add, or where to look instead.
		return p, nil
	}
	for _, h := range hosts {
		t := vsphere.Target{}
		if esxi, vm := env.VSphereNames(h.Name); esxi != "" {
			t = vsphere.Target{VM: vm}
			if p.name == DPUs {
				t = vsphere.Target{Host: esxi}
			}
		}
		p.targets = append(p.targets, t)
	}
	return p, nil
}

// noVCenter says why a plan without targets asks nothing.
func (p *plan) noVCenter() string {
	return fmt.Sprintf("vSphere check %s cannot run: the inventory has no vcenter: section. "+
		"Add one (url, user; the password is asked for) and esxi: on each lab host (README, Lab hosts); to check by hand, look in the vSphere Client at %s",
		p.name, vsphereWhere[p.name])
}

// vsphereWhere says where the vSphere Client shows what a check reads.
var vsphereWhere = map[string]string{
	UPTv2:          "the VM's network adapter in Edit Settings (UPT support on, adapter type VMXNET3) and whether UPT is active for it",
	UPTv2Off:       "the VM's network adapters in Edit Settings: Use UPT Support off on each (default mode keeps the adapter emulated)",
	DPUs:           "the ESXi host's hardware under its Configure tab, where vSphere 8 lists the host's DPUs",
	NetworkOffload: "the distributed switch's settings: network offload compatibility set for the DPU (NVIDIA BlueField)",
}

// check is the runner/vsphere check name the step's vsphere: value asks.
func (p *plan) check() string {
	if p.name == DPUs {
		return vsphere.CheckDPU
	}
	return p.name
}

// Commands shows, on each host, the vSphere queries the check makes.
func (p *plan) Commands() []kind.PlannedCommand {
	var out []kind.PlannedCommand
	for i, h := range p.hosts {
		if p.skipIf[i] != "" {
			out = append(out, kind.PlannedCommand{Host: h.Name, Cmd: p.skipIf[i] + "  # skip_if"})
		}
		if p.targets == nil {
			out = append(out, kind.PlannedCommand{Host: h.Name, Cmd: "# " + p.noVCenter()})
			continue
		}
		if p.targets[i] == (vsphere.Target{}) {
			out = append(out, kind.PlannedCommand{Host: h.Name, Cmd: "# vSphere check " + p.name + ": this host has no esxi: in the inventory"})
			continue
		}
		for _, l := range vsphere.Plan(p.env.VCenterURL(), p.targets[i:i+1], nil, nil) {
			if strings.Contains(l, "check "+p.check()+":") {
				out = append(out, kind.PlannedCommand{Host: h.Name, Cmd: "# " + l})
			}
		}
	}
	return out
}

// Run asks vCenter and says each result; a failed one fails the step
// with its hint. Unknown results (vSphere did not say) are said with what
// to look at, and do not fail it.
func (p *plan) Run(ctx context.Context) error { return p.ask(ctx, false) }

// Rehearse is run in a rehearsal (--rehearse): the same questions to
// vCenter, but what fails is said as a note and stops nothing, as
// runner/vsphere's doc says. The step is done when every answer passed,
// else skipped with the notes said.
func (p *plan) Rehearse(ctx context.Context) error {
	if p.targets == nil {
		p.env.Say(p.st.ID, "", "REHEARSAL: vSphere check %s not run: the inventory has no vcenter: section", p.name)
		return kind.ErrSkipped
	}
	err := p.ask(ctx, true)
	if err == nil || errors.Is(err, kind.ErrSkipped) {
		return err
	}
	msg := err.Error()
	if h := ownHint(err); h != "" {
		msg += " (" + h + ")"
	}
	p.env.Say(p.st.ID, "", "REHEARSAL note, not a failure: vSphere check %s: %s", p.name, msg)
	return kind.ErrSkipped
}

// ask asks vCenter and says each result; a failed one fails the step with
// its hint (notes: a rehearsal, where failures are said as notes and the
// step is skipped, not failed).
func (p *plan) ask(ctx context.Context, notes bool) error {
	if skip, err := p.skipped(ctx); err != nil || skip {
		if skip {
			p.env.Say(p.st.ID, "", "skip_if holds on every host: vSphere check %s not needed", p.name)
			return kind.ErrSkipped
		}
		return err
	}
	if p.targets == nil {
		return errors.New(p.noVCenter())
	}
	c, err := p.env.VCenter(ctx, p.st.ID)
	if err != nil {
		return &kind.StepError{Host: p.env.VCenterURL(), Err: err}
	}
	var errs []error
	for i, h := range p.hosts {
		t := p.targets[i]
		if t == (vsphere.Target{}) {
			errs = append(errs, &kind.StepError{Host: h.Name, Err: errors.New("this host has no esxi: in the inventory: add the name vCenter shows for the ESXi host its VM runs on")})
			continue
		}
		var rs []vsphere.Result
		switch p.name {
		case DPUs:
			var r vsphere.Result
			r, _, err = c.CheckDPUs(ctx, t.Host)
			rs = []vsphere.Result{r}
		case UPTv2:
			rs, err = c.CheckUPTv2(ctx, t.VM)
		case UPTv2Off:
			rs, err = c.CheckUPTv2Off(ctx, t.VM)
		case NetworkOffload:
			rs, err = c.CheckNetworkOffload(ctx, t.VM)
		default:
			err = fmt.Errorf("vsphere: %q is not a vSphere check", p.name)
		}
		if err != nil {
			errs = append(errs, &kind.StepError{Host: h.Name, Err: err})
			continue
		}
		for _, r := range rs {
			stream := runner.Stdout
			if r.Status == vsphere.Fail || r.Status == vsphere.Unknown {
				stream = runner.Stderr
			}
			text := r.String()
			if notes && stream == runner.Stderr {
				text = "REHEARSAL note: " + text
			}
			p.env.Output(p.st.ID)(runner.Line{Host: h.Name, Stream: stream, Text: text, Time: p.env.Now()})
			if r.Status == vsphere.Fail {
				errs = append(errs, &kind.StepError{Host: h.Name, Err: errors.New(r.String())})
			}
		}
	}
	return errors.Join(errs...)
}

// skipped runs skip_if on each host: true when it succeeds on all of them.
func (p *plan) skipped(ctx context.Context) (bool, error) {
	if p.st.SkipIf == "" {
		return false, nil
	}
	for i, h := range p.hosts {
		t, err := p.env.Target(ctx, h.Name)
		if err != nil {
			return false, &kind.StepError{Host: h.Name, Err: err}
		}
		res, err := t.Run(ctx, runner.Command{Cmd: p.skipIf[i], Timeout: kind.DefaultCmdTimeout})
		if err != nil {
			return false, &kind.StepError{Host: h.Name, Cmd: p.skipIf[i], Err: err}
		}
		if res.ExitCode != 0 {
			return false, nil
		}
	}
	return true, nil
}

// ownHint is the hint an error carries for the person (runner/vsphere's).
func ownHint(err error) string {
	var h interface{ Hint() string }
	if errors.As(err, &h) {
		return h.Hint()
	}
	return ""
}
