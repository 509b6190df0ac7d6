package load

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/runner/vsphere"
	"github.com/dpulab/dpulab/steps/event"
	"github.com/dpulab/dpulab/steps/results"
)

// runCompare resolves the compare lab's step at one sweep value
// (instances=1: two jobs, tcp then rdma) and runs it through f.
func runCompare(t *testing.T, f *fakeRunner, env fakeEnv) error {
	t.Helper()
	st := env.Step(t, "compare")
	p, err := Resolve(env, st, map[string]string{"instances": "1"})
	if err != nil {
		t.Fatal(err)
	}
	p.Jobs = p.Jobs[:2]
	if p.Jobs[1].Label != "rdma, instances=1" {
		t.Fatalf("%d jobs, want tcp and rdma at instances=1", len(p.Jobs))
	}
	p.Env = f
	return p.Run(context.Background())
}

// commands are the commands host ran.
func commands(env fakeEnv, host string) []string {
	var out []string
	for _, c := range env.Target(host).Commands() {
		out = append(out, c.Cmd)
	}
	return out
}

// TestMeasureOneJob: a job is measured through the environment alone:
// its deployment asked for (its instances are the bench's targets), the
// server host's sampler started around the bench, the bench's stream of
// repetitions merged into runs, the progress shown, each repetition's
// line said, and the compare written after every repetition with the
// variant's settings and server hosts; the run's last write has both
// variants and their deltas.
func TestMeasureOneJob(t *testing.T) {
	env, _ := newCompare(t)
	f := newFakeRunner(t, env)
	f.runs["tcp, instances=1"] = []float64{1000, 1200, 1100}
	f.runs["rdma, instances=1"] = []float64{2000, 2200, 2100}
	if err := runCompare(t, f, env); err != nil {
		t.Fatal(err)
	}
	if len(f.measured) != 2 || f.measured[0] != "tcp, instances=1" || len(f.deployed) != 2 || f.deployed[0].Address != "192.0.2.20:7000" {
		t.Fatalf("deployments asked %v, instances %+v", f.measured, f.deployed)
	}
	s1, c1 := commands(env, "s1"), commands(env, "c1")
	sampled := 0
	for _, c := range s1 {
		if strings.Contains(c, "/opt/dpulab-on-s1 sample ") {
			sampled++
		}
	}
	benches := 0
	for _, c := range c1 {
		if strings.HasPrefix(c, "exec /opt/dpulab-on-c1 bench --json --target 192.0.2.20:7000 ") || strings.HasPrefix(c, "exec /opt/dpulab-on-c1 bench --json --target rdma://192.0.2.20:7000 ") {
			benches++
		}
	}
	if sampled != 2 || benches != 2 {
		t.Errorf("s1 sampled %d times, c1 ran %d benches; want one of each per job:\n%q\n%q", sampled, benches, s1, c1)
	}
	if len(f.written) != 3+3+1 {
		t.Fatalf("%d writes, want one per repetition (6) and the last", len(f.written))
	}
	last := f.written[len(f.written)-1]
	tcp, rdma := last.Variants[0], last.Variants[1]
	if len(tcp.Points) != 1 || len(tcp.Points[0].Runs) != 3 || tcp.Points[0].Stats.OpsPerSec.Mean != 1100 || tcp.Points[0].Runs[1].OpsPerSec != 1200 {
		t.Fatalf("tcp's point %+v, want its 3 repetitions", tcp.Points)
	}
	if tcp.Settings["transport"] != "tcp" || tcp.Settings["instances"] != "1" || tcp.Settings["server"] != "dpulab" || len(tcp.Hosts) != 1 || tcp.Hosts[0] != "s1" {
		t.Errorf("tcp's settings %v, hosts %v", tcp.Settings, tcp.Hosts)
	}
	if d, ok := rdma.Points[0].DeltaPct[results.MetricOps]; rdma.Points[0].Stats.OpsPerSec.Mean != 2100 || !ok || d < 90 || d > 91 {
		t.Errorf("rdma's point %+v, want its mean and its delta against tcp", rdma.Points[0])
	}
	var progress, samples int
	for _, ev := range env.Events() {
		switch ev := ev.(type) {
		case event.Progress:
			progress++
			if ev.Step != "compare" || ev.Fraction <= 0 || ev.Fraction > 1 || !strings.Contains(ev.Label, "instances=1, run ") {
				t.Errorf("progress %+v", ev)
			}
		case event.Sample:
			samples++
		}
	}
	if progress != 6 || samples != 6 {
		t.Errorf("%d progress events, %d samples; want one of each per second (6)", progress, samples)
	}
	said := 0
	for _, l := range env.Lines() {
		if strings.HasPrefix(l.Text, "tcp, instances=1 run ") && strings.Contains(l.Text, " ops/s, avg 0.300 ms, p99 0.400 ms") {
			said++
		}
	}
	if said != 3 {
		t.Errorf("said %d of tcp's repetitions, want 3: %+v", said, env.Lines())
	}
}

