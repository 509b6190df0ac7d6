package steps

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/runner/vsphere"
	stepkind "github.com/dpulab/dpulab/steps/kind"
)

// A check step with vsphere: (labs/vsphere_check.go) asks vCenter instead
// of running a command: UPTv2 on each VM's adapters (or on none of a
// default-mode VM's), the DPUs of each
// host's ESXi host, network offload on the switches the VMs use. It is the
// check kind's (steps/kinds/command) with a different resolve, wrapped
// here so that the kind stays one registration: the command package's
// init runs before this package's, as Go initialises imports first.
func init() {
	stepkind.Wrap(labs.KindCheck, func(k stepkind.Kind) stepkind.Kind {
		commands := k.Resolve
		k.Resolve = func(env stepkind.Env, st *labs.Step, vars map[string]string) (stepkind.Plan, error) {
			ke, ok := env.(kindEnv)
			if st.VSphere == "" || !ok {
				return commands(env, st, vars)
			}
			p, err := ke.e.resolveVSphereCheck(st, vars)
			if err != nil {
				return nil, err
			}
			return enginePlan{p}, nil
		}
		return k
	})
}

// vsphereCheckPlan is a vsphere: check resolved: per host of its roles,
// the object vCenter is asked about.
type vsphereCheckPlan struct {
	e       *Engine
	st      *labs.Step
	hosts   []hostRef
	targets []vsphere.Target
	// skipIf is the step's skip_if rendered for each host ("" for none).
	skipIf []string
}

func (e *Engine) resolveVSphereCheck(st *labs.Step, vars map[string]string) (*vsphereCheckPlan, error) {
	hosts, err := e.hosts.hosts(st.On)
	if err != nil {
		return nil, err
	}
	p := &vsphereCheckPlan{e: e, st: st, hosts: hosts}
	for _, h := range hosts {
		c := ""
		if st.SkipIf != "" {
			if c, err = labs.RenderCommand(st.SkipIf, e.cmdData(h, vars)); err != nil {
				return nil, fmt.Errorf("step %s: skip_if: %w", st.ID, err)
			}
		}
		p.skipIf = append(p.skipIf, c)
	}
	inv := e.opts.Inventory
	if inv == nil || inv.VCenter == nil {
		// Bare metal (skip_if says so), or vCenter not given: the run
		// fails it with what to add, or where to look instead.
		return p, nil
	}
	for _, h := range hosts {
		t := vsphere.Target{}
		if ih, ok := inv.Host(h.Name); ok && ih.ESXi != "" {
			t = vsphere.Target{VM: ih.VMName()}
			if st.VSphere == labs.VSphereDPUs {
				t = vsphere.Target{Host: ih.ESXi}
			}
		}
		p.targets = append(p.targets, t)
	}
	return p, nil
}

// noVCenter says why a plan without targets asks nothing.
func (p *vsphereCheckPlan) noVCenter() string {
	return fmt.Sprintf("vSphere check %s cannot run: the inventory has no vcenter: section. "+
		"Add one (url, user; the password is asked for) and esxi: on each lab host (README, Lab hosts); to check by hand, look in the vSphere Client at %s",
		p.st.VSphere, vsphereWhere[p.st.VSphere])
}

// vsphereWhere says where the vSphere Client shows what a check reads.
var vsphereWhere = map[string]string{
	labs.VSphereUPTv2:          "the VM's network adapter in Edit Settings (UPT support on, adapter type VMXNET3) and whether UPT is active for it",
	labs.VSphereUPTv2Off:       "the VM's network adapters in Edit Settings: Use UPT Support off on each (default mode keeps the adapter emulated)",
	labs.VSphereDPUs:           "the ESXi host's hardware under its Configure tab, where vSphere 8 lists the host's DPUs",
	labs.VSphereNetworkOffload: "the distributed switch's settings: network offload compatibility set for the DPU (NVIDIA BlueField)",
}

// check is the runner/vsphere check name the step's vsphere: value asks.
func (p *vsphereCheckPlan) check() string {
	if p.st.VSphere == labs.VSphereDPUs {
		return vsphere.CheckDPU
	}
	return p.st.VSphere
}

