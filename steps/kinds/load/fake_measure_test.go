package load

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/runner/netpath"
	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/kinds/deploy"
	"github.com/dpulab/dpulab/steps/kinds/load/loadtest"
	"github.com/dpulab/dpulab/steps/results"
)

// fakeRunner is a load.Runner without an engine: fakeEnv's plan and
// kindtest's targets, whose Handle answers each bench command with the
// bench lines of the job being measured; deployments as deploy plans
// them, recorded, not started; paths recorded, not made; the results
// written to a list.
type fakeRunner struct {
	fakeEnv
	t *testing.T

	mu sync.Mutex
	// runs is each job's repetitions' ops/s, by job label: the lines its
	// bench prints (one repetition of 1000 ops/s for a job not named).
	runs map[string][]float64
	// benchExit makes a job's bench exit with that status, by label,
	// after its lines.
	benchExit map[string]int
	// deployErr makes a job's deployment fail, by label.
	deployErr map[string]error
	// block makes a job's deployment wait for its context, by label;
	// started is closed when it begins.
	block   string
	started chan struct{}
	// skipPath is StartPath's skip reason ("" makes the path).
	skipPath string
	// lacksNow maps a transport to why a host's agent lacks it once the
	// host is reached.
	lacksNow map[string]string
	// soft is the software RDMA NoteSoftwareRDMA finds ("" for none).
	soft string
	// hostMetrics is VSphere's answer for every job (nil: no vCenter).
	hostMetrics *HostMetrics
	// capacity answers a `bench --capacity` command (nil: exit 1).
	capacity func(host, cmd string) []string

	current   string // the job being measured (its label)
	measured  []string
	deployed  []deploy.Instance
	noted     [][]string
	softFound string
	emulated  []string
	written   []results.Compare
	made      []string
	torn      []string
}

var _ Runner = (*fakeRunner)(nil)

func newFakeRunner(t *testing.T, env fakeEnv) *fakeRunner {
	f := &fakeRunner{fakeEnv: env, t: t, runs: map[string][]float64{}}
	env.Handle = f.handle
	return f
}

// handle answers the hosts' commands: a bench prints the current job's
// runs; every other command (the samplers, getconf) prints nothing.
func (f *fakeRunner) handle(host, cmd string) ([]string, int) {
	f.mu.Lock()
	label, capacity := f.current, f.capacity
	ops, ok := f.runs[label]
	if !ok {
		ops = []float64{1000}
	}
	code := f.benchExit[label]
	f.mu.Unlock()
	switch {
	case strings.Contains(cmd, " bench --json") && strings.Contains(cmd, "--capacity"):
		if capacity == nil {
			return nil, 1
		}
		return capacity(host, cmd), 0
	case strings.Contains(cmd, " bench --json"):
		return benchLines(f.t, ops), code
	}
	return nil, 0
}

// benchLines is what `dpulab bench --json` prints for repetitions of
// ops/s each (one second each).
func benchLines(t *testing.T, ops []float64) []string {
	t.Helper()
	_, hdr := loadtest.Hist(t, 200, 300, 400)
	lat := benchwire.Latency{Avg: 0.3, P50: 0.3, P99: 0.4}
	var b bytes.Buffer
	enc := func(ev benchwire.Event) {
		if err := benchwire.Encode(&b, ev); err != nil {
			t.Fatal(err)
		}
	}
	enc(benchwire.StreamHeader())
	for i, o := range ops {
		enc(&benchwire.Sample{Run: i + 1, T: 1, OpsPerSec: o, LatencyHDR: hdr, LatencyMs: lat})
		enc(&benchwire.RunResult{Run: i + 1, Totals: benchwire.Totals{Seconds: 1, Ops: int64(o), OpsPerSec: o, LatencyMs: lat, LatencyHDR: hdr}})
	}
	enc(&benchwire.Summary{Runs: len(ops)})
	return strings.Split(strings.TrimSpace(b.String()), "\n")
}

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

// Deployment is the group as deploy plans it under vars; the job it is
// for is named as the plan names it (variant, sweep variable's value).
func (f *fakeRunner) Deployment(ctx context.Context, step, group string, vars map[string]string, v *labs.Variant) (Deployed, error) {
	label := v.Label + ", instances=" + vars["instances"]
	f.mu.Lock()
	f.current = label
	f.measured = append(f.measured, label)
	block, err := f.block, f.deployErr[label]
	f.mu.Unlock()
	if label == block {
		close(f.started)
		<-ctx.Done()
		return Deployed{}, ctx.Err()
	}
	if err != nil {
		return Deployed{}, err
	}
	st, err := f.DeployStep(group)
	if err != nil {
		return Deployed{}, err
	}
	p, err := f.DeployPlan(st, vars, v)
	if err != nil {
		return Deployed{}, err
	}
	insts := p.ClientSide(f.Workdir())
	f.mu.Lock()
	f.deployed = append(f.deployed, insts...)
	f.mu.Unlock()
	return Deployed{Instances: insts, Server: "dpulab"}, nil
}

func (f *fakeRunner) Instances() []deploy.Instance {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]deploy.Instance(nil), f.deployed...)
}

func (f *fakeRunner) LacksNow(_ context.Context, hosts []kind.Host, tr string) (string, error) {
	if why := f.lacksNow[tr]; why != "" && len(hosts) > 0 {
		return hosts[len(hosts)-1].Name + ": " + why, nil
	}
	return "", nil
}

func (f *fakeRunner) NoteSoftwareRDMA(_ context.Context, step string, hosts []kind.Host) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.noted = append(f.noted, HostNames(hosts))
	f.softFound = f.soft
}

func (f *fakeRunner) SoftwareRDMA() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.softFound
}

func (f *fakeRunner) VSphere(context.Context, string, []kind.Host) (*HostMetrics, error) {
	return f.hostMetrics, nil
}

func (f *fakeRunner) Emulated(note string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.emulated = append(f.emulated, note)
}

func (f *fakeRunner) PutCompare(c results.Compare) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.written = append(f.written, MeasuredOnly(c))
	return nil
}
