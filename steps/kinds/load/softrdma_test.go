//go:build unix

package load

import (
	"bytes"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/steps/kinds/load/loadtest"
)

// TestRDMADevicesScript runs the probe in the shells lab hosts use
// against made-up sysfs trees: software devices are told from hardware
// ones by where their node resolves, not by their names.
func TestRDMADevicesScript(t *testing.T) {
	for _, tc := range []struct {
		name string
		devs map[string]bool
		want []RDMADevice
	}{
		{"soft-roce", map[string]bool{"rxe0": true, "rxe1": true}, []RDMADevice{{"rxe0", true}, {"rxe1", true}}},
		{"connectx", map[string]bool{"mlx5_0": false}, []RDMADevice{{"mlx5_0", false}}},
		// Names are the person's choice: a software device called like a
		// NIC is still software, and the reverse.
		{"misleading names", map[string]bool{"mlx5_9": true, "rxe0": false}, []RDMADevice{{"mlx5_9", true}, {"rxe0", false}}},
		{"siw beside a NIC", map[string]bool{"siw0": true, "mlx5_0": false}, []RDMADevice{{"mlx5_0", false}, {"siw0", true}}},
		{"none", map[string]bool{}, nil},
	} {
		root := loadtest.FakeSysfs(t, tc.devs)
		for _, sh := range []string{"sh", "bash", "dash"} {
			if _, err := exec.LookPath(sh); err != nil {
				continue
			}
			t.Run(tc.name+"/"+sh, func(t *testing.T) {
				var out, errOut bytes.Buffer
				cmd := exec.Command(sh, "-c", RDMADevicesScript(root))
				cmd.Stdout, cmd.Stderr = &out, &errOut
				if err := cmd.Run(); err != nil {
					t.Fatalf("%v: %s", err, errOut.String())
				}
				got := ParseRDMADevices(strings.Split(out.String(), "\n"))
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("got %v, want %v (output %q)", got, tc.want, out.String())
				}
			})
		}
	}
	// A host without any RDMA (no class/infiniband at all) lists nothing
	// and succeeds.
	out, err := exec.Command("sh", "-c", RDMADevicesScript(t.TempDir())).Output()
	if err != nil || len(out) != 0 {
		t.Errorf("no RDMA at all: %q, %v", out, err)
	}
}

func TestSoftwareRDMAText(t *testing.T) {
	devs := map[string][]RDMADevice{
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
		if got := SoftwareRDMAText(tc.hosts, devs); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.hosts, got, tc.want)
		}
	}
}
