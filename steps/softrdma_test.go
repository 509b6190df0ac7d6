//go:build unix

package steps

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/results"
)

// fakeSysfs makes a sysfs tree under a temporary directory whose
// class/infiniband holds each device as the kernel links it: a software
// one (rxe, siw) to devices/virtual/infiniband/NAME, a hardware one to its
// PCI device's infiniband/NAME.
func fakeSysfs(t *testing.T, devs map[string]bool) string {
	t.Helper()
	root := t.TempDir()
	class := filepath.Join(root, "class", "infiniband")
	if err := os.MkdirAll(class, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, software := range devs {
		dir := filepath.Join("devices", "pci0000:00", "0000:00:03.0", "infiniband", name)
		if software {
			dir = filepath.Join("devices", "virtual", "infiniband", name)
		}
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join("..", "..", dir), filepath.Join(class, name)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestRDMADevicesScript runs the probe in the shells lab hosts use
// against made-up sysfs trees: software devices are told from hardware
// ones by where their node resolves, not by their names.
func TestRDMADevicesScript(t *testing.T) {
	for _, tc := range []struct {
		name string
		devs map[string]bool
		want []rdmaDevice
	}{
		{"soft-roce", map[string]bool{"rxe0": true, "rxe1": true}, []rdmaDevice{{"rxe0", true}, {"rxe1", true}}},
		{"connectx", map[string]bool{"mlx5_0": false}, []rdmaDevice{{"mlx5_0", false}}},
		// Names are the person's choice: a software device called like a
		// NIC is still software, and the reverse.
		{"misleading names", map[string]bool{"mlx5_9": true, "rxe0": false}, []rdmaDevice{{"mlx5_9", true}, {"rxe0", false}}},
		{"siw beside a NIC", map[string]bool{"siw0": true, "mlx5_0": false}, []rdmaDevice{{"mlx5_0", false}, {"siw0", true}}},
		{"none", map[string]bool{}, nil},
	} {
		root := fakeSysfs(t, tc.devs)
		for _, sh := range []string{"sh", "bash", "dash"} {
			if _, err := exec.LookPath(sh); err != nil {
				continue
			}
			t.Run(tc.name+"/"+sh, func(t *testing.T) {
				var out, errOut bytes.Buffer
				cmd := exec.Command(sh, "-c", rdmaDevicesScript(root))
				cmd.Stdout, cmd.Stderr = &out, &errOut
				if err := cmd.Run(); err != nil {
					t.Fatalf("%v: %s", err, errOut.String())
				}
				got := parseRDMADevices(strings.Split(out.String(), "\n"))
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("got %v, want %v (output %q)", got, tc.want, out.String())
				}
			})
		}
	}
	// A host without any RDMA (no class/infiniband at all) lists nothing
	// and succeeds.
	out, err := exec.Command("sh", "-c", rdmaDevicesScript(t.TempDir())).Output()
	if err != nil || len(out) != 0 {
		t.Errorf("no RDMA at all: %q, %v", out, err)
	}
}

func TestSoftwareRDMAText(t *testing.T) {
	devs := map[string][]rdmaDevice{
		"server": {{"rxe0", true}},
		"client": {{"rxe1", true}},
		"mixed":  {{"mlx5_0", false}, {"rxe0", true}, {"rxe1", true}},
		"hw":     {{"mlx5_0", false}},
	}
	for _, tc := range []struct {
		hosts []string
		want  string
	}{
		{[]string{"server", "client"}, "rxe0 on server, rxe1 on client"},
		{[]string{"hw"}, ""},
		{[]string{"hw", "client"}, "rxe1 on client"},
		{[]string{"mixed"}, "rxe0 and rxe1 on mixed (beside hardware mlx5_0)"},
		{nil, ""},
	} {
		if got := softwareRDMAText(tc.hosts, devs); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.hosts, got, tc.want)
		}
	}
}

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
				SysfsRoot: fakeSysfs(t, tc.devs),
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
			line := e.labelled(benchJob{}, "RDMA RC run 1/5: 12,000 ops/s")
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
