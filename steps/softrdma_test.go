//go:build unix

package steps

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/kinds/load"
	"github.com/dpulab/dpulab/steps/kinds/load/loadtest"
	"github.com/dpulab/dpulab/steps/results"
)

// TestSoftwareRDMAIsFoundAndLabelled: the engine probes the hosts of an
// RDMA bench once, labels the run's results, tells the views once, writes
// results.json with it, and puts the label on every bench line the
// headless output prints; a host with only hardware leaves the run as it
// was.
func TestSoftwareRDMAIsFoundAndLabelled(t *testing.T) {
	local := runner.NewLocal()
	probes := 0
	counting := countingTarget{Target: local, n: &probes}
	for _, tc := range []struct {
		name string
		devs map[string]bool
		want string
	}{
		{"soft-roce", map[string]bool{"rxe0": true}, "rxe0 on local"},
		{"hardware", map[string]bool{"mlx5_0": false}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			probes = 0
			rec := &recorder{}
			e := newEngine(t, loadLab(t, fakeRunLab), Options{
				SysfsRoot: loadtest.FakeSysfs(t, tc.devs),
				Targets:   func(string) (runner.Target, error) { return counting, nil },
			}, rec)
			ctx := testCtx(t, 30*time.Second)
			h := hostRef{Name: "local", Local: true}
			e.noteSoftwareRDMA(ctx, "sizes", []hostRef{h, h})
			e.noteSoftwareRDMA(ctx, "connections", []hostRef{h})
			if probes != 1 {
				t.Errorf("%d probes of one host, want 1 (once per run)", probes)
			}
			if got := e.SoftwareRDMA(); got != tc.want {
				t.Fatalf("SoftwareRDMA() = %q, want %q", got, tc.want)
			}
			var found []SoftwareRDMAFound
			for _, ev := range rec.events() {
				if f, ok := ev.(SoftwareRDMAFound); ok {
					found = append(found, f)
				}
			}
			line := load.Labelled(kindEnv{e}, load.BenchJob{}, "RDMA RC run 1/5: 12,000 ops/s")
			if tc.want == "" {
				if len(found) != 0 || line != "RDMA RC run 1/5: 12,000 ops/s" {
					t.Errorf("a hardware run is labelled: %v, %q", found, line)
				}
				return
			}
			if len(found) != 1 || found[0].Devices != tc.want || found[0].Step != "sizes" {
				t.Errorf("events %v, want one SoftwareRDMAFound for step sizes", found)
			}
			if line != "[SOFTWARE RDMA] RDMA RC run 1/5: 12,000 ops/s" {
				t.Errorf("bench line %q", line)
			}
			r := writeAndLoadResults(t, e)
			if r.SoftwareRDMA != tc.want || !strings.HasPrefix(results.RunKind(r), "SOFTWARE RDMA (Soft-RoCE): rxe0 on local") || r.Measured() {
				t.Errorf("results.json: software_rdma %q, kind %q", r.SoftwareRDMA, results.RunKind(r))
			}

			// The headless output says it when found and in the summary.
			var b bytes.Buffer
			p := NewPrinter(&b)
			p.Print(found[0])
			p.Print(LabFinished{Lab: "x", Status: results.Done, SoftwareRDMA: e.SoftwareRDMA()})
			if n := strings.Count(b.String(), "SOFTWARE RDMA (Soft-RoCE): rxe0 on local; the kernel's RDMA stack on the CPU, not RDMA hardware"); n != 2 {
				t.Errorf("headless output says the label %d times, want 2:\n%s", n, b.String())
			}
			if js, err := EventJSON(found[0]); err != nil || !strings.Contains(string(js), `{"type":"software_rdma","step":"sizes","devices":"rxe0 on local"}`) {
				t.Errorf("JSON %s, %v", js, err)
			}
		})
	}
}

// countingTarget counts the probes run through it.
type countingTarget struct {
	runner.Target
	n *int
}

func (c countingTarget) Run(ctx context.Context, cmd runner.Command) (runner.Result, error) {
	if strings.Contains(cmd.Cmd, "class/infiniband") {
		*c.n++
	}
	return c.Target.Run(ctx, cmd)
}
