package load

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/dpulab/dpulab/runner/netpath"
	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/results"
)

// Runner is what a load step's run asks of the engine beside Env: the
// emulated network paths around a variant, and what measuring one job
// asks (Measurer: the deployments, the hosts, the probes of their
// hardware, the results writer).
type Runner interface {
	Env
	Paths
	Measurer
}

// Paths are the emulated network paths (runner/netpath) a variant runs
// over, recorded in saved progress before they are made and forgotten
// after their teardown, so cleanup and resume find them.
type Paths interface {
	// StartPath makes job j's path on client's host. skip says why the
	// host cannot make it (not root, no nft, no overlay module): the
	// variant is then listed unavailable, not run.
	StartPath(ctx context.Context, step string, client kind.Host, j Job) (p *netpath.Path, skip string, err error)
	// TeardownPath stops group's servers and removes p, even when ctx
	// is cancelled.
	TeardownPath(ctx context.Context, step, group string, p *netpath.Path) error
}

// ErrStopStep is what a StopStep error is (errors.Is).
var ErrStopStep = errors.New("stop the step")

// StopStep wraps an error that ends the step at once (the deployment or
// the reachability check failed: every later job would fail the same
// way).
type StopStep struct{ Err error }

func (s StopStep) Error() string        { return s.Err.Error() }
func (s StopStep) Unwrap() error        { return s.Err }
func (s StopStep) Is(target error) bool { return target == ErrStopStep }

// Run runs every job, writing the results after every finished repetition
// (measurement.job) and at the end. A variant no host plays, or whose transport
// the hosts' dpulab lacks, or whose path the host cannot make, is listed
// unavailable and not run. A failed variant does not stop the others
// (their numbers still count), but the step fails; a cancelled run stops
// at once, after the running variant's path is torn down.
func (p *Plan) Run(ctx context.Context) error {
	r, ok := p.Env.(Runner)
	if !ok {
		return fmt.Errorf("step %s: the %s kind runs only where the engine gives it a load.Runner", p.Step.ID, p.Step.Kind)
	}
	st, client := p.Step, p.Client
	res := results.Compare{Step: st.ID, Title: st.Title, Sweep: p.SweepVar, Client: client.Name, Clients: HostNames(p.Clients)}
	for _, v := range p.Variants {
		res.Variants = append(res.Variants, results.VariantResult{Label: v.Label, Description: v.Description})
	}
	unavailable := func(label, why string) {
		if !slices.ContainsFunc(res.Unavailable, func(u results.Unavailable) bool { return u.Label == label }) {
			res.Unavailable = append(res.Unavailable, results.Unavailable{Label: label, Reason: why})
			r.Say(st.ID, client.Name, "variant %q not run: %s", label, why)
		}
	}
	m := &measurement{p: p, r: r, stepStart: r.Now(), res: &res}
	var errs []error
	for n, j := range p.Jobs {
		variant := p.Variants[j.VI]
		if why := cmp.Or(j.NoHost, j.NotBuilt); why != "" {
			unavailable(variant.Label, why)
			continue
		}
		var path *netpath.Path
		if j.Path != nil {
			var skip string
			var err error
			path, skip, err = r.StartPath(ctx, st.ID, client, j)
			if err != nil {
				if ctx.Err() != nil {
					return err
				}
				errs = append(errs, fmt.Errorf("variant %s: %w", variant.Label, err))
				continue
			}
			if skip != "" {
				unavailable(variant.Label, skip)
				continue
			}
		}
		err := m.job(ctx, n, path)
		if path != nil {
			if terr := r.TeardownPath(ctx, st.ID, j.Group, path); terr != nil && err == nil {
				err = terr
			}
		}
		if err != nil {
			if errors.Is(err, ErrStopStep) {
				return errors.Unwrap(err)
			}
			if ctx.Err() != nil {
				return err
			}
			errs = append(errs, err)
		}
	}
	results.ComputeDeltas(&res)
	werr := r.PutCompare(res)
	if len(errs) > 0 {
		return errs[0]
	}
	if len(res.Unavailable) == len(p.Variants) {
		r.Say(st.ID, client.Name, "no variant of this step can run here: skipped")
		return kind.ErrSkipped
	}
	return werr
}
