package steps

import (
	"strings"
	"testing"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
)

// TestRehearsalHere: the picker's question gets the engine's answer. With
// every role on this machine, the DPU lab (baseline and accelerated on
// different roles) is a rehearsal and the quickstart is not; an inventory
// that gives those roles their own hosts makes it a measurement again;
// --rehearse makes any lab one.
func TestRehearsalHere(t *testing.T) {
	dpu, err := labs.Find("redis-dpu-uptv2")
	if err != nil {
		t.Fatal(err)
	}
	quick, err := labs.Find("quickstart")
	if err != nil {
		t.Fatal(err)
	}
	if why := RehearsalHere(dpu, nil, false); !strings.Contains(why, "run on the same host") {
		t.Errorf("the DPU lab on this machine alone: %q, want a rehearsal for its shared host", why)
	}
	if why := RehearsalHere(quick, nil, false); why != "" {
		t.Errorf("quickstart on this machine: %q, want no rehearsal", why)
	}
	if why := RehearsalHere(quick, nil, true); !strings.Contains(why, "--rehearse") {
		t.Errorf("quickstart with --rehearse: %q", why)
	}
	inv := &runner.Inventory{Hosts: []runner.Host{
		{Name: "c", Address: "10.0.0.1", Roles: []string{"client"}},
		{Name: "b", Address: "10.0.0.2", Roles: []string{"baseline"}},
		{Name: "o", Address: "10.0.0.4", Roles: []string{"offload"}},
		{Name: "a", Address: "10.0.0.3", Roles: []string{"accelerated"}},
	}}
	if why := RehearsalHere(dpu, inv, false); why != "" {
		t.Errorf("the DPU lab with a host per role: %q, want no rehearsal", why)
	}
}
