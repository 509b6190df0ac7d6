package load

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/runner/netpath"
	"github.com/dpulab/dpulab/steps/kind"
)

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
	f := newFakeRunner(t, env)
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
	f := newFakeRunner(t, env)
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
	f = newFakeRunner(t, env)
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
	f := newFakeRunner(t, env)
	f.runs["tcp, instances=1"], f.block, f.started = []float64{1}, p.Jobs[1].Label, make(chan struct{})
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
	f := newFakeRunner(t, env)
	f.skipPath = "making network namespaces needs root"
	p.Env = f
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	last := f.written[len(f.written)-1]
	if len(last.Unavailable) != 1 || last.Unavailable[0].Reason != "making network namespaces needs root" || len(f.torn) != 0 {
		t.Errorf("unavailable %+v, torn %v", last.Unavailable, f.torn)
	}
}

// TestRunFailedVariantDoesNotStopTheOthers: a variant's failure (its
// bench exits non-zero) fails the step, after the others ran; a
// deployment that fails ends it at once (StopStep), with no final write.
func TestRunFailedVariantDoesNotStopTheOthers(t *testing.T) {
	env, st := newCompare(t)
	p, err := Resolve(env, st, map[string]string{"instances": "1"})
	if err != nil {
		t.Fatal(err)
	}
	f := newFakeRunner(t, env)
	for _, j := range p.Jobs {
		f.runs[j.Label] = []float64{1000}
	}
	f.benchExit = map[string]int{"rdma, instances=1": 3}
	p.Env = f
	if err := p.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "bench rdma, instances=1: exit status 3") || len(f.measured) != 6 {
		t.Errorf("run: %v after %v; want rdma's exit status 3 after every job", err, f.measured)
	}
	boom := errors.New("boom")
	f = newFakeRunner(t, env)
	f.runs["tcp, instances=1"] = []float64{1000}
	f.deployErr = map[string]error{"rdma, instances=1": boom}
	p.Env = f
	if err := p.Run(context.Background()); !errors.Is(err, boom) || len(f.measured) != 2 || len(f.written) != 1 {
		t.Errorf("stopped: %v after %v (%d writes); want boom after 2 jobs, the first job's repetition written", err, f.measured, len(f.written))
	}
}
