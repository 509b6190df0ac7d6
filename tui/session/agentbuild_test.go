package session_test

import (
	"strings"
	"testing"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/server/transport"
	"github.com/dpulab/dpulab/tui/session"
)

// TestRDMAOnSSHHostsIsNotThisBuilds: with every role on SSH hosts the
// steps run in the hosts' Linux agents, which have RDMA, so the RDMA lab
// is neither marked nor listed as unable to run, whatever this controller
// was built for or with (go test -tags nordma runs it as a controller
// without RDMA, as a macOS or Windows one is). With a host on this
// machine, this build's lack shows again.
func TestRDMAOnSSHHostsIsNotThisBuilds(t *testing.T) {
	inv, err := runner.ParseInventory("hosts.yaml", []byte("hosts:\n  - name: srv\n    address: 10.0.0.5\n    roles: [server, client]\n"))
	if err != nil {
		t.Fatal(err)
	}
	ls, err := (&session.EngineCatalog{StateDir: t.TempDir(), Inventory: inv}).Labs()
	if err != nil {
		t.Fatal(err)
	}
	r := lab(t, ls, "redis-rdma-rc-uc")
	if len(r.CannotRun) != 0 || len(r.CannotRunSteps) != 0 {
		t.Errorf("on SSH hosts: CannotRun %q, CannotRunSteps %q, want none", r.CannotRun, r.CannotRunSteps)
	}
	if transport.Available(transport.RDMA) == nil {
		return // this build has RDMA: nothing more to show
	}
	inv, err = runner.ParseInventory("hosts.yaml", []byte("hosts:\n  - name: here\n    address: local\n    roles: [server, client]\n"))
	if err != nil {
		t.Fatal(err)
	}
	ls, err = (&session.EngineCatalog{StateDir: t.TempDir(), Inventory: inv}).Labs()
	if err != nil {
		t.Fatal(err)
	}
	r = lab(t, ls, "redis-rdma-rc-uc")
	if len(r.CannotRun) != 1 || !strings.Contains(r.CannotRun[0], "RDMA is not in this build") || r.CannotRunSteps["sizes"] != "transport rdma is not in this build" {
		t.Errorf("on this machine, in a build without RDMA: CannotRun %q, CannotRunSteps %q", r.CannotRun, r.CannotRunSteps)
	}
}