// TestMeasureHostLacksTransportNow: a host whose agent, once reached,
// turns out to lack the variant's transport fails that variant, named,
// before any bench of it; the other variant is measured and written.
func TestMeasureHostLacksTransportNow(t *testing.T) {
	env, _ := newCompare(t)
	f := newFakeRunner(t, env)
	f.lacksNow = map[string]string{"rdma": "the linux/riscv64 agent has no RDMA"}
	err := runCompare(t, f, env)
	if err == nil || err.Error() != "variant rdma: s1: the linux/riscv64 agent has no RDMA" {
		t.Fatalf("run: %v, want rdma's variant failed naming s1", err)
	}
	benches := 0
	for _, c := range commands(env, "c1") {
		if strings.Contains(c, " bench --json ") {
			benches++
		}
	}
	last := f.written[len(f.written)-1]
	if benches != 1 || len(last.Variants[0].Points) != 1 || len(last.Variants[1].Points) != 0 {
		t.Errorf("%d benches, written %+v; want tcp's alone", benches, last.Variants)
	}
	if len(f.noted) != 0 {
		t.Errorf("RDMA devices listed for a variant that did not run: %v", f.noted)
	}
}

// TestMeasureSoftwareRDMA: before an RDMA variant's first figure the
// client and server hosts' RDMA devices are asked for (not for TCP);
// once software RDMA is found every line, second and progress event of
// the run carries its label.
func TestMeasureSoftwareRDMA(t *testing.T) {
	env, _ := newCompare(t)
	f := newFakeRunner(t, env)
	f.soft = "rxe0 on s1"
	if err := runCompare(t, f, env); err != nil {
		t.Fatal(err)
	}
	if len(f.noted) != 1 || strings.Join(f.noted[0], ",") != "c1,s1" {
		t.Errorf("RDMA devices asked of %v, want c1 and s1 once (the rdma variant)", f.noted)
	}
	var tagged, plain int
	for _, l := range env.Lines() {
		if strings.Contains(l.Text, " run 1/3: ") {
			switch {
			case strings.HasPrefix(l.Text, "[SOFTWARE RDMA] rdma, instances=1 run 1/3: "):
				tagged++
			case strings.HasPrefix(l.Text, "tcp, instances=1 run 1/3: "):
				plain++
			}
		}
	}
	if tagged != 1 || plain != 1 {
		t.Errorf("%d labelled rdma lines, %d plain tcp lines (tcp ran before software RDMA was found); want 1 and 1: %+v", tagged, plain, env.Lines())
	}
	for _, ev := range env.Events() {
		if s, ok := ev.(event.Sample); ok && s.Variant == "rdma" && s.Figures.SoftwareRDMA != "rxe0 on s1" {
			t.Errorf("rdma's second %+v is not labelled software RDMA", s)
		}
		if p, ok := ev.(event.Progress); ok && strings.HasPrefix(p.Label, "rdma") {
			t.Errorf("progress %q lacks the software RDMA label", p.Label)
		}
	}
}

// TestMeasureHostMetricsJoined: the ESXi hosts' points (VSphere's
// source) are joined to each second of each run, by the second it mostly
// lies in, before the run is written.
func TestMeasureHostMetricsJoined(t *testing.T) {
	env, _ := newCompare(t)
	f := newFakeRunner(t, env)
	f.runs["tcp, instances=1"] = []float64{2e6}
	f.runs["rdma, instances=1"] = []float64{2e6}
	pct := func(v float64) *float64 { return &v }
	f.hostMetrics = &HostMetrics{Hosts: []string{"esx1"}, Tail: time.Minute, Sample: func(_ context.Context, put func(vsphere.Point), _ func(string)) error {
		now := time.Now().Truncate(time.Second)
		for d := -30; d <= 30; d++ {
			put(vsphere.Point{Host: "esx1", T: now.Add(time.Duration(d) * time.Second), CPUUsagePct: pct(40), CPUUsedCores: pct(6)})
		}
		return nil
	}}
	if err := runCompare(t, f, env); err != nil {
		t.Fatal(err)
	}
	last := f.written[len(f.written)-1]
	for _, v := range last.Variants {
		r := v.Points[0].Runs[0]
		if len(r.Series) != 1 || r.Series[0].Metrics[results.MetricESXiCPU] != 40 || r.Series[0].Metrics[results.MetricESXiCoresPerMOps] != 3 {
			t.Errorf("%s's run %+v: want its second joined with esx1's CPU (40%%, 6 cores at 2M ops/s)", v.Label, r.Series)
		}
	}
}
