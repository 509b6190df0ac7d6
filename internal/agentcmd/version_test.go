package agentcmd

import (
	"runtime"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/server/rdma"
	"github.com/dpulab/dpulab/server/transport"
)

// TestVersionNamesRDMAProvider: `version` lists rdma as this build has it:
// over the rdma-core provider (every linux/amd64 and arm64 build), with
// what this host lacks for it; as the simulation in a rdmasim build, never
// naming rdma-core there; not at all in a build without it (-tags nordma,
// other platforms).
func TestVersionNamesRDMAProvider(t *testing.T) {
	v := VersionString("dpulab", "test")
	t.Log(v)
	if !strings.Contains(v, runtime.GOOS+"/"+runtime.GOARCH) || !strings.Contains(v, "transports: ") || !strings.Contains(v, "tcp") {
		t.Fatalf("version line: %q", v)
	}
	switch {
	case transport.Available(transport.RDMA) != nil:
		if strings.Contains(v, "rdma") {
			t.Errorf("a build without rdma lists it: %q", v)
		}
	case transport.Simulated(transport.RDMA) != "":
		if !strings.Contains(v, "rdma (simulated)") || strings.Contains(v, "rdma-core") {
			t.Errorf("a rdmasim build: %q, want rdma (simulated) and no rdma-core", v)
		}
	default:
		name, err := rdma.Provider()
		if name != "rdma-core (pure Go)" {
			t.Errorf("rdma.Provider() = %q", name)
		}
		want := "rdma (" + name
		if err != nil {
			want += "; not usable on this host: " + err.Error()
		}
		if !strings.Contains(v, want+")") {
			t.Errorf("version line %q lacks %q)", v, want)
		}
	}
}
