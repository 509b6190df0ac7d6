package load

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/runner/netpath"
	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/results"
)

// fakeRunner is a load.Runner without an engine: each job's measurement
// is a scripted list of repetitions, appended to the compare and written
// after each one as the engine's is; paths are recorded, not made.
type fakeRunner struct {
	fakeEnv
	mu sync.Mutex
	// runs is each job's repetitions' ops/s, by job label.
	runs map[string][]float64
	// fail makes a job's measurement fail, by label.
	fail map[string]error
	// block makes a job's measurement wait for its context, by label;
	// started is closed when it begins.
	block   string
	started chan struct{}
	// skipPath is StartPath's skip reason ("" makes the path).
	skipPath string

	measured []string
	written  []results.Compare
	made     []string
	torn     []string
}

var _ Runner = (*fakeRunner)(nil)

// Reached is h's fake target (kindtest's), which answers as Handle says.
func (f *fakeRunner) Reached(_ context.Context, h kind.Host) (runner.Target, error) {
	return f.Target(h.Name), nil
}

func (f *fakeRunner) StartPath(_ context.Context, step string, client kind.Host, j Job) (*netpath.Path, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.skipPath != "" {
		return nil, f.skipPath, nil
	}
	f.made = append(f.made, j.Label)
	return &netpath.Path{Host: client.Name, RunID: j.Label}, "", nil
}

func (f *fakeRunner) TeardownPath(ctx context.Context, step, group string, p *netpath.Path) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.torn = append(f.torn, p.RunID)
	return nil
}

func (f *fakeRunner) Measure(ctx context.Context, p *Plan, n int, path *netpath.Path, res *results.Compare, _ time.Time) error {
	j := p.Jobs[n]
	f.mu.Lock()
	f.measured = append(f.measured, j.Label)
	f.mu.Unlock()
	if j.Label == f.block {
		close(f.started)
		<-ctx.Done()
		return ctx.Err()
	}
	if err := f.fail[j.Label]; err != nil {
		return err
	}
	vr := &res.Variants[j.VI]
	vr.Points = append(vr.Points, results.SweepPoint{Value: j.Sweep})
	pt := &vr.Points[len(vr.Points)-1]
	for i, ops := range f.runs[j.Label] {
		pt.Runs = append(pt.Runs, results.RunResult{Run: i + 1, OpsPerSec: ops})
		pt.Stats = results.Summarize(pt.Runs)
		if err := f.PutCompare(*res); err != nil {
			return err
		}
	}
	return nil
}

func (f *fakeRunner) PutCompare(c results.Compare) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.written = append(f.written, MeasuredOnly(c))
	return nil
}

// TestRunWritesEveryRepetition: a compare's run measures every job in
// order and the results are written after every repetition, then once
// more at the end with the deltas; the last write holds every variant's
// figures at every sweep value.
func TestRunWritesEveryRepetition(t *testing.T) {
	env, st := newCompare(t)
	p, err := Resolve(env, st, map[string]string{"instances": "1"})
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeRunner{fakeEnv: env, runs: map[string][]float64{}}
	for _, j := range p.Jobs {
		f.runs[j.Label] = []float64{1000, 1100, 1200}
	}
	p.Env = f
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(f.measured) != 6 || f.measured[0] != "tcp, instances=1" || f.measured[5] != "rdma, instances=4" {
		t.Errorf("measured %v", f.measured)
	}
	if len(f.written) != 6*3+1 {
		t.Fatalf("%d writes, want one per repetition (18) and the last", len(f.written))
	}
	first := f.written[0]
	if got := len(first.Variants[0].Points); got != 1 || len(first.Variants[0].Points[0].Runs) != 1 {
		t.Errorf("the first write holds %d points: want the first repetition alone", got)
	}
	last := f.written[len(f.written)-1]
	if last.Step != "compare" || last.Sweep != "instances" || last.Client != "c1" {
		t.Errorf("last write %+v", last)
	}
	for _, v := range last.Variants {
		if len(v.Points) != 3 {
			t.Errorf("variant %s: %d sweep points, want 3", v.Label, len(v.Points))
			continue
		}
		for _, pt := range v.Points {
			if len(pt.Runs) != 3 || pt.Stats.OpsPerSec.Mean != 1100 {
				t.Errorf("variant %s at %s: %d runs, mean %v", v.Label, pt.Value, len(pt.Runs), pt.Stats.OpsPerSec.Mean)
			}
		}
	}
}

