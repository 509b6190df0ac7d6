package steps

import (
	"context"
	"os"
	"time"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/labs/tco"
	"github.com/dpulab/dpulab/runner"
	stepkind "github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/kinds/deploy"
	"github.com/dpulab/dpulab/steps/kinds/vspherecheck"
	"github.com/dpulab/dpulab/steps/results"
)

// kindEnv is the environment the engine gives a kind (steps/kind.Env):
// each method is a narrow door into the engine, which keeps the state
// behind it (hosts prepared, results, saved progress).
type kindEnv struct{ e *Engine }

var _ stepkind.Env = kindEnv{}

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

var _ deploy.Env = kindEnv{}

func (k kindEnv) Agent(h stepkind.Host) string { return k.e.dpulabOn(h) }

func (k kindEnv) Password() string { return benchPassword(k.e.Vars()) }
