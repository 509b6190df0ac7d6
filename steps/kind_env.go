package steps

import (
	"context"
	"os"
	"time"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/labs/tco"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/event"
	stepkind "github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/kinds/deploy"
	"github.com/dpulab/dpulab/steps/kinds/load"
	"github.com/dpulab/dpulab/steps/kinds/vspherecheck"
	"github.com/dpulab/dpulab/steps/results"
)

// kindEnv is the environment the engine gives a kind (steps/kind.Env):
// each method is a narrow door into the engine, which keeps the state
// behind it (hosts prepared, results, saved progress).
type kindEnv struct{ e *Engine }

var (
	_ stepkind.Env  = kindEnv{}
	_ event.Emitter = kindEnv{}
)

func (k kindEnv) Lab() *labs.Lab                       { return k.e.lab }
func (k kindEnv) Rehearsal() string                    { return k.e.Rehearsal() }
func (k kindEnv) Workdir() string                      { return k.e.workdir() }
func (kindEnv) Now() time.Time                         { return time.Now() }
func (kindEnv) After(d time.Duration) <-chan time.Time { return time.After(d) }

func (k kindEnv) HostsOf(roles []string) ([]stepkind.Host, error) { return k.e.hosts.hosts(roles) }

func (k kindEnv) FanOut(ctx context.Context, st *labs.Step, fn func(context.Context, stepkind.Host, runner.Target) error) error {
	return k.e.fanOut(ctx, st, fn)
}

func (k kindEnv) CmdData(h stepkind.Host, vars map[string]string) map[string]any {
	return k.e.cmdData(h, vars)
}

func (k kindEnv) WriteFile(ctx context.Context, h stepkind.Host, t runner.Target, dest string, content []byte, mode os.FileMode, sudo bool) error {
	return k.e.writeOnHost(ctx, h, t, dest, content, mode, sudo)
}

func (k kindEnv) Output(step string) func(runner.Line) { return k.e.emitOutput(step) }

func (k kindEnv) Say(step, host, format string, args ...any) { k.e.say(step, host, format, args...) }

// Emit passes a kind's live event (a bench's progress or second) on to
// the front ends.
func (k kindEnv) Emit(ev event.Live) { k.e.opts.Emit(ev) }

func (k kindEnv) Record(step, host, format string, stdout []string) {
	if read := recorders[format]; read != nil {
		k.e.keepHostFigures(step, host, read(stdout))
	}
}

func (k kindEnv) Compare(step string) *results.Compare {
	k.e.mu.Lock()
	defer k.e.mu.Unlock()
	var c *results.Compare
	for i := range k.e.results.Benches {
		if k.e.results.Benches[i].Step == step {
			cp := k.e.results.Benches[i]
			c = &cp
		}
	}
	return c
}

func (k kindEnv) SetTCO(t *tco.Estimate) error {
	k.e.mu.Lock()
	defer k.e.mu.Unlock()
	k.e.results.TCO = t
	return k.e.writeResultsLocked(false)
}

func (k kindEnv) StopStarted(ctx context.Context) error { return k.e.stopAll(ctx) }

func (k kindEnv) RemoveWorkdir(ctx context.Context, step string) { k.e.sweepRun(ctx, step) }

// The vSphere check's capabilities (steps/kinds/vspherecheck.Env).

var _ vspherecheck.Env = kindEnv{}

func (k kindEnv) VCenterURL() string {
	if inv := k.e.opts.Inventory; inv != nil && inv.VCenter != nil {
		return inv.VCenter.URL
	}
	return ""
}

func (k kindEnv) VSphereNames(host string) (esxi, vm string) {
	if inv := k.e.opts.Inventory; inv != nil {
		if ih, ok := inv.Host(host); ok && ih.ESXi != "" {
			return ih.ESXi, ih.VMName()
		}
	}
	return "", ""
}

func (k kindEnv) VCenter(ctx context.Context, step string) (vspherecheck.Checker, error) {
	c, err := k.e.vcenter(ctx, step)
	if c == nil || err != nil {
		// No typed nil inside the interface.
		return nil, err
	}
	return c, nil
}

func (k kindEnv) Target(ctx context.Context, host string) (runner.Target, error) {
	return k.e.hosts.target(ctx, host)
}

// The deploy kind's capabilities (steps/kinds/deploy.Env).

var _ deploy.Runner = kindEnv{}

func (k kindEnv) Agent(h stepkind.Host) string { return k.e.dpulabOn(h) }

func (k kindEnv) Password() string { return load.Password(k.e.Vars()) }

func (k kindEnv) Prepared(ctx context.Context, h stepkind.Host) (runner.Target, error) {
	t, err := k.Reached(ctx, h)
	if err != nil {
		return nil, err
	}
	if err := k.e.ensureWorkdir(ctx, h, t); err != nil {
		return nil, err
	}
	return t, nil
}

func (k kindEnv) StopGroup(ctx context.Context, group string) error { return k.e.stopGroup(ctx, group) }

func (k kindEnv) ProcRecorder() func(procs ...runner.Proc) error {
	return (&procRecorder{e: k.e}).record
}

// StopUnrecorded ends what carries marker (an instance's log path: this
// instance alone, where a bare directory would also match a-63790 for
// a-6379) or the working directory of an earlier, dead run of this lab
// whose launch was still under way when this run cleaned up after it.
func (k kindEnv) StopUnrecorded(ctx context.Context, t runner.Target, marker string) int {
	markers := []string{marker}
	k.e.mu.Lock()
	markers = append(markers, k.e.swept...)
	k.e.mu.Unlock()
	stopped := 0
	for _, m := range markers {
		if n, err := runner.StopMarked(ctx, t, m, stopGrace, false); err == nil {
			stopped += n
		}
	}
	return stopped
}

func (k kindEnv) Confirm(ctx context.Context, step, host, question string) error {
	return k.e.confirm(ctx, step, host, question)
}

// WaitLimits are deploy.DefaultLimits unless a test shortened them.
func (k kindEnv) WaitLimits() deploy.Limits {
	if k.e.deployWait.Max > 0 {
		return k.e.deployWait
	}
	return deploy.DefaultLimits
}

// Deployed records p's deployment in the saved progress: what the bench
// and compare kinds read, and what a resumed run checks before reusing it.
func (k kindEnv) Deployed(_ context.Context, step string, p deploy.Plan, server string) error {
	e := k.e
	dep := Deployment{Step: step, Group: p.Group, Key: p.Key(), Instances: p.ClientSide(e.workdir()), Server: server}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.state.Deployments == nil {
		e.state.Deployments = map[string]Deployment{}
	}
	e.state.Deployments[p.Group] = dep
	if e.depChecked == nil {
		e.depChecked = map[string]bool{}
	}
	e.depChecked[p.Group] = true
	return e.saveStateLocked()
}