// commands shows, on each host, the vSphere queries the check makes.
func (p *vsphereCheckPlan) commands() []PlannedCommand {
	var out []PlannedCommand
	for i, h := range p.hosts {
		if p.skipIf[i] != "" {
			out = append(out, PlannedCommand{Host: h.Name, Cmd: p.skipIf[i] + "  # skip_if"})
		}
		if p.targets == nil {
			out = append(out, PlannedCommand{Host: h.Name, Cmd: "# " + p.noVCenter()})
			continue
		}
		if p.targets[i] == (vsphere.Target{}) {
			out = append(out, PlannedCommand{Host: h.Name, Cmd: "# vSphere check " + p.st.VSphere + ": this host has no esxi: in the inventory"})
			continue
		}
		for _, l := range vsphere.Plan(p.e.opts.Inventory.VCenter.URL, p.targets[i:i+1], nil, nil) {
			if strings.Contains(l, "check "+p.check()+":") {
				out = append(out, PlannedCommand{Host: h.Name, Cmd: "# " + l})
			}
		}
	}
	return out
}

// run asks vCenter and says each result; a failed one fails the step
// with its hint. Unknown results (vSphere did not say) are said with what
// to look at, and do not fail it.
func (p *vsphereCheckPlan) run(ctx context.Context) error { return p.ask(ctx, false) }

// Rehearse is run in a rehearsal (--rehearse): the same questions to
// vCenter, but what fails is said as a note and stops nothing, as
// runner/vsphere's doc says. The step is done when every answer passed,
// else skipped with the notes said.
func (p *vsphereCheckPlan) Rehearse(ctx context.Context) error {
	if p.targets == nil {
		p.e.say(p.st.ID, "", "REHEARSAL: vSphere check %s not run: the inventory has no vcenter: section", p.st.VSphere)
		return errSkipped
	}
	err := p.ask(ctx, true)
	if err == nil || errors.Is(err, errSkipped) {
		return err
	}
	msg := err.Error()
	if h := ownHint(err); h != "" {
		msg += " (" + h + ")"
	}
	p.e.say(p.st.ID, "", "REHEARSAL note, not a failure: vSphere check %s: %s", p.st.VSphere, msg)
	return errSkipped
}

// ask asks vCenter and says each result; a failed one fails the step with
// its hint (notes: a rehearsal, where failures are said as notes and the
// step is skipped, not failed).
func (p *vsphereCheckPlan) ask(ctx context.Context, notes bool) error {
	if skip, err := p.skipped(ctx); err != nil || skip {
		if skip {
			p.e.say(p.st.ID, "", "skip_if holds on every host: vSphere check %s not needed", p.st.VSphere)
			return errSkipped
		}
		return err
	}
	if p.targets == nil {
		return errors.New(p.noVCenter())
	}
	c, err := p.e.vcenter(ctx, p.st.ID)
	if err != nil {
		return &StepError{Host: p.e.opts.Inventory.VCenter.URL, Err: err}
	}
	var errs []error
	for i, h := range p.hosts {
		t := p.targets[i]
		if t == (vsphere.Target{}) {
			errs = append(errs, &StepError{Host: h.Name, Err: errors.New("this host has no esxi: in the inventory: add the name vCenter shows for the ESXi host its VM runs on")})
			continue
		}
		var rs []vsphere.Result
		switch p.st.VSphere {
		case labs.VSphereDPUs:
			var r vsphere.Result
			r, _, err = c.CheckDPUs(ctx, t.Host)
			rs = []vsphere.Result{r}
		case labs.VSphereUPTv2:
			rs, err = c.CheckUPTv2(ctx, t.VM)
		case labs.VSphereUPTv2Off:
			rs, err = c.CheckUPTv2Off(ctx, t.VM)
		case labs.VSphereNetworkOffload:
			rs, err = c.CheckNetworkOffload(ctx, t.VM)
		default:
			err = fmt.Errorf("vsphere: %q is not a vSphere check", p.st.VSphere)
		}
		if err != nil {
			errs = append(errs, &StepError{Host: h.Name, Err: err})
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
			p.e.opts.Emit(Output{Step: p.st.ID, Line: runner.Line{Host: h.Name, Stream: stream, Text: text, Time: time.Now()}})
			if r.Status == vsphere.Fail {
				errs = append(errs, &StepError{Host: h.Name, Err: errors.New(r.String())})
			}
		}
	}
	return errors.Join(errs...)
}

// skipped runs skip_if on each host: true when it succeeds on all of them.
func (p *vsphereCheckPlan) skipped(ctx context.Context) (bool, error) {
	if p.st.SkipIf == "" {
		return false, nil
	}
	for i, h := range p.hosts {
		t, err := p.e.hosts.target(ctx, h.Name)
		if err != nil {
			return false, &StepError{Host: h.Name, Err: err}
		}
		res, err := t.Run(ctx, runner.Command{Cmd: p.skipIf[i], Timeout: defaultCmdTimeout})
		if err != nil {
			return false, &StepError{Host: h.Name, Cmd: p.skipIf[i], Err: err}
		}
		if res.ExitCode != 0 {
			return false, nil
		}
	}
	return true, nil
}