// TestRunSkipsWhatTheHostsLack: a variant whose transport the hosts'
// dpulab lacks is listed unavailable once, with the reason, said once,
// and never measured; the other variant runs. When every variant is
// unavailable the step is skipped.
func TestRunSkipsWhatTheHostsLack(t *testing.T) {
	env, st := newCompare(t)
	env.lacks = map[string]string{"rdma": "transport rdma is not in this build"}
	p, err := Resolve(env, st, map[string]string{"instances": "1"})
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeRunner{fakeEnv: env, runs: map[string][]float64{}}
	p.Env = f
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, m := range f.measured {
		if strings.HasPrefix(m, "rdma") {
			t.Errorf("measured %q, whose transport the hosts lack", m)
		}
	}
	if len(f.measured) != 3 {
		t.Errorf("measured %v, want the tcp variant at 3 sweep values", f.measured)
	}
	last := f.written[len(f.written)-1]
	if len(last.Unavailable) != 1 || last.Unavailable[0].Label != "rdma" || !strings.Contains(last.Unavailable[0].Reason, "not in this build") {
		t.Errorf("unavailable %+v", last.Unavailable)
	}
	if len(last.Variants) != 1 || last.Variants[0].Label != "tcp" {
		t.Errorf("the results show %+v; want tcp alone (rdma listed unavailable)", last.Variants)
	}
	said := 0
	for _, l := range env.Lines() {
		if strings.Contains(l.Text, `variant "rdma" not run: c1: transport rdma is not in this build`) {
			said++
		}
	}
	if said != 1 {
		t.Errorf("said %d times that rdma is not run, want once: %+v", said, env.Lines())
	}

	env.lacks["tcp"] = "no tcp here"
	p, err = Resolve(env, st, map[string]string{"instances": "1"})
	if err != nil {
		t.Fatal(err)
	}
	f = &fakeRunner{fakeEnv: env}
	p.Env = f
	if err := p.Run(context.Background()); !errors.Is(err, kind.ErrSkipped) || len(f.measured) != 0 {
		t.Errorf("nothing can run: %v, measured %v; want skipped", err, f.measured)
	}
}

// TestRunCancelledTearsThePathDown: cancelling the run while a variant
// runs over an emulated path stops the step with the context's error,
// tears that path down, and runs no later job.
func TestRunCancelledTearsThePathDown(t *testing.T) {
	env, st := newCompare(t)
	p, err := Resolve(env, st, map[string]string{"instances": "1"})
	if err != nil {
		t.Fatal(err)
	}
	// The plan's second job runs over a path (as an emulated variant's
	// does: planned by the engine's netpath.Plan).
	p.Jobs[1].Path = &netpath.Path{Host: "c1"}
	f := &fakeRunner{fakeEnv: env, runs: map[string][]float64{"tcp, instances=1": {1}}, block: p.Jobs[1].Label, started: make(chan struct{})}
	p.Env = f
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	<-f.started
	cancel()
	err = <-done
	if !errors.Is(err, context.Canceled) {
		t.Errorf("run ended with %v, want the cancellation", err)
	}
	if len(f.made) != 1 || len(f.torn) != 1 || f.torn[0] != f.made[0] {
		t.Errorf("paths made %v, torn down %v: want the one made torn down", f.made, f.torn)
	}
	if len(f.measured) != 2 {
		t.Errorf("measured %v after the cancel, want no job after the cancelled one", f.measured)
	}
}

// TestRunPathTheHostCannotMake: a variant whose path the host cannot
// make (not root) is listed unavailable, not failed.
func TestRunPathTheHostCannotMake(t *testing.T) {
	env, st := newCompare(t)
	p, err := Resolve(env, st, map[string]string{"instances": "1"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range p.Jobs {
		if p.Jobs[i].VI == 1 {
			p.Jobs[i].Path = &netpath.Path{Host: "c1"}
		}
	}
	f := &fakeRunner{fakeEnv: env, skipPath: "making network namespaces needs root"}
	p.Env = f
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	last := f.written[len(f.written)-1]
	if len(last.Unavailable) != 1 || last.Unavailable[0].Reason != "making network namespaces needs root" || len(f.torn) != 0 {
		t.Errorf("unavailable %+v, torn %v", last.Unavailable, f.torn)
	}
}

// TestRunFailedVariantDoesNotStopTheOthers: a variant's failure fails the
// step, after the others ran; a StopStep ends it at once.
func TestRunFailedVariantDoesNotStopTheOthers(t *testing.T) {
	env, st := newCompare(t)
	p, err := Resolve(env, st, map[string]string{"instances": "1"})
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	f := &fakeRunner{fakeEnv: env, fail: map[string]error{"rdma, instances=1": boom}}
	p.Env = f
	if err := p.Run(context.Background()); !errors.Is(err, boom) || len(f.measured) != 6 {
		t.Errorf("run: %v after %v; want boom after every job", err, f.measured)
	}
	f = &fakeRunner{fakeEnv: env, fail: map[string]error{"rdma, instances=1": StopStep{Err: boom}}}
	p.Env = f
	if err := p.Run(context.Background()); !errors.Is(err, boom) || len(f.measured) != 2 || len(f.written) != 0 {
		t.Errorf("stopped: %v after %v (%d writes); want boom after 2 jobs", err, f.measured, len(f.written))
	}
}
